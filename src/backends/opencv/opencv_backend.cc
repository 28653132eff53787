/// \file opencv_backend.cc
/// The opencv backend and its registration (see opencv_backend.h).

#include "backends/opencv/opencv_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backends/opencv/opencv_dnn.h"
#include "backends/opencv/opencv_probe.h"
#include "ir/onnx_export.h"

namespace edgemm::backends::opencv {
namespace {

bool verbose() {
  const char* env = std::getenv("EDGEMM_VERBOSE");
  return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
}

/// "partition of nodes 'conv_1', 'relu_1', 'add_1'" (at most 5 names, then "and 4 more").
std::string describe_partition(const ir::Graph& graph) {
  std::string names;
  for (size_t i = 0; i < graph.nodes.size() && i < 5; ++i) names += (i ? ", '" : "'") + graph.nodes[i].name + "'";
  if (graph.nodes.size() > 5) names += " and " + std::to_string(graph.nodes.size() - 5) + " more";
  return "partition of nodes " + names;
}

/// Names and static shapes of a partition's graph inputs or outputs. Errors: kUnsupported for a
/// value without a static shape (capability refuses those nodes, so this means a bug).
Expected<std::vector<NamedShape>> named_shapes(const std::vector<ValueInfo>& values) {
  std::vector<NamedShape> shapes;
  for (const ValueInfo& v : values) {
    const bool all_static =
        v.rank_known && std::all_of(v.shape.begin(), v.shape.end(), [](const Dim& d) { return d.is_static(); });
    if (!all_static) return make_error(StatusCode::kUnsupported, "value '" + v.name + "' has no static shape");
    NamedShape named{v.name, {}};
    for (const Dim& d : v.shape) named.shape.push_back(d.value);
    shapes.push_back(std::move(named));
  }
  return shapes;
}

/// A compiled partition: one cv::dnn::Net, one forward at a time.
class OpenCvPartition final : public CompiledPartition {
 public:
  OpenCvPartition(DnnNet net, int threads) : net_(std::move(net)), threads_(threads) {}

  /// Thread-safe: cv::dnn::Net keeps its blobs inside and is not, so runs of this partition
  /// are serialized by a mutex (runs of other partitions and of native nodes go on in parallel).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    use_threads(threads_);
    return net_.forward(inputs);
  }

 private:
  mutable std::mutex mutex_;
  mutable DnnNet net_;
  int threads_;
};

class OpenCvBackend final : public Backend {
 public:
  const std::string& name() const override { return name_; }
  const BackendConstraints& constraints() const override { return constraints_; }

  std::vector<NodeSupport> capability(const ir::Model& model) const override {
    ProbeStats stats;
    std::vector<NodeSupport> verdicts = probe_capability(model, &stats);
    if (verbose()) {
      std::fprintf(stderr,
                   "edgemm: opencv: capability of %d nodes in %.1f ms: %d probed, %d from the probe cache, %d "
                   "refused without a probe\n",
                   stats.nodes, stats.elapsed_ms, stats.probed, stats.cached, stats.prechecked);
    }
    return verdicts;
  }

  /// Exports the partition, reads it with OpenCV and runs it once on zeros (so that OpenCV's
  /// shape errors come now, not at the first run). Errors: kUnsupported naming the partition's
  /// nodes, with OpenCV's essential error line.
  Expected<std::unique_ptr<CompiledPartition>> compile(const ir::Model& partition,
                                                       const BackendOptions& options) const override {
    const std::string what = describe_partition(partition.graph);
    auto failed = [&](const Status& status) {
      return Status(StatusCode::kUnsupported, what + ": " + status.message());
    };
    auto inputs = named_shapes(partition.graph.inputs);
    if (!inputs) return failed(inputs.status());
    auto outputs = named_shapes(partition.graph.outputs);
    if (!outputs) return failed(outputs.status());
    auto onnx = ir::export_onnx_bytes(partition);
    if (!onnx) return failed(onnx.status());
    auto net = DnnNet::read(*onnx, std::move(inputs).value(), std::move(outputs).value(), true);
    if (!net) return failed(net.status());
    use_threads(options.threads);
    if (Status warm = net->forward_zeros(); !warm.is_ok()) return failed(warm);
    return std::unique_ptr<CompiledPartition>(
        std::make_unique<OpenCvPartition>(std::move(net).value(), options.threads));
  }

 private:
  std::string name_ = kOpenCvBackendName;
  BackendConstraints constraints_{{"cpu"}, {"fp32"}};
};

/// Makes "opencv" available to every program that links this object library.
[[maybe_unused]] const bool kRegistered = [] {
  register_backend(kOpenCvBackendName, make_opencv_backend);
  return true;
}();

}  // namespace

Expected<std::unique_ptr<Backend>> make_opencv_backend(const RuntimeOptions& config) {
  return std::unique_ptr<Backend>(std::make_unique<OpenCvBackend>());
}

}  // namespace edgemm::backends::opencv
