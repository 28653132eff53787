/// \file reference_plugin.cc
/// libedgemm_reference_plugin.so: the example vendor plugin (docs/plugins.md). It implements
/// edgemm/plugin_abi.h for a "device" that runs a few float32 ops, Add, Conv, Gemm, MatMul,
/// MaxPool, Mul and Relu, by handing each partition to edgemm's public Inferencer (linked
/// statically; only edgemm_plugin_get_api is exported, see plugins/plugin.map). It includes
/// nothing from edgemm's src/: the partition is read with libonnx, as a vendor plugin reads it.
/// Everything else it refuses with a reason, so edgemm runs it natively. A real plugin has the
/// same shape: parse the ONNX bytes, decide per node, hand each partition to the vendor's
/// compiler, run the compiled artefact.

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/plugin_abi.h"

/// A compiled partition: an Inferencer over the partition model.
struct EdgemmPluginPartition {
  std::unique_ptr<edgemm::Inferencer> model;
  std::vector<std::string> outputs;
};

namespace {

using edgemm::DataType;
using edgemm::Expected;
using edgemm::Status;
using edgemm::StatusCode;
using edgemm::Tensor;

const char* const kDevices[] = {"cpu"};
const char* const kPrecisions[] = {"fp32"};
/// The ops this "device" runs (default ONNX domain, float32).
const std::set<std::string> kOps = {"Add", "Conv", "Gemm", "MatMul", "MaxPool", "Mul", "Relu"};
constexpr const char* kOpList = "Add, Conv, Gemm, MatMul, MaxPool, Mul, Relu";

/// An output of a run: the tensor the Inferencer returned and the dims handed to the host.
struct OutputBox {
  Tensor tensor;
  std::vector<int64_t> dims;
};

/// Copies `text` into a host buffer of `capacity` bytes, truncated, NUL-terminated.
void write_text(char* buffer, size_t capacity, const std::string& text) {
  const size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

/// The ABI status for an edgemm status code.
int32_t plugin_status(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return EDGEMM_PLUGIN_OK;
    case StatusCode::kInvalidArgument:
      return EDGEMM_PLUGIN_INVALID_ARGUMENT;
    case StatusCode::kInvalidModel:
      return EDGEMM_PLUGIN_INVALID_MODEL;
    case StatusCode::kUnsupported:
      return EDGEMM_PLUGIN_UNSUPPORTED;
    case StatusCode::kOutOfMemory:
      return EDGEMM_PLUGIN_OUT_OF_MEMORY;
    case StatusCode::kIo:
      return EDGEMM_PLUGIN_IO;
    default:
      return EDGEMM_PLUGIN_INTERNAL;
  }
}

/// Reports `status` (an error) through the ABI.
int32_t fail(EdgemmPluginError* error, const Status& status) {
  write_text(error->message, sizeof error->message, status.message());
  return plugin_status(status.code());
}

/// Runs `body` (returning a Status), turning exceptions into errors: none may cross the ABI.
template <typename Body>
int32_t guarded(EdgemmPluginError* error, const Body& body) {
  try {
    const Status status = body();
    return status.is_ok() ? EDGEMM_PLUGIN_OK : fail(error, status);
  } catch (const std::bad_alloc&) {
    return fail(error, Status(StatusCode::kOutOfMemory, "reference plugin ran out of memory"));
  } catch (const std::exception& e) {
    return fail(error, Status(StatusCode::kInternal, std::string("reference plugin failed: ") + e.what()));
  }
}

/// A partition model as the plugin reads it: the ModelProto, with the dtype of every value it
/// names (ONNX shape inference fills in the intermediate ones).
struct Partition {
  onnx::ModelProto proto;
  std::map<std::string, DataType> dtypes;
};

/// Parses the partition in `bytes` and infers its value types. Errors: kInvalidModel.
Expected<Partition> parse(const void* bytes, size_t size) {
  Partition p;
  if (bytes == nullptr || size > static_cast<size_t>(INT_MAX) ||
      !p.proto.ParseFromArray(bytes, static_cast<int>(size))) {
    return Status(StatusCode::kInvalidModel, "reference plugin: the partition is not an ONNX ModelProto");
  }
  try {
    onnx::shape_inference::InferShapes(p.proto);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidModel, std::string("reference plugin: shape inference failed: ") + e.what());
  }
  const onnx::GraphProto& g = p.proto.graph();
  for (const onnx::TensorProto& t : g.initializer()) p.dtypes[t.name()] = static_cast<DataType>(t.data_type());
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      if (v.type().has_tensor_type()) p.dtypes[v.name()] = static_cast<DataType>(v.type().tensor_type().elem_type());
    }
  }
  return p;
}

/// Why this device cannot run `node` (empty when it can).
std::string refusal(const Partition& p, const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return "reference plugin runs only default-domain ONNX ops, not domain '" + node.domain() + "'";
  }
  if (kOps.count(node.op_type()) == 0) {
    return node.op_type() + " is not among the reference plugin's ops (" + kOpList + ")";
  }
  if (node.op_type() == "MaxPool" && node.output_size() > 1 && !node.output(1).empty()) {
    return "MaxPool with an Indices output (the reference plugin computes values only)";
  }
  for (const auto* names : {&node.input(), &node.output()}) {
    for (const std::string& name : *names) {
      if (name.empty()) continue;
      const auto it = p.dtypes.find(name);
      const DataType dtype = it == p.dtypes.end() ? DataType::kUndefined : it->second;
      if (dtype != DataType::kFloat32) {
        return "the reference plugin runs float32 only; '" + name + "' is " +
               (dtype == DataType::kUndefined ? std::string("of unknown dtype") : edgemm::dtype_name(dtype));
      }
    }
  }
  return "";
}

/// kInvalidArgument unless the options name device "cpu" and precision "fp32" (edgemm checks the
/// declared lists first; a plugin still checks what it is given).
Status check_options(const EdgemmPluginOptions* options) {
  if (options == nullptr || options->device == nullptr || options->precision == nullptr) {
    return Status(StatusCode::kInvalidArgument, "reference plugin needs options with a device and a precision");
  }
  if (std::strcmp(options->device, "cpu") != 0 || std::strcmp(options->precision, "fp32") != 0) {
    return Status(StatusCode::kInvalidArgument,
                  std::string("reference plugin runs device 'cpu' at precision 'fp32', not '") + options->device +
                      "' at '" + options->precision + "'");
  }
  return Status::ok();
}

/// EdgemmPluginApi::capability: a verdict per node from refusal().
Status capability(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                  EdgemmPluginVerdict* verdicts, size_t node_count) {
  EDGEMM_RETURN_IF_ERROR(check_options(options));
  EDGEMM_ASSIGN_OR_RETURN(Partition parsed, parse(model, model_size));
  const auto& nodes = parsed.proto.graph().node();
  if (static_cast<size_t>(nodes.size()) != node_count) {
    return Status(StatusCode::kInvalidModel, "the model has " + std::to_string(nodes.size()) +
                                                 " nodes; edgemm asked for " + std::to_string(node_count) +
                                                 " verdicts");
  }
  for (int n = 0; n < nodes.size(); ++n) {
    const std::string reason = refusal(parsed, nodes[n]);
    verdicts[n].supported = reason.empty() ? 1 : 0;
    write_text(verdicts[n].reason, sizeof verdicts[n].reason, reason);
  }
  return Status::ok();
}

/// EdgemmPluginApi::compile: checks every node again (refusing what capability would refuse) and
/// loads the partition into an Inferencer (no graph passes: it runs the partition as given).
Status compile(const void* model, size_t model_size, const EdgemmPluginOptions* options,
               EdgemmPluginPartition** partition) {
  EDGEMM_RETURN_IF_ERROR(check_options(options));
  EDGEMM_ASSIGN_OR_RETURN(Partition parsed, parse(model, model_size));
  for (const onnx::NodeProto& node : parsed.proto.graph().node()) {
    const std::string reason = refusal(parsed, node);
    if (!reason.empty()) {
      return Status(StatusCode::kUnsupported, node.op_type() + " '" + node.name() + "': " + reason);
    }
  }
  edgemm::InferencerConfig config;
  config.model_bytes.assign(static_cast<const char*>(model), model_size);
  config.model_path = "reference plugin partition";
  config.optimize = false;
  config.threads = std::max(options->threads, 1);
  auto compiled = std::make_unique<EdgemmPluginPartition>();
  EDGEMM_ASSIGN_OR_RETURN(compiled->model, edgemm::Inferencer::create(config));
  for (const edgemm::ValueInfo& out : compiled->model->outputs()) compiled->outputs.push_back(out.name);
  *partition = compiled.release();
  return Status::ok();
}

/// The inputs as borrowed Tensors named as the partition's graph inputs, checked against them.
Expected<std::vector<std::pair<std::string, Tensor>>> borrow_inputs(const EdgemmPluginPartition& partition,
                                                                    const EdgemmPluginTensor* inputs,
                                                                    size_t input_count) {
  const std::vector<edgemm::ValueInfo>& declared = partition.model->inputs();
  if (input_count != declared.size() || (input_count > 0 && inputs == nullptr)) {
    return Status(StatusCode::kInvalidArgument, "reference plugin partition takes " + std::to_string(declared.size()) +
                                                    " inputs, got " + std::to_string(input_count));
  }
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (size_t i = 0; i < input_count; ++i) {
    const EdgemmPluginTensor& in = inputs[i];
    const edgemm::ValueInfo& want = declared[i];
    if (in.dtype != static_cast<int32_t>(want.dtype) || in.rank < 0 || (in.rank > 0 && in.dims == nullptr)) {
      return Status(StatusCode::kInvalidArgument, "reference plugin input " + std::to_string(i) + " ('" + want.name +
                                                      "') must be " + edgemm::dtype_name(want.dtype) +
                                                      " with dims; got dtype " + std::to_string(in.dtype));
    }
    edgemm::Shape shape(in.dims, in.dims + in.rank);
    tensors.emplace_back(want.name, Tensor::borrow(want.dtype, std::move(shape), const_cast<void*>(in.data)));
  }
  return tensors;
}

/// EdgemmPluginApi::run: runs the partition's Inferencer (thread-safe, so concurrent calls need no
/// lock) and hands each output over in an OutputBox.
Status run(const EdgemmPluginPartition* partition, const EdgemmPluginTensor* inputs, size_t input_count,
           EdgemmPluginTensor* outputs, size_t output_count) {
  if (partition == nullptr) return Status(StatusCode::kInvalidArgument, "reference plugin got no partition (NULL)");
  if (output_count != partition->outputs.size() || (output_count > 0 && outputs == nullptr)) {
    return Status(StatusCode::kInvalidArgument, "reference plugin partition has " +
                                                    std::to_string(partition->outputs.size()) +
                                                    " outputs, got room for " + std::to_string(output_count));
  }
  for (size_t i = 0; i < output_count; ++i) {
    if (outputs[i].name == nullptr || partition->outputs[i] != outputs[i].name) {
      return Status(StatusCode::kInvalidArgument, "reference plugin output " + std::to_string(i) + " is '" +
                                                      partition->outputs[i] + "'; the host named it '" +
                                                      (outputs[i].name ? outputs[i].name : "(NULL)") + "'");
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(auto named, borrow_inputs(*partition, inputs, input_count));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> results, partition->model->run(named));
  if (results.size() != output_count) {
    return Status(StatusCode::kInternal, "reference plugin computed " + std::to_string(results.size()) +
                                             " outputs for " + std::to_string(output_count));
  }
  std::vector<std::unique_ptr<OutputBox>> boxes;
  for (Tensor& t : results) boxes.push_back(std::make_unique<OutputBox>(OutputBox{t, t.shape()}));
  for (size_t i = 0; i < output_count; ++i) {
    OutputBox* box = boxes[i].release();
    outputs[i].dtype = static_cast<int32_t>(box->tensor.dtype());
    outputs[i].rank = static_cast<int32_t>(box->dims.size());
    outputs[i].dims = box->dims.data();
    outputs[i].data = box->tensor.raw_data();
    outputs[i].owner = box;
  }
  return Status::ok();
}

/// The C entries of the table: each runs its counterpart above through guarded().
int32_t api_capability(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                       EdgemmPluginVerdict* verdicts, size_t node_count, EdgemmPluginError* error) {
  return guarded(error, [&] { return capability(model, model_size, options, verdicts, node_count); });
}

int32_t api_compile(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                    EdgemmPluginPartition** partition, EdgemmPluginError* error) {
  *partition = nullptr;
  return guarded(error, [&] { return compile(model, model_size, options, partition); });
}

int32_t api_run(const EdgemmPluginPartition* partition, const EdgemmPluginTensor* inputs, size_t input_count,
                EdgemmPluginTensor* outputs, size_t output_count, EdgemmPluginError* error) {
  return guarded(error, [&] { return run(partition, inputs, input_count, outputs, output_count); });
}

/// Deletes the OutputBox that run() stored as the output's owner.
void api_release_output(const EdgemmPluginTensor* output) { delete static_cast<OutputBox*>(output->owner); }

void api_release_partition(EdgemmPluginPartition* partition) { delete partition; }

/// The plugin's table: name "reference", device "cpu", precision "fp32".
const EdgemmPluginApi kApi = {EDGEMM_PLUGIN_ABI_VERSION,
                              sizeof(EdgemmPluginApi),
                              "reference",
                              1,
                              kDevices,
                              1,
                              kPrecisions,
                              api_capability,
                              api_compile,
                              api_run,
                              api_release_output,
                              api_release_partition};

}  // namespace

/// The entry point (plugin_abi.h): the same table for every host version; edgemm checks it.
extern "C" EDGEMM_PLUGIN_EXPORT const EdgemmPluginApi* edgemm_plugin_get_api(uint32_t host_abi_version) {
  return &kApi;
}
