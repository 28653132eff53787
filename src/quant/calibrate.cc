/// \file calibrate.cc
/// Calibration runs (see calibrate.h): the model with extra graph outputs is written to a
/// temporary file, loaded once as an Inferencer, and run sample by sample.

#include "quant/calibrate.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <unordered_set>

#include "edgemm/inferencer.h"
#include "ir/onnx_export.h"

namespace edgemm::quant {

namespace fs = std::filesystem;

namespace {

// A temporary file removed when destroyed.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& suffix) {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("edgemm_calib_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + suffix);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// The names a graph defines (inputs, initializers, node outputs).
std::unordered_set<std::string> defined_values(const ir::Graph& graph) {
  std::unordered_set<std::string> names;
  for (const auto& v : graph.inputs) names.insert(v.name);
  for (const auto& [name, t] : graph.initializers) names.insert(name);
  for (const auto& n : graph.nodes) names.insert(n.outputs.begin(), n.outputs.end());
  return names;
}

// `model` with `values` appended to its graph outputs.
Expected<ir::Model> with_outputs(const ir::Model& model, const std::vector<std::string>& values) {
  ir::Model copy = model;
  const auto defined = defined_values(copy.graph);
  std::unordered_set<std::string> outputs;
  for (const auto& o : copy.graph.outputs) outputs.insert(o.name);
  for (const std::string& v : values) {
    if (defined.count(v) == 0) return make_error(StatusCode::kInvalidArgument, "value '" + v + "' is not in the graph");
    if (outputs.count(v) != 0) continue;
    ValueInfo info;
    auto known = copy.graph.value_infos.find(v);
    if (known != copy.graph.value_infos.end()) info = known->second;
    info.name = v;
    info.dtype = DataType::kFloat32;
    copy.graph.outputs.push_back(info);
  }
  return copy;
}

}  // namespace

Expected<std::unique_ptr<Inferencer>> make_inferencer(const ir::Model& model, int threads) {
  TempFile file(".onnx");
  EDGEMM_RETURN_IF_ERROR(ir::export_onnx_file(model, file.path.string()));
  InferencerConfig config;
  config.model_path = file.path.string();
  config.threads = threads;
  return Inferencer::create(config);
}

Expected<CalibrationResult> observe(const ir::Model& model, const std::vector<std::string>& values,
                                    const std::vector<CalibrationSample>& samples, const FeedSource& source,
                                    const CalibrateOptions& options, const ValueVisitor& visit) {
  const auto start = std::chrono::steady_clock::now();
  EDGEMM_ASSIGN_OR_RETURN(ir::Model observed, with_outputs(model, values));
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> inferencer, make_inferencer(observed, options.threads));
  CalibrationResult result;
  for (size_t s = 0; s < samples.size(); ++s) {
    Expected<std::vector<Feed>> feeds = source(samples[s]);
    // A sample the source cannot read is skipped; running out of memory stops the calibration.
    if (!feeds && feeds.status().code() == StatusCode::kOutOfMemory) return feeds.status();
    if (!feeds) {
      ++result.samples_skipped;
      if (result.skipped.size() < 10) result.skipped.push_back(samples[s].path + ": " + feeds.status().message());
    } else {
      for (const Feed& feed : *feeds) {
        EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, inferencer->run(feed, values));
        for (size_t i = 0; i < values.size(); ++i) {
          if (outputs[i].dtype() != DataType::kFloat32) {
            return make_error(StatusCode::kInvalidArgument,
                              "value '" + values[i] + "' is " + dtype_name(outputs[i].dtype()) + ", not float32");
          }
          visit(i, outputs[i]);
        }
        ++result.runs;
      }
      ++result.samples_used;
    }
    if (options.progress) options.progress(s + 1, samples.size());
  }
  if (result.samples_used == 0) {
    std::string reasons;
    for (const auto& r : result.skipped) reasons += "\n  " + r;
    return make_error(StatusCode::kInvalidArgument, "none of the " + std::to_string(samples.size()) +
                                                        " calibration samples could be used:" + reasons);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Expected<CalibrationResult> calibrate(const ir::Model& model, const std::vector<std::string>& values,
                                      const std::vector<CalibrationSample>& samples, const FeedSource& source,
                                      const CalibrateOptions& options) {
  std::vector<TensorHistogram> histograms(values.size(), TensorHistogram(options.bins));
  EDGEMM_ASSIGN_OR_RETURN(CalibrationResult result,
                          observe(model, values, samples, source, options, [&](size_t i, const Tensor& t) {
                            histograms[i].add(t.data<float>(), t.element_count());
                          }));
  for (size_t i = 0; i < values.size(); ++i) result.histograms.emplace(values[i], std::move(histograms[i]));
  return result;
}

}  // namespace edgemm::quant
