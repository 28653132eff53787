#include "convert/opset_downgrade.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "convert/downgrade_rewrites.h"
#include "convert/onnx_checks.h"
#include "convert/opset_changes.h"
#include "convert/rewrite_context.h"
#include "ir/onnx_next_schemas.h"

namespace edgemm::convert {

namespace {

using Rewriter = std::function<Status(RewriteContext&, const ir::Node&)>;

const Rewriter* family_rewrite(const std::string& op) {
  static const std::unordered_map<std::string, Rewriter> kRewrites = {
      {"LayerNormalization", downgrade_layer_norm},
      {"Split", downgrade_axes},
      {"Squeeze", downgrade_axes},
      {"Unsqueeze", downgrade_axes},
      {"ReduceL1", downgrade_axes},
      {"ReduceL2", downgrade_axes},
      {"ReduceLogSum", downgrade_axes},
      {"ReduceLogSumExp", downgrade_axes},
      {"ReduceMax", downgrade_axes},
      {"ReduceMean", downgrade_axes},
      {"ReduceMin", downgrade_axes},
      {"ReduceProd", downgrade_axes},
      {"ReduceSum", downgrade_axes},
      {"ReduceSumSquare", downgrade_axes},
      {"Softmax", downgrade_softmax},
      {"LogSoftmax", downgrade_softmax},
      {"Hardmax", downgrade_softmax},
      {"Clip", downgrade_clip},
      {"Resize", downgrade_resize},
      {"Slice", downgrade_slice},
      {"Pad", downgrade_pad},
      {"Mish", downgrade_mish},
      {"Gelu", downgrade_gelu},
      {"GroupNormalization", downgrade_group_norm},
      {"GridSample", downgrade_grid_sample},
      {"DFT", downgrade_dft},
  };
  auto it = kRewrites.find(op);
  return it == kRewrites.end() ? nullptr : &it->second;
}

/// The versions of `op` above `target` up to the one in force at `source`, newest first, and
/// whether the op exists at `target` at all.
struct VersionSpan {
  std::vector<int> versions;
  bool exists_at_target = true;
  int introduced = 0;
};

Expected<VersionSpan> version_span(const ir::Node& node, int64_t source, int64_t target) {
  VersionSpan span;
  auto walk = [&](const onnx::OpSchema* schema, const char* domain) {
    while (schema != nullptr && schema->since_version() > target) {
      span.versions.push_back(schema->since_version());
      span.introduced = schema->since_version();
      schema = onnx::OpSchemaRegistry::Schema(node.op_type, schema->since_version() - 1, domain);
    }
    return schema;
  };
  // Versions after opset 17 are the schemas edgemm registers under ir::kNextDomain.
  if (source > ir::kLastLibOnnxOpset) {
    ir::register_onnx_next_schemas();
    walk(onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(source), ir::kNextDomain), ir::kNextDomain);
  }
  const int64_t older = std::min(source, ir::kLastLibOnnxOpset);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(older), "");
  if (schema == nullptr && span.versions.empty()) {
    return cannot_convert(node, target,
                          "'" + node.op_type + "' is not an ai.onnx op at opset " + std::to_string(source));
  }
  span.exists_at_target = walk(schema, "") != nullptr;
  return span;
}

/// "tensor(float)" style name of a dtype, as ONNX type constraints list them.
std::string onnx_type_string(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "tensor(float)";
    case DataType::kFloat64:
      return "tensor(double)";
    case DataType::kFloat16:
      return "tensor(float16)";
    case DataType::kBFloat16:
      return "tensor(bfloat16)";
    case DataType::kBool:
      return "tensor(bool)";
    case DataType::kString:
      return "tensor(string)";
    default:
      return "tensor(" + std::string(dtype_name(dtype)) + ")";
  }
}

/// Checks the node's input dtypes against the type constraints of its op at the target.
Status check_input_types(const RewriteContext& ctx, const ir::Node& node) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(ctx.target_opset()), "");
  const auto& formal = schema->inputs();
  for (size_t i = 0; i < node.inputs.size() && !formal.empty(); ++i) {
    const DataType dtype = ctx.dtype(node.inputs[i]);
    if (node.inputs[i].empty() || dtype == DataType::kUndefined) continue;
    const auto& param = formal[std::min(i, formal.size() - 1)];
    const std::string wanted = onnx_type_string(dtype);
    bool allowed = false;
    for (const auto* type : param.GetTypes()) allowed = allowed || *type == wanted;
    if (!allowed) {
      return cannot_convert(node, ctx.target_opset(),
                            "input '" + node.inputs[i] + "' is " + wanted + ", which " + node.op_type + "-" +
                                std::to_string(schema->since_version()) + " does not accept");
    }
  }
  return Status::ok();
}

/// The (attribute, value) pairs of an OpChange detail "a=v;b=w".
std::vector<std::pair<std::string, std::string>> attribute_rules(const char* detail) {
  std::vector<std::pair<std::string, std::string>> rules;
  std::istringstream list(detail);
  std::string item;
  while (std::getline(list, item, ';')) {
    const auto eq = item.find('=');
    rules.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return rules;
}

/// kDefaultAttrs: every listed attribute absent or at its default, then dropped.
Status drop_default_attrs(const OpChange& change, ir::Node& node, int64_t target) {
  for (const auto& [key, fallback] : attribute_rules(change.detail)) {
    auto it = node.attributes.find(key);
    if (it == node.attributes.end()) continue;
    const ir::Attribute& attr = it->second;
    const bool all_ones = attr.kind == ir::Attribute::Kind::kInts &&
                          std::all_of(attr.ints.begin(), attr.ints.end(), [](int64_t v) { return v == 1; });
    const bool at_default =
        !fallback.empty() &&
        ((attr.kind == ir::Attribute::Kind::kInt && std::to_string(attr.i) == fallback) ||
         (attr.kind == ir::Attribute::Kind::kString && attr.s == fallback) || (fallback == "ones" && all_ones));
    if (!at_default) {
      return cannot_convert(node, target,
                            "attribute '" + key + "' (added in " + node.op_type + "-" + std::to_string(change.version) +
                                ") is set to a value older versions cannot express");
    }
    node.attributes.erase(it);
  }
  return Status::ok();
}

/// kAttrValues: every listed attribute absent or one of its listed values (kept).
Status check_attr_values(const OpChange& change, const ir::Node& node, int64_t target) {
  for (const auto& [key, values] : attribute_rules(change.detail)) {
    auto it = node.attributes.find(key);
    if (it == node.attributes.end()) continue;
    const std::string allowed = "|" + values + "|";
    if (allowed.find("|" + it->second.s + "|") == std::string::npos) {
      return cannot_convert(
          node, target,
          key + " '" + it->second.s + "' exists only from " + node.op_type + "-" + std::to_string(change.version));
    }
  }
  return Status::ok();
}

/// kGatherIndices: Gather below 11 takes only non-negative indices.
Status check_gather_indices(const RewriteContext& ctx, const ir::Node& node) {
  auto indices = ctx.constant_ints(node.inputs.size() > 1 ? node.inputs[1] : "");
  if (!indices) {
    return cannot_convert(
        node, ctx.target_opset(),
        "Gather below opset 11 needs indices known to be non-negative; these are computed at run time");
  }
  for (int64_t v : *indices) {
    if (v < 0) return cannot_convert(node, ctx.target_opset(), "negative Gather indices exist only from opset 11");
  }
  return Status::ok();
}

Status apply_change(RewriteContext& ctx, const OpChange& change, ir::Node& node) {
  switch (change.kind) {
    case ChangeKind::kTypes:
      return Status::ok();
    case ChangeKind::kDefaultAttrs:
      return drop_default_attrs(change, node, ctx.target_opset());
    case ChangeKind::kAttrValues:
      return check_attr_values(change, node, ctx.target_opset());
    case ChangeKind::kSingleInput:
      if (node.inputs.size() > 1) {
        return cannot_convert(node, ctx.target_opset(),
                              "inputs after the first (" + std::string(change.detail) + ") exist only from " +
                                  node.op_type + "-" + std::to_string(change.version));
      }
      return Status::ok();
    case ChangeKind::kNegativeAxes:
      return make_axes_non_negative(ctx, node);
    case ChangeKind::kGatherIndices:
      EDGEMM_RETURN_IF_ERROR(make_axes_non_negative(ctx, node));
      return check_gather_indices(ctx, node);
    case ChangeKind::kRewrite:
      break;
  }
  return make_error(StatusCode::kInternal, "rewrite rows are dispatched before apply_change");
}

Status downgrade_node(RewriteContext& ctx, const ir::Node& node) {
  if (!node.domain.empty())
    return cannot_convert(node, ctx.target_opset(), "domain '" + node.domain + "' is not ai.onnx");
  for (const auto& [key, attr] : node.attributes) {
    if (attr.kind == ir::Attribute::Kind::kGraph) {
      return cannot_convert(node, ctx.target_opset(),
                            "nodes with subgraphs (attribute '" + key + "') are not converted down");
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(VersionSpan span, version_span(node, ctx.source_opset(), ctx.target_opset()));
  if (span.versions.empty()) {
    ctx.emit(node);
    return Status::ok();
  }
  const Rewriter* rewrite = family_rewrite(node.op_type);
  if (rewrite != nullptr) return (*rewrite)(ctx, node);
  if (!span.exists_at_target) {
    return cannot_convert(node, ctx.target_opset(),
                          node.op_type + " exists only from opset " + std::to_string(span.introduced) +
                              " and edgemm has no rewrite for it");
  }
  ir::Node relabelled = node;
  for (int version : span.versions) {
    const OpChange* change = find_op_change(node.op_type, version);
    if (change == nullptr) {
      return cannot_convert(
          node, ctx.target_opset(),
          node.op_type + "-" + std::to_string(version) +
              " changed from the previous version and edgemm has no rule to express it at the target");
    }
    EDGEMM_RETURN_IF_ERROR(apply_change(ctx, *change, relabelled));
  }
  EDGEMM_RETURN_IF_ERROR(check_input_types(ctx, relabelled));
  ctx.count("relabelled");
  ctx.emit(std::move(relabelled));
  return Status::ok();
}

/// Constant nodes become initializers so that rewrites see axes, bounds and sizes as constants.
void constants_to_initializers(ir::Graph& graph) {
  std::vector<ir::Node> kept;
  for (ir::Node& node : graph.nodes) {
    const Tensor* value = node.domain.empty() && node.op_type == "Constant" ? node.attr_tensor("value") : nullptr;
    if (value != nullptr && node.outputs.size() == 1) {
      graph.initializers[node.outputs[0]] = *value;
    } else {
      kept.push_back(std::move(node));
    }
  }
  graph.nodes = std::move(kept);
}

/// Drops initializers no node reads any more (axes and bounds that became attributes).
void drop_unread_initializers(ir::Graph& graph) {
  std::unordered_set<std::string> read;
  for (const ir::Node& node : graph.nodes) read.insert(node.inputs.begin(), node.inputs.end());
  for (const ValueInfo& output : graph.outputs) read.insert(output.name);
  std::erase_if(graph.initializers, [&](const auto& entry) { return read.count(entry.first) == 0; });
}

}  // namespace

Status downgrade_opset(ir::Model& model, int64_t target, std::map<std::string, int>& counts) {
  const int64_t source = model.opset("");
  ir::Graph graph = model.graph;
  constants_to_initializers(graph);
  RewriteContext ctx(graph, source, target);
  for (const ir::Node& node : graph.nodes) EDGEMM_RETURN_IF_ERROR(downgrade_node(ctx, node));
  ctx.finish();
  drop_unread_initializers(graph);
  model.graph = std::move(graph);
  model.opsets[""] = target;
  // A runtime of the target opset's time may not read a newer IR version (IR 3 lists the
  // initializers among the graph inputs: ir::export_onnx does that).
  const int64_t ir = ir_version_for_opset(target);
  model.ir_version = model.ir_version > 0 ? std::min(model.ir_version, ir) : ir;
  for (const auto& [name, n] : ctx.counts()) counts[name] += n;
  return Status::ok();
}

}  // namespace edgemm::convert
