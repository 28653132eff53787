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

/// Split-18's num_outputs → explicit sizes (ceil(dim / n), the last smaller) when the axis'
/// size is known and does not divide evenly; otherwise Split-13's equal split says the same
/// (a dimension that turns out uneven at run time is then an error, not a wrong answer).
Status num_outputs_to_sizes(RewriteContext& ctx, ir::Node& node) {
  auto it = node.attributes.find("num_outputs");
  if (it == node.attributes.end()) return Status::ok();
  node.attributes.erase(it);
  const int64_t n = static_cast<int64_t>(node.outputs.size());
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", 0));
  const int64_t rank = ctx.rank(node.inputs[0]);
  if (axis < 0 && rank >= 0) axis += rank;
  const int64_t dim = axis >= 0 ? ctx.dim(node.inputs[0], axis) : -1;
  if (dim < 0 || dim % n == 0) {
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
      if (noop != 0 && !out.has_attr("axes")) {
        ctx.emit("Identity", node.name, {node.inputs[0]}, {node.outputs[0]});
        ctx.count(node.op_type + " with no axes to Identity");
        return Status::ok();
      }
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
