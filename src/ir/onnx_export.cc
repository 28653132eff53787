#include "ir/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <filesystem>
#include <optional>
#include <vector>

#include "edgemm/atomic_file.h"

namespace edgemm::ir {

namespace fs = std::filesystem;

namespace {

// raw_data is little-endian (onnx.proto, TensorProto.raw_data); Tensor buffers are copied as they are.
static_assert(std::endian::native == std::endian::little, "ONNX export copies host bytes into little-endian raw_data");

constexpr int64_t kDefaultIrVersion = 8;
constexpr int64_t kExternalDataAlignment = 64;

bool is_standard_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx" || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training";
}

/// Standard domains, plus ONNX Runtime's contrib domain com.microsoft (edgemm quantize writes
/// its MatMulNBits, which edgemm and ONNX Runtime both run).
bool is_exportable_domain(const std::string& domain) { return is_standard_domain(domain) || domain == "com.microsoft"; }

/// com.edgemm ops that model rewrites put into files (edgemm's runtime runs them): TokenPrune
/// (passes/token_pruning.h), KvAttention (passes/kv_cache.h). The fusion passes' com.edgemm ops
/// are not among them.
bool is_file_level_edgemm_op(const Node& node) {
  return node.domain == "com.edgemm" && (node.op_type == "TokenPrune" || node.op_type == "KvAttention");
}

bool is_exportable(const Node& node) { return is_exportable_domain(node.domain) || is_file_level_edgemm_op(node); }

/// What the graph writer needs from the model: initializers are also graph inputs up to IR 3.
struct GraphContext {
  int64_t ir_version = kDefaultIrVersion;
  bool initializers_are_inputs() const { return ir_version <= 3; }
};

Status tensor_to_proto(const Tensor& tensor, const std::string& what, onnx::TensorProto* out) {
  if (!dtype_supported(tensor.dtype())) {
    return make_error(StatusCode::kUnsupported,
                      what + " has data type " + dtype_name(tensor.dtype()) + ", which ONNX export cannot write");
  }
  out->set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) out->add_dims(d);
  if (tensor.byte_size() == 0) {
    out->set_raw_data(std::string());  // an empty tensor may have no buffer at all
  } else {
    out->set_raw_data(tensor.raw_data(), tensor.byte_size());
  }
  return Status::ok();
}

void value_info_to_proto(const ValueInfo& info, onnx::ValueInfoProto* out) {
  out->set_name(info.name);
  if (info.dtype == DataType::kUndefined && !info.rank_known) return;
  auto* tensor_type = out->mutable_type()->mutable_tensor_type();
  if (info.dtype != DataType::kUndefined) tensor_type->set_elem_type(static_cast<int32_t>(info.dtype));
  if (!info.rank_known) return;
  auto* shape = tensor_type->mutable_shape();
  for (const Dim& d : info.shape) {
    auto* dim = shape->add_dim();
    if (d.is_static())
      dim->set_dim_value(d.value);
    else if (!d.symbol.empty())
      dim->set_dim_param(d.symbol);
  }
}

/// Graph input entry for an initializer (IR ≤ 3): its dtype and static shape.
void initializer_input_to_proto(const std::string& name, const Tensor& tensor, onnx::ValueInfoProto* out) {
  ValueInfo info;
  info.name = name;
  info.dtype = tensor.dtype();
  info.rank_known = true;
  for (int64_t d : tensor.shape()) info.shape.push_back(Dim{d, ""});
  value_info_to_proto(info, out);
}

Status graph_to_proto(const Graph& graph, const std::string& fallback_name, const GraphContext& ctx,
                      onnx::GraphProto* out);

Status attribute_to_proto(const Node& node, const std::string& key, const Attribute& attr, const GraphContext& ctx,
                          onnx::AttributeProto* out) {
  using AP = onnx::AttributeProto;
  out->set_name(key);
  switch (attr.kind) {
    case Attribute::Kind::kFloat:
      out->set_type(AP::FLOAT);
      out->set_f(attr.f);
      break;
    case Attribute::Kind::kInt:
      out->set_type(AP::INT);
      out->set_i(attr.i);
      break;
    case Attribute::Kind::kString:
      out->set_type(AP::STRING);
      out->set_s(attr.s);
      break;
    case Attribute::Kind::kTensor: {
      out->set_type(AP::TENSOR);
      const Status st = tensor_to_proto(attr.t, "attribute '" + key + "'", out->mutable_t());
      if (!st.is_ok()) return node_error(node, st.code(), st.message());
      break;
    }
    case Attribute::Kind::kGraph:
      out->set_type(AP::GRAPH);
      if (attr.g == nullptr)
        return node_error(node, StatusCode::kInternal, "graph attribute '" + key + "' holds no graph");
      EDGEMM_RETURN_IF_ERROR(graph_to_proto(*attr.g, node.name + "_" + key, ctx, out->mutable_g()));
      break;
    case Attribute::Kind::kFloats:
      out->set_type(AP::FLOATS);
      out->mutable_floats()->Add(attr.floats.begin(), attr.floats.end());
      break;
    case Attribute::Kind::kInts:
      out->set_type(AP::INTS);
      out->mutable_ints()->Add(attr.ints.begin(), attr.ints.end());
      break;
    case Attribute::Kind::kStrings:
      out->set_type(AP::STRINGS);
      for (const std::string& s : attr.strings) out->add_strings(s);
      break;
  }
  return Status::ok();
}

Status node_to_proto(const Node& node, const GraphContext& ctx, onnx::NodeProto* out) {
  if (!is_exportable(node)) {
    return node_error(
        node, StatusCode::kUnsupported,
        "domain '" + node.domain +
            "' is not a standard ONNX domain; ONNX export writes only ai.onnx, ai.onnx.ml, "
            "ai.onnx.preview.training and com.microsoft nodes, and com.edgemm TokenPrune and KvAttention (other "
            "com.edgemm ops exist only inside edgemm's runtime: export the model before the fusion "
            "passes)");
  }
  out->set_name(node.name);
  out->set_op_type(node.op_type);
  out->set_domain(node.domain == "ai.onnx" ? "" : node.domain);
  for (const std::string& input : node.inputs) out->add_input(input);
  for (const std::string& output : node.outputs) out->add_output(output);
  for (const auto& [key, attr] : node.attributes) {
    EDGEMM_RETURN_IF_ERROR(attribute_to_proto(node, key, attr, ctx, out->add_attribute()));
  }
  return Status::ok();
}

Status graph_to_proto(const Graph& graph, const std::string& fallback_name, const GraphContext& ctx,
                      onnx::GraphProto* out) {
  out->set_name(graph.name.empty() ? fallback_name : graph.name);
  for (const ValueInfo& input : graph.inputs) value_info_to_proto(input, out->add_input());
  for (const auto& [name, tensor] : graph.initializers) {
    auto* proto = out->add_initializer();
    proto->set_name(name);
    EDGEMM_RETURN_IF_ERROR(tensor_to_proto(tensor, "initializer '" + name + "'", proto));
    if (ctx.initializers_are_inputs()) initializer_input_to_proto(name, tensor, out->add_input());
  }
  for (const Node& node : graph.nodes) EDGEMM_RETURN_IF_ERROR(node_to_proto(node, ctx, out->add_node()));
  for (const ValueInfo& output : graph.outputs) value_info_to_proto(output, out->add_output());
  for (const auto& [name, info] : graph.value_infos) value_info_to_proto(info, out->add_value_info());
  return Status::ok();
}

Expected<onnx::ModelProto> model_to_proto(const Model& model) {
  if (model.ir_version == 1 || model.ir_version == 2) {
    return make_error(StatusCode::kUnsupported, "the model has IR version " + std::to_string(model.ir_version) +
                                                    "; ONNX export writes IR versions 3 and later (opset imports)");
  }
  GraphContext ctx;
  ctx.ir_version = model.ir_version == 0 ? kDefaultIrVersion : model.ir_version;
  onnx::ModelProto proto;
  proto.set_ir_version(ctx.ir_version);
  proto.set_producer_name("edgemm");
  const bool edgemm_nodes = std::any_of(model.graph.nodes.begin(), model.graph.nodes.end(), is_file_level_edgemm_op);
  for (const auto& [domain, version] : model.opsets) {
    if (!is_exportable_domain(domain) && !(domain == "com.edgemm" && edgemm_nodes)) continue;
    auto* opset = proto.add_opset_import();
    opset->set_domain(domain == "ai.onnx" ? "" : domain);
    opset->set_version(version);
  }
  EDGEMM_RETURN_IF_ERROR(graph_to_proto(model.graph, "main", ctx, proto.mutable_graph()));
  return proto;
}

Expected<std::string> serialize(const onnx::ModelProto& proto) {
  const size_t size = proto.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    return make_error(StatusCode::kUnsupported,
                      "the ONNX model would be " + std::to_string(size) +
                          " bytes, over protobuf's 2 GiB limit; write it with external data (export_onnx_file)");
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return make_error(StatusCode::kInternal, "protobuf could not serialize the ONNX ModelProto");
  }
  return bytes;
}

/// Every TensorProto of `graph` and its subgraphs: initializers and tensor attributes.
void collect_tensors(onnx::GraphProto& graph, std::vector<onnx::TensorProto*>& out) {
  for (auto& t : *graph.mutable_initializer()) out.push_back(&t);
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) out.push_back(attr.mutable_t());
      if (attr.has_g()) collect_tensors(*attr.mutable_g(), out);
    }
  }
}

void add_entry(onnx::TensorProto* tensor, const std::string& key, const std::string& value) {
  auto* entry = tensor->add_external_data();
  entry->set_key(key);
  entry->set_value(value);
}

/// Moves the raw_data of tensors of at least `threshold` bytes to a temporary of `data_path`
/// (location `location`, relative to the model's folder), returned uncommitted; std::nullopt
/// (and no file) when no tensor qualifies.
Expected<std::optional<AtomicFile>> move_to_external_data(onnx::ModelProto& proto, const std::string& data_path,
                                                          const std::string& location, int64_t threshold) {
  std::vector<onnx::TensorProto*> tensors;
  collect_tensors(*proto.mutable_graph(), tensors);
  std::erase_if(tensors,
                [&](const onnx::TensorProto* t) { return static_cast<int64_t>(t->raw_data().size()) < threshold; });
  if (tensors.empty()) return std::optional<AtomicFile>();
  EDGEMM_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(data_path));
  int64_t offset = 0;
  const std::string padding(kExternalDataAlignment, '\0');
  for (onnx::TensorProto* tensor : tensors) {
    const int64_t pad = (kExternalDataAlignment - offset % kExternalDataAlignment) % kExternalDataAlignment;
    const std::string& raw = tensor->raw_data();
    out.write(padding.data(), static_cast<size_t>(pad));
    out.write(raw);
    offset += pad;
    add_entry(tensor, "location", location);
    add_entry(tensor, "offset", std::to_string(offset));
    add_entry(tensor, "length", std::to_string(raw.size()));
    offset += static_cast<int64_t>(raw.size());
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    tensor->clear_raw_data();
  }
  return std::optional<AtomicFile>(std::move(out));
}

}  // namespace

Expected<std::string> export_onnx_bytes(const Model& model) {
  EDGEMM_ASSIGN_OR_RETURN(onnx::ModelProto proto, model_to_proto(model));
  return serialize(proto);
}

Status export_onnx_file(const Model& model, const std::string& path, const ExportOptions& options) {
  if (options.external_data_threshold < 0) {
    return make_error(StatusCode::kInvalidArgument, "external data threshold " +
                                                        std::to_string(options.external_data_threshold) +
                                                        " is negative (0 writes every tensor inline)");
  }
  EDGEMM_ASSIGN_OR_RETURN(onnx::ModelProto proto, model_to_proto(model));
  std::optional<AtomicFile> data;
  if (options.external_data_threshold > 0) {
    const std::string location = fs::path(path).filename().string() + ".data";
    EDGEMM_ASSIGN_OR_RETURN(data,
                            move_to_external_data(proto, path + ".data", location, options.external_data_threshold));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string bytes, serialize(proto));
  EDGEMM_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path));
  file.write(bytes);
  // The data file and the model that points into it are renamed together: a signal waits.
  auto lock = lock_outputs();
  if (data) EDGEMM_RETURN_IF_ERROR(data->commit());
  const Status written = file.commit();
  if (!written.is_ok() && data) {
    std::error_code ec;
    fs::remove(path + ".data", ec);  // a data file without its model is of no use
  }
  return written;
}

}  // namespace edgemm::ir
