/// Axes given as inputs (ONNX Changelog, opset 13: Split-13 `split`, Squeeze-13 and
/// Unsqueeze-13 `axes`, ReduceSum-13 `axes` plus noop_with_empty_axes; opset 18: the other
/// reductions likewise) back to attributes, Split-18's num_outputs back to sizes, and negative
/// axes (accepted from opset 11: Split-11, Squeeze-11, Unsqueeze-11, Reduce*-11) made
/// non-negative for older targets.
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kNegativeAxesOpset = 11;
constexpr int64_t kNumOutputsOpset = 18;

/// The opset from which `op` takes its axes (Split: its sizes) as input #1, or 0.
int64_t axes_input_since(const std::string& op) {
  if (op == "Split" || op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") return 13;
  return op.rfind("Reduce", 0) == 0 ? 18 : 0;
}

/// A reduction with noop_with_empty_axes and no axes reduces nothing: each element on its own,
/// |x| (L1, L2), x² (SumSquare), log x (LogSum) or x, as ONNX's reference computes it.
Status reduce_nothing(RewriteContext& ctx, const ir::Node& node) {
  const std::string& op = node.op_type;
  const std::string& x = node.inputs[0];
  if (op == "ReduceL1" || op == "ReduceL2") {
    ctx.emit("Abs", node.name, {x}, {node.outputs[0]});
  } else if (op == "ReduceSumSquare") {
    ctx.emit("Mul", node.name, {x, x}, {node.outputs[0]});
  } else if (op == "ReduceLogSum") {
    ctx.emit("Log", node.name, {x}, {node.outputs[0]});
  } else {
    ctx.emit("Identity", node.name, {x}, {node.outputs[0]});
  }
  ctx.count(op + " with no axes to an elementwise op");
  return Status::ok();
}

/// Split-18's num_outputs on an axis whose size is known only at run time: the sizes ceil(d / n)
/// (n - 1 times) and d - (n - 1)·ceil(d / n), computed from Shape(x) as Split-13's `split` input.
Status runtime_split_sizes(RewriteContext& ctx, ir::Node& node, int64_t axis, int64_t n) {
  if (ctx.target_opset() < 13) {
    return cannot_convert(node, ctx.target_opset(),
                          "num_outputs on an axis of unknown size needs Split-13's computed 'split' input");
  }
  const std::string base = node.name.empty() ? "split" : node.name;
  const std::string shape = ctx.fresh_name(base + "/shape"), dim = ctx.fresh_name(base + "/dim");
  const std::string padded = ctx.fresh_name(base + "/padded"), chunk = ctx.fresh_name(base + "/chunk");
  const std::string covered = ctx.fresh_name(base + "/covered"), last = ctx.fresh_name(base + "/last");
  const std::string sizes = ctx.fresh_name(base + "/sizes");
  ctx.emit("Shape", base, {node.inputs[0]}, {shape});
  ctx.emit("Gather", base, {shape, ctx.add_int64s(base + "/axis", {axis})}, {dim});
  const std::string n_minus_1 = ctx.add_int64s(base + "/n_minus_1", {n - 1});
  ctx.emit("Add", base, {dim, n_minus_1}, {padded});
  ctx.emit("Div", base, {padded, ctx.add_int64s(base + "/n", {n})}, {chunk});
  ctx.emit("Mul", base, {chunk, n_minus_1}, {covered});
  ctx.emit("Sub", base, {dim, covered}, {last});
  std::vector<std::string> parts(static_cast<size_t>(n - 1), chunk);
  parts.push_back(last);
  ctx.emit("Concat", base, parts, {sizes}).attributes["axis"] = int_attribute(0);
  node.inputs.resize(2);
  node.inputs[1] = sizes;
  ctx.count("Split num_outputs to sizes computed at run time");
  return Status::ok();
}

/// Split-18's num_outputs → Split-13's equal split when the axis' size is known and divides
/// evenly, explicit sizes (ceil(dim / n), the last smaller) when it is known and does not, and
/// sizes computed at run time when it is unknown.
Status num_outputs_to_sizes(RewriteContext& ctx, ir::Node& node) {
  auto it = node.attributes.find("num_outputs");
  if (it == node.attributes.end()) return Status::ok();
  node.attributes.erase(it);
  const int64_t n = static_cast<int64_t>(node.outputs.size());
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", 0));
  const int64_t rank = ctx.rank(node.inputs[0]);
  if (axis < 0 && rank >= 0) axis += rank;
  if (axis < 0) {
    return cannot_convert(node, ctx.target_opset(), "a negative Split axis needs an input of known rank");
  }
  const int64_t dim = ctx.dim(node.inputs[0], axis);
  if (dim < 0) return runtime_split_sizes(ctx, node, axis, n);
  if (dim % n == 0) {
    ctx.count("Split num_outputs to equal split");
    return Status::ok();
  }
  const int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes(n - 1, chunk);
  sizes.push_back(dim - chunk * (n - 1));
  if (sizes.back() < 0) {
    return cannot_convert(node, ctx.target_opset(),
                          "a dimension of " + std::to_string(dim) + " cannot be cut into " + std::to_string(n) +
                              " chunks of " + std::to_string(chunk));
  }
  node.inputs.resize(2);
  node.inputs[1] = ctx.add_int64s(node.name + "/split", sizes);
  ctx.count("Split num_outputs to sizes");
  return Status::ok();
}

/// Moves input #1 (constant) into the attribute `key`; an absent input leaves no attribute.
Status input_to_attribute(RewriteContext& ctx, ir::Node& node, const std::string& key, int64_t since) {
  if (node.inputs.size() < 2) return Status::ok();
  const std::string input = node.inputs[1];
  node.inputs.resize(1);
  if (input.empty()) return Status::ok();
  auto values = ctx.constant_ints(input);
  if (!values) {
    return cannot_convert(node, ctx.target_opset(),
                          "'" + key + "' is computed at run time (input '" + input + "'); " + node.op_type +
                              " below opset " + std::to_string(since) + " takes it only as a constant attribute");
  }
  if (!values->empty() || key == "split") node.attributes[key] = ints_attribute(std::move(values).value());
  return Status::ok();
}

}  // namespace

Status downgrade_axes(RewriteContext& ctx, const ir::Node& node) {
  ir::Node out = node;
  if (node.op_type == "Split" && ctx.source_opset() >= kNumOutputsOpset && ctx.target_opset() < kNumOutputsOpset) {
    EDGEMM_RETURN_IF_ERROR(num_outputs_to_sizes(ctx, out));
  }
  const int64_t since = axes_input_since(node.op_type);
  const bool moves_input = since > 0 && ctx.source_opset() >= since && ctx.target_opset() < since;
  if (moves_input) {
    EDGEMM_RETURN_IF_ERROR(input_to_attribute(ctx, out, node.op_type == "Split" ? "split" : "axes", since));
    if (node.op_type.rfind("Reduce", 0) == 0) {
      EDGEMM_ASSIGN_OR_RETURN(const int64_t noop, node.attr_int("noop_with_empty_axes", 0));
      out.attributes.erase("noop_with_empty_axes");
      if (noop != 0 && !out.has_attr("axes")) return reduce_nothing(ctx, node);
    }
    ctx.count(node.op_type + " axes input to attribute");
  }
  if (ctx.source_opset() >= kNegativeAxesOpset && ctx.target_opset() < kNegativeAxesOpset) {
    EDGEMM_RETURN_IF_ERROR(make_axes_non_negative(ctx, out));
  }
  if (!moves_input) ctx.count("relabelled");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
