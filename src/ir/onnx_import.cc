#include "ir/onnx_import.h"

#include <malloc.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/long_lived_memory.h"
#include "ir/external_data.h"
#include "ir/libonnx_view.h"
#include "ir/onnx_next_schemas.h"
#include "ir/onnx_wire.h"

namespace edgemm::ir {

namespace fs = std::filesystem;

namespace {

constexpr const char* kNotAModel =
    "the file is not a valid ONNX model: protobuf parsing failed (truncated or not ONNX?)";

Status invalid(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }

/// kIo naming `what` and why unless `path` is a regular file.
Status check_regular_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return Status::ok();
  const std::string why = fs::is_directory(path, ec) ? "it is a folder"
                          : fs::exists(path, ec)     ? "not a regular file"
                                                     : "no such file";
  return make_error(StatusCode::kIo, "cannot read " + what + " '" + path + "': " + why);
}

/// Opens `path` for reading after checking it is a regular file; its size goes to `size`.
Expected<std::ifstream> open_file(const std::string& path, const std::string& what, uintmax_t& size) {
  EDGEMM_RETURN_IF_ERROR(check_regular_file(path, what));
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  size = fs::file_size(path, ec);
  if (!in || ec) return make_error(StatusCode::kIo, "cannot open " + what + " '" + path + "'");
  return in;
}

Expected<std::string> read_file(const std::string& path, const std::string& what) {
  uintmax_t size = 0;
  EDGEMM_ASSIGN_OR_RETURN(std::ifstream in, open_file(path, what, size));
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return make_error(StatusCode::kIo, "cannot read " + what + " '" + path + "': it changed while being read");
  }
  return bytes;
}

/// What the import carries down the graph: the model's folder, and the external tensors left in
/// their files, read or mapped straight into their tensors at conversion
/// (tensor_from_external_range), never inlined into the proto.
struct ImportContext {
  std::string base_dir;
  std::unordered_map<const onnx::TensorProto*, ExternalRange> external;
};

/// Whether an external tensor is read into the proto: small ones cost nothing to inline, and ONNX
/// shape inference reads int32/int64 initializers as shape data (Reshape's shape, Slice's
/// starts) but cannot read external data.
bool inline_into_proto(const onnx::TensorProto& proto, const ExternalRange& range) {
  return range.length < static_cast<int64_t>(core::kMappedFromBytes) || proto.data_type() == onnx::TensorProto::INT32 ||
         proto.data_type() == onnx::TensorProto::INT64;
}

/// Records that `proto`'s data is `range`, read at conversion (convert_tensor), and leaves it
/// marked external with the resolved path as its only entry: libonnx 1.12's checker opens every
/// location as written, from the working directory, so an absolute path is the one it finds
/// (ONNX 1.13's checker refuses absolute locations: an upgrade must revisit this).
void mark_in_file(onnx::TensorProto& proto, ExternalRange range, ImportContext& context) {
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  proto.clear_external_data();
  auto* location = proto.add_external_data();
  location->set_key("location");
  location->set_value(range.file.path);
  context.external[&proto] = std::move(range);
}

/// Resolves one external tensor and adds its file to `files` (once). A tensor inline_into_proto
/// takes is read into the proto's raw_data, so the rest of the import sees one form; any other
/// stays in its file, recorded in `context` (mark_in_file).
Status prepare_external_data(onnx::TensorProto& proto, ImportContext& context, std::vector<std::string>& files) {
  EDGEMM_ASSIGN_OR_RETURN(ExternalRange range, resolve_external_range(proto, context.base_dir));
  if (std::find(files.begin(), files.end(), range.file.path) == files.end()) files.push_back(range.file.path);
  if (!inline_into_proto(proto, range)) {
    mark_in_file(proto, std::move(range), context);
    return Status::ok();
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string bytes, read_external_range(range, proto.name()));
  proto.set_raw_data(std::move(bytes));
  proto.clear_external_data();
  proto.set_data_location(onnx::TensorProto::DEFAULT);
  return Status::ok();
}

Status prepare_graph_external_data(onnx::GraphProto& graph, ImportContext& context, std::vector<std::string>& files);

Status prepare_attribute_external_data(onnx::AttributeProto& attr, ImportContext& context,
                                       std::vector<std::string>& files) {
  if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL) {
    EDGEMM_RETURN_IF_ERROR(prepare_external_data(*attr.mutable_t(), context, files));
  }
  if (attr.has_g()) EDGEMM_RETURN_IF_ERROR(prepare_graph_external_data(*attr.mutable_g(), context, files));
  for (auto& g : *attr.mutable_graphs()) EDGEMM_RETURN_IF_ERROR(prepare_graph_external_data(g, context, files));
  return Status::ok();
}

Status prepare_graph_external_data(onnx::GraphProto& graph, ImportContext& context, std::vector<std::string>& files) {
  for (auto& t : *graph.mutable_initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      EDGEMM_RETURN_IF_ERROR(prepare_external_data(t, context, files));
    }
  }
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      EDGEMM_RETURN_IF_ERROR(prepare_attribute_external_data(attr, context, files));
    }
  }
  return Status::ok();
}

template <typename Src, typename Dst>
void copy_typed(const Src& field, Dst* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& vi) {
  ValueInfo info;
  info.name = vi.name();
  if (vi.type().has_tensor_type()) {
    const auto& tt = vi.type().tensor_type();
    info.dtype = static_cast<DataType>(tt.elem_type());
    if (tt.has_shape()) {
      info.rank_known = true;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value())
          dim.value = d.dim_value();
        else
          dim.symbol = d.dim_param();
        info.shape.push_back(dim);
      }
    }
  }
  return info;
}

Expected<Graph> graph_from_proto(onnx::GraphProto& proto, const ImportContext& context, bool weights = true);
Expected<Tensor> convert_tensor(const onnx::TensorProto& proto, const ImportContext& context);

/// Frees a converted tensor's bytes from the proto. A large block is handed back to the system
/// at once (malloc_trim): its converted copy lives in pages of its own
/// (core/long_lived_memory.h) and cannot reuse the heap block, so without that the import would
/// hold both copies of the weights at its end.
void free_raw_data(onnx::TensorProto& t) {
  const size_t bytes = t.raw_data().capacity();
  std::string().swap(*t.mutable_raw_data());
  if (bytes >= core::kMappedFromBytes) malloc_trim(0);
}

Expected<Attribute> attribute_from_proto(onnx::AttributeProto& a, const ImportContext& context) {
  Attribute attr;
  using AP = onnx::AttributeProto;
  switch (a.type()) {
    case AP::FLOAT:
      attr.kind = Attribute::Kind::kFloat;
      attr.f = a.f();
      break;
    case AP::INT:
      attr.kind = Attribute::Kind::kInt;
      attr.i = a.i();
      break;
    case AP::STRING:
      attr.kind = Attribute::Kind::kString;
      attr.s = a.s();
      break;
    case AP::TENSOR: {
      attr.kind = Attribute::Kind::kTensor;
      EDGEMM_ASSIGN_OR_RETURN(attr.t, convert_tensor(a.t(), context));
      free_raw_data(*a.mutable_t());
      break;
    }
    case AP::GRAPH: {
      attr.kind = Attribute::Kind::kGraph;
      EDGEMM_ASSIGN_OR_RETURN(Graph g, graph_from_proto(*a.mutable_g(), context));
      attr.g = std::make_shared<Graph>(std::move(g));
      break;
    }
    case AP::FLOATS:
      attr.kind = Attribute::Kind::kFloats;
      attr.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case AP::INTS:
      attr.kind = Attribute::Kind::kInts;
      attr.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case AP::STRINGS:
      attr.kind = Attribute::Kind::kStrings;
      attr.strings.assign(a.strings().begin(), a.strings().end());
      break;
    default:
      return make_error(StatusCode::kUnsupported, "attribute '" + a.name() + "' has a type (" +
                                                      std::to_string(a.type()) + ") edgemm does not support");
  }
  return attr;
}

/// Refuses a TensorProto whose dtype a Tensor cannot hold: kUnsupported for strings, kInvalidModel
/// for unknown types.
Status check_proto_dtype(const onnx::TensorProto& proto) {
  const auto dtype = static_cast<DataType>(proto.data_type());
  const std::string what = "tensor '" + proto.name() + "'";
  if (dtype == DataType::kString) {
    return make_error(StatusCode::kUnsupported, what + " holds strings, which edgemm does not support");
  }
  if (!dtype_supported(dtype)) return invalid(what + " has unknown data type " + std::to_string(proto.data_type()));
  return Status::ok();
}

/// An initializer of `proto`'s dtype and shape with no data (for sizes and shapes only). Errors as
/// tensor_from_proto for the dtype and shape.
Expected<Tensor> tensor_stub_from_proto(const onnx::TensorProto& proto) {
  EDGEMM_RETURN_IF_ERROR(check_proto_dtype(proto));
  const auto dtype = static_cast<DataType>(proto.data_type());
  const std::string what = "tensor '" + proto.name() + "'";
  Shape shape(proto.dims().begin(), proto.dims().end());
  const auto count = shape_element_count(shape);
  if (!count) return Status(count.status().code(), what + ": " + count.status().message());
  return Tensor::borrow(dtype, std::move(shape), nullptr);
}

/// `proto` as a tensor: from its file range when the import left it there
/// (prepare_external_data), else tensor_from_proto.
Expected<Tensor> convert_tensor(const onnx::TensorProto& proto, const ImportContext& context) {
  const auto it = context.external.find(&proto);
  if (it == context.external.end()) return tensor_from_proto(proto, context.base_dir);
  EDGEMM_RETURN_IF_ERROR(check_proto_dtype(proto));
  return tensor_from_external_range(static_cast<DataType>(proto.data_type()),
                                    Shape(proto.dims().begin(), proto.dims().end()), it->second, proto.name());
}

/// Converts `proto` (and its subgraphs) to the IR. Each initializer's data is freed from the proto
/// once converted, so that the import holds one copy of the weights, not two. Without `weights`,
/// the main graph's initializers are tensor_stub_from_proto's (subgraphs convert in full).
Expected<Graph> graph_from_proto(onnx::GraphProto& proto, const ImportContext& context, bool weights) {
  Graph graph;
  graph.name = proto.name();
  if (proto.sparse_initializer_size() > 0) {
    return make_error(StatusCode::kUnsupported, "graph '" + proto.name() + "' has sparse initializers");
  }
  for (auto& t : *proto.mutable_initializer()) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor tensor, weights ? convert_tensor(t, context) : tensor_stub_from_proto(t));
    graph.initializers[t.name()] = std::move(tensor);
    free_raw_data(t);
  }
  for (const auto& vi : proto.input()) {
    if (graph.initializers.count(vi.name())) continue;
    graph.inputs.push_back(value_info_from_proto(vi));
  }
  for (const auto& vi : proto.output()) graph.outputs.push_back(value_info_from_proto(vi));
  for (const auto& vi : proto.value_info()) graph.value_infos[vi.name()] = value_info_from_proto(vi);
  for (auto& n : *proto.mutable_node()) {
    Node node;
    node.name = n.name();
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (auto& a : *n.mutable_attribute()) {
      auto attr = attribute_from_proto(a, context);
      if (!attr) return node_error(node, attr.status().code(), attr.status().message());
      node.attributes[a.name()] = std::move(attr).value();
    }
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

Status pin_input_shapes(onnx::ModelProto& model, const std::map<std::string, Shape>& fixed) {
  for (const auto& [name, shape] : fixed) {
    onnx::ValueInfoProto* target = nullptr;
    for (auto& vi : *model.mutable_graph()->mutable_input()) {
      if (vi.name() == name) target = &vi;
    }
    if (target == nullptr) {
      return make_error(StatusCode::kInvalidArgument,
                        "fixed shape given for '" + name + "', which is not a model input");
    }
    auto* tt = target->mutable_type()->mutable_tensor_type();
    if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(shape.size())) {
      return make_error(StatusCode::kInvalidArgument, "fixed shape " + shape_to_string(shape) + " for input '" + name +
                                                          "' has rank " + std::to_string(shape.size()) +
                                                          " but the model declares rank " +
                                                          std::to_string(tt->shape().dim_size()));
    }
    auto* sp = tt->mutable_shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 1) {
        return make_error(StatusCode::kInvalidArgument, "fixed shape " + shape_to_string(shape) + " for input '" +
                                                            name + "': axis " + std::to_string(i) + " is " +
                                                            std::to_string(shape[i]) + "; extents must be at least 1");
      }
      if (static_cast<int>(i) < sp->dim_size() && sp->dim(static_cast<int>(i)).has_dim_value() &&
          sp->dim(static_cast<int>(i)).dim_value() != shape[i]) {
        return make_error(StatusCode::kInvalidArgument, "fixed shape " + shape_to_string(shape) + " for input '" +
                                                            name + "' conflicts with axis " + std::to_string(i) +
                                                            " declared as " +
                                                            std::to_string(sp->dim(static_cast<int>(i)).dim_value()));
      }
    }
    sp->Clear();
    for (int64_t d : shape) sp->add_dim()->set_dim_value(d);
  }
  return Status::ok();
}

/// Window attributes ONNX shape inference divides by or sizes with (libonnx 1.12's
/// convPoolShapeInference divides by strides unchecked: a 0 crashes the process with SIGFPE).
/// Checks every Conv-like and pooling node, in subgraphs too: strides, dilations and
/// kernel_shape must be positive, pads non-negative, ConvTranspose output_padding below
/// max(stride, dilation) (the ConvTranspose spec; ONNX Runtime checks the same).
Status check_window_attributes(const onnx::GraphProto& graph) {
  static const std::set<std::string> kWindowOps = {"Conv",    "ConvInteger", "QLinearConv", "ConvTranspose",
                                                   "MaxPool", "AveragePool", "LpPool",      "MaxUnpool"};
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) EDGEMM_RETURN_IF_ERROR(check_window_attributes(attr.g()));
      for (const auto& g : attr.graphs()) EDGEMM_RETURN_IF_ERROR(check_window_attributes(g));
    }
    if (!(node.domain().empty() || node.domain() == "ai.onnx") || !kWindowOps.count(node.op_type())) continue;
    const std::string who = node.op_type() + " '" + node.name() + "': ";
    std::vector<int64_t> strides, dilations, output_padding;
    for (const auto& attr : node.attribute()) {
      const std::vector<int64_t> values(attr.ints().begin(), attr.ints().end());
      const bool positive = attr.name() == "strides" || attr.name() == "dilations" || attr.name() == "kernel_shape";
      for (int64_t v : values) {
        if ((positive && v <= 0) || (attr.name() == "pads" && v < 0)) {
          return invalid(who + "attribute " + attr.name() + " has " + std::to_string(v) + "; " + attr.name() +
                         (positive ? " must be positive" : " must not be negative"));
        }
      }
      if (attr.name() == "strides") strides = values;
      if (attr.name() == "dilations") dilations = values;
      if (attr.name() == "output_padding") output_padding = values;
    }
    for (size_t i = 0; i < output_padding.size(); ++i) {
      const int64_t stride = i < strides.size() ? strides[i] : 1;
      const int64_t dilation = i < dilations.size() ? dilations[i] : 1;
      if (output_padding[i] < 0 || output_padding[i] >= std::max(stride, dilation)) {
        return invalid(who + "output_padding[" + std::to_string(i) + "] is " + std::to_string(output_padding[i]) +
                       "; it must be in [0, max(stride, dilation)) = [0, " +
                       std::to_string(std::max(stride, dilation)) + ")");
      }
    }
  }
  return Status::ok();
}

/// Whether every node of the main graph has an ONNX schema at the model's `opsets` (domain, ""
/// for ai.onnx → version, as Model::opsets). Debian's libonnx crashes in data propagation on a
/// node it has no schema for (a com.edgemm op).
bool all_nodes_have_schemas(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets) {
  for (const auto& node : graph.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    const auto it = opsets.find(domain);
    if (it == opsets.end()) return false;
    if (onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(it->second), domain) == nullptr) return false;
  }
  return true;
}

/// ONNX shape inference; with data propagation when every node has a schema, so that shapes
/// computed in the graph (Shape -> Gather -> Concat -> Reshape, as exporters write them) become
/// static when the inputs' shapes are, and constant folding removes those chains (CLIP
/// ViT-B/32 at a fixed input shape: 490 nodes -> 262). Falls back to plain inference when
/// propagation throws. `opsets` as Model::opsets.
Status run_shape_inference(onnx::ModelProto& proto, const std::map<std::string, int64_t>& opsets) {
  if (all_nodes_have_schemas(proto.graph(), opsets)) {
    const auto exported = proto.graph().value_info();
    try {
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, true));
      return Status::ok();
    } catch (const std::exception&) {
      *proto.mutable_graph()->mutable_value_info() = exported;
    }
  }
  try {
    onnx::shape_inference::InferShapes(proto);
  } catch (const std::exception& e) {
    return invalid(std::string("ONNX shape inference failed: ") + e.what());
  }
  return Status::ok();
}

/// The dim_params of the main graph's inputs and outputs.
std::set<std::string> io_symbols(const onnx::GraphProto& graph) {
  std::set<std::string> symbols;
  auto add = [&symbols](const onnx::ValueInfoProto& v) {
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (d.has_dim_param()) symbols.insert(d.dim_param());
    }
  };
  for (const auto& v : graph.input()) add(v);
  for (const auto& v : graph.output()) add(v);
  return symbols;
}

/// ONNX shape inference (run_shape_inference). Symbols the inference made up for axes the file
/// leaves unnamed ("unk__0", ...) are taken off the graph's outputs again, so that outputs report
/// those axes unnamed, as the file declares them and as ONNX Runtime reports them.
Status infer_shapes(onnx::ModelProto& proto, const std::map<std::string, int64_t>& opsets) {
  const std::set<std::string> declared = io_symbols(proto.graph());
  EDGEMM_RETURN_IF_ERROR(run_shape_inference(proto, opsets));
  for (auto& output : *proto.mutable_graph()->mutable_output()) {
    if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) continue;
    for (auto& d : *output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) == 0 && declared.count(d.dim_param()) == 0) {
        d.clear_dim_param();
      }
    }
  }
  return Status::ok();
}

/// The raw_data strip_initializer_raw_data cut out of the model `file`.
struct WeightsInFile {
  core::FileId file;
  std::vector<RawDataInFile> raw_data;
};

/// Marks each cut initializer as data at its place in the model file (mark_in_file).
void leave_weights_in_file(onnx::ModelProto& proto, const WeightsInFile& in_file, ImportContext& context) {
  for (const RawDataInFile& cut : in_file.raw_data) {
    mark_in_file(*proto.mutable_graph()->mutable_initializer(cut.initializer),
                 ExternalRange{in_file.file, cut.offset, cut.length}, context);
  }
}

Expected<Model> import_model_proto(onnx::ModelProto& proto, const std::string& base_dir, const ImportOptions& options,
                                   bool weights = true, const WeightsInFile& in_file = {}) {
  if (!proto.has_graph()) return invalid("the file parsed as protobuf but holds no ONNX graph (not an ONNX model?)");
  Model model;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  for (const auto& op : proto.opset_import()) {
    model.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }
  if (proto.opset_import_size() == 0 && proto.ir_version() < 3) model.opsets[""] = 1;
  const int64_t opset = model.opset("");
  if (opset > kMaxImportOpset) {
    return make_error(StatusCode::kUnsupported, "model imports ai.onnx opset " + std::to_string(opset) +
                                                    "; edgemm supports opsets up to " +
                                                    std::to_string(kMaxImportOpset));
  }
  ImportContext context{base_dir, {}};
  EDGEMM_RETURN_IF_ERROR(prepare_graph_external_data(*proto.mutable_graph(), context, model.external_data_files));
  leave_weights_in_file(proto, in_file, context);
  EDGEMM_RETURN_IF_ERROR(pin_input_shapes(proto, options.fixed_input_shapes));
  EDGEMM_RETURN_IF_ERROR(with_libonnx_view(proto, [&](const std::map<std::string, int64_t>& opsets) {
    if (options.run_checker) EDGEMM_RETURN_IF_ERROR(run_onnx_checker(proto, "the ONNX checker rejected the model: "));
    EDGEMM_RETURN_IF_ERROR(check_window_attributes(proto.graph()));
    return options.infer_shapes ? infer_shapes(proto, opsets) : Status::ok();
  }));
  EDGEMM_ASSIGN_OR_RETURN(model.graph, graph_from_proto(*proto.mutable_graph(), context, weights));
  return model;
}

}  // namespace

Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir) {
  EDGEMM_RETURN_IF_ERROR(check_proto_dtype(proto));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    EDGEMM_ASSIGN_OR_RETURN(ExternalRange range, resolve_external_range(proto, base_dir));
    return tensor_from_external_range(static_cast<DataType>(proto.data_type()),
                                      Shape(proto.dims().begin(), proto.dims().end()), range, proto.name());
  }
  const auto dtype = static_cast<DataType>(proto.data_type());
  const std::string what = "tensor '" + proto.name() + "'";
  Shape shape(proto.dims().begin(), proto.dims().end());
  auto created = core::create_long_lived_tensor(dtype, shape);
  if (!created) return Status(created.status().code(), what + ": " + created.status().message());
  Tensor t = std::move(created).value();
  const int64_t count = t.element_count();
  auto size_error = [&](int64_t got) {
    return invalid(what + " declares shape " + shape_to_string(shape) + " (" + std::to_string(count) + " " +
                   dtype_name(dtype) + " elements) but holds " + std::to_string(got));
  };
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != t.byte_size()) {
      return invalid(what + " declares shape " + shape_to_string(shape) + " of " + dtype_name(dtype) + " (" +
                     std::to_string(t.byte_size()) + " bytes) but holds " + std::to_string(raw.size()) + " bytes");
    }
    if (!raw.empty()) std::memcpy(t.raw_data(), raw.data(), raw.size());
    return t;
  }
  switch (dtype) {
    case DataType::kFloat32:
      if (proto.float_data_size() != count) return size_error(proto.float_data_size());
      copy_typed(proto.float_data(), t.data<float>(), count);
      break;
    case DataType::kFloat64:
      if (proto.double_data_size() != count) return size_error(proto.double_data_size());
      copy_typed(proto.double_data(), t.data<double>(), count);
      break;
    case DataType::kInt64:
      if (proto.int64_data_size() != count) return size_error(proto.int64_data_size());
      copy_typed(proto.int64_data(), t.data<int64_t>(), count);
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      if (proto.uint64_data_size() != count) return size_error(proto.uint64_data_size());
      if (dtype == DataType::kUInt32)
        copy_typed(proto.uint64_data(), t.data<uint32_t>(), count);
      else
        copy_typed(proto.uint64_data(), t.data<uint64_t>(), count);
      break;
    default: {
      if (proto.int32_data_size() != count) return size_error(proto.int32_data_size());
      for (int64_t i = 0; i < count; ++i) {
        const int32_t v = proto.int32_data(static_cast<int>(i));
        switch (dtype) {
          case DataType::kInt32:
            t.data<int32_t>()[i] = v;
            break;
          case DataType::kInt8:
            t.data<int8_t>()[i] = static_cast<int8_t>(v);
            break;
          case DataType::kUInt8:
          case DataType::kBool:
            t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
            break;
          case DataType::kInt16:
            t.data<int16_t>()[i] = static_cast<int16_t>(v);
            break;
          case DataType::kUInt16:
          case DataType::kFloat16:
          case DataType::kBFloat16:
            t.data<uint16_t>()[i] = static_cast<uint16_t>(v);
            break;
          default:
            return invalid(what + " has no data for dtype " + dtype_name(dtype));
        }
      }
    }
  }
  return t;
}

Expected<Tensor> read_tensor_proto_file(const std::string& path) {
  EDGEMM_ASSIGN_OR_RETURN(std::string bytes, read_file(path, "tensor file"));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return invalid("'" + path + "' is not a serialized ONNX TensorProto");
  return tensor_from_proto(proto, fs::path(path).parent_path().string());
}

Expected<Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir, const ImportOptions& options) {
  if (bytes.empty()) return invalid("the model file is empty (0 bytes)");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) return invalid(kNotAModel);
  return import_model_proto(proto, base_dir, options);
}

namespace {

/// import_onnx_file with or without the main graph's initializer data (graph_from_proto).
Expected<Model> import_file(const std::string& path, const ImportOptions& options, bool weights) {
  if (path == "-") {
    return Status(StatusCode::kInvalidArgument,
                  "a model cannot be read from standard input ('-'): give its file path (external data is found "
                  "beside it)");
  }
  EDGEMM_RETURN_IF_ERROR(check_regular_file(path, "model"));
  std::string base = fs::path(path).parent_path().string();
  if (base.empty()) base = ".";
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  EDGEMM_ASSIGN_OR_RETURN(core::ReadOnlyFile model_file, core::open_read_only(ec ? path : canonical.string()));
  if (model_file.id.size == 0) return invalid("'" + path + "': the model file is empty (0 bytes)");
  // The file is mapped and walked at the wire level; protobuf parses it without the large
  // initializers' raw_data, which stays in the file to be mapped or read into each tensor
  // (onnx_wire.h): one copy of the weights, not three.
  Expected<core::MappedFileRange> mapped = core::map_file_range(model_file, 0, model_file.id.size, /*populate=*/false);
  std::string read_bytes;  // the file, where its file system cannot map it
  if (!mapped) {
    read_bytes.resize(static_cast<size_t>(model_file.id.size));
    EDGEMM_RETURN_IF_ERROR(core::read_file_range(model_file, 0, model_file.id.size, read_bytes.data()));
  }
  const std::string_view bytes =
      mapped ? std::string_view(static_cast<const char*>(mapped->data), static_cast<size_t>(model_file.id.size))
             : std::string_view(read_bytes);
  std::optional<StrippedModel> stripped = strip_initializer_raw_data(bytes, core::kMappedFromBytes);
  onnx::ModelProto proto;
  WeightsInFile in_file;
  bool parsed = false;
  if (stripped && !stripped->raw_data.empty()) {
    parsed = proto.ParseFromString(stripped->bytes);
    in_file = {model_file.id, std::move(stripped->raw_data)};
  } else {
    parsed = bytes.size() <= INT32_MAX && proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }
  stripped.reset();
  mapped = core::MappedFileRange{};
  std::string().swap(read_bytes);
  Expected<Model> model = parsed ? import_model_proto(proto, base, options, weights, in_file) : invalid(kNotAModel);
  if (!model) return Status(model.status().code(), "'" + path + "': " + model.status().message());
  return model;
}

}  // namespace

Expected<Model> import_onnx_file(const std::string& path, const ImportOptions& options) {
  return import_file(path, options, true);
}

Expected<Model> import_onnx_file_shapes_only(const std::string& path, const ImportOptions& options) {
  return import_file(path, options, false);
}

}  // namespace edgemm::ir
