/// LayerNormalization-17 below opset 17 (ONNX Operators.md, LayerNormalization-17 and its
/// function body): with axes = [axis, ..., rank-1],
///   Mean = ReduceMean(X, axes, keepdims=1), D = X - Mean, Var = ReduceMean(D^2, axes),
///   InvStdDev = 1 / Sqrt(Var + epsilon), Y = D / Sqrt(Var + epsilon) * Scale + B,
/// computed in stash_type (float32 by default; float32 inputs need no Cast).
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

/// The normalized axes [axis, ..., rank-1]: negative (counted from the end) when the rank is
/// unknown and the target accepts negative axes (ReduceMean-11), else non-negative.
Expected<std::vector<int64_t>> normalized_axes(const RewriteContext& ctx, const ir::Node& node, int64_t axis) {
  const int64_t rank = ctx.rank(node.inputs[0]);
  std::vector<int64_t> axes;
  if (rank >= 0) {
    const int64_t first = axis < 0 ? axis + rank : axis;
    if (first < 0 || first >= rank)
      return cannot_convert(node, ctx.target_opset(), "axis is out of range for the input's rank");
    for (int64_t a = first; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  if (axis >= 0 || ctx.target_opset() < 11) {
    return cannot_convert(node, ctx.target_opset(),
                          "the decomposition needs the input's rank, which is unknown (try --fix-shape)");
  }
  for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  return axes;
}

/// "Cast" to `dtype` of `value` when its dtype differs; returns the value to use.
std::string cast_if_needed(RewriteContext& ctx, const std::string& base, const std::string& value, DataType from,
                           DataType to) {
  if (from == to) return value;
  const std::string out = ctx.fresh_name(base + "/Cast_output");
  ir::Node& cast = ctx.emit("Cast", base, {value}, {out});
  cast.attributes["to"] = int_attribute(static_cast<int64_t>(to));
  return out;
}

}  // namespace

Status downgrade_layer_norm(RewriteContext& ctx, const ir::Node& node) {
  if (node.inputs.size() < 2) return cannot_convert(node, ctx.target_opset(), "LayerNormalization needs X and Scale");
  EDGEMM_ASSIGN_OR_RETURN(const int64_t axis, node.attr_int("axis", -1));
  EDGEMM_ASSIGN_OR_RETURN(const float epsilon, node.attr_float("epsilon", 1e-5f));
  EDGEMM_ASSIGN_OR_RETURN(const int64_t stash, node.attr_int("stash_type", 1));
  const DataType dtype = ctx.dtype(node.inputs[0]);
  if (dtype == DataType::kUndefined) {
    return cannot_convert(node, ctx.target_opset(), "the input's dtype is unknown, so the constants cannot be typed");
  }
  const DataType compute = stash == 1 ? DataType::kFloat32 : dtype;
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, normalized_axes(ctx, node, axis));
  const std::string& base = node.name;
  auto value = [&](const std::string& what) { return ctx.fresh_name(base + "/" + what + "_output"); };

  const std::string x = cast_if_needed(ctx, base, node.inputs[0], dtype, compute);
  const std::string mean = node.outputs.size() > 1 && !node.outputs[1].empty() ? node.outputs[1] : value("ReduceMean");
  ctx.emit("ReduceMean", base, {x}, {mean}).attributes["axes"] = ints_attribute(axes);
  const std::string centered = value("Sub");
  ctx.emit("Sub", base, {x, mean}, {centered});
  EDGEMM_ASSIGN_OR_RETURN(const std::string two, ctx.add_float_scalar(base + "/two", 2.0, compute));
  const std::string squared = value("Pow");
  ctx.emit("Pow", base, {centered, two}, {squared});
  const std::string variance = value("ReduceMean_1");
  ctx.emit("ReduceMean", base, {squared}, {variance}).attributes["axes"] = ints_attribute(axes);
  EDGEMM_ASSIGN_OR_RETURN(const std::string eps, ctx.add_float_scalar(base + "/epsilon", epsilon, compute));
  const std::string shifted = value("Add");
  ctx.emit("Add", base, {variance, eps}, {shifted});
  const std::string stddev = value("Sqrt");
  ctx.emit("Sqrt", base, {shifted}, {stddev});
  if (node.outputs.size() > 2 && !node.outputs[2].empty()) ctx.emit("Reciprocal", base, {stddev}, {node.outputs[2]});
  const std::string normalized = value("Div");
  ctx.emit("Div", base, {centered, stddev}, {normalized});

  const std::string typed = cast_if_needed(ctx, base, normalized, compute, dtype);
  const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  const std::string scaled = has_bias ? value("Mul") : node.outputs[0];
  ctx.emit("Mul", base, {typed, node.inputs[1]}, {scaled});
  if (has_bias) ctx.emit("Add", base, {scaled, node.inputs[2]}, {node.outputs[0]});
  ctx.count("LayerNormalization-17 decomposed");
  return Status::ok();
}

}  // namespace edgemm::convert
