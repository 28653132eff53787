/// Axes given as inputs (ONNX Changelog, opset 13: Split-13 `split`, Squeeze-13 and
/// Unsqueeze-13 `axes`, ReduceSum-13 `axes` plus noop_with_empty_axes) back to the attributes of
/// the opset 11 versions, and negative axes (accepted from opset 11: Split-11, Squeeze-11,
/// Unsqueeze-11, Reduce*-11) made non-negative for older targets.
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kAxesAsInputOpset = 13;  // Split, Squeeze, Unsqueeze, ReduceSum (others: 18)
constexpr int64_t kNegativeAxesOpset = 11;

bool axes_input_op(const std::string& op) {
  return op == "Split" || op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum";
}

/// Moves input #1 (constant) into the attribute `key`; an absent input leaves no attribute.
Status input_to_attribute(RewriteContext& ctx, ir::Node& node, const std::string& key) {
  if (node.inputs.size() < 2) return Status::ok();
  const std::string input = node.inputs[1];
  node.inputs.resize(1);
  if (input.empty()) return Status::ok();
  auto values = ctx.constant_ints(input);
  if (!values) {
    return cannot_convert(node, ctx.target_opset(),
                          "'" + key + "' is computed at run time (input '" + input + "'); " + node.op_type +
                              " below opset " + std::to_string(kAxesAsInputOpset) +
                              " takes it only as a constant attribute");
  }
  if (!values->empty() || key == "split") node.attributes[key] = ints_attribute(std::move(values).value());
  return Status::ok();
}

}  // namespace

Status downgrade_axes(RewriteContext& ctx, const ir::Node& node) {
  ir::Node out = node;
  const bool moves_input =
      axes_input_op(node.op_type) && ctx.source_opset() >= kAxesAsInputOpset && ctx.target_opset() < kAxesAsInputOpset;
  if (moves_input) {
    EDGEMM_RETURN_IF_ERROR(input_to_attribute(ctx, out, node.op_type == "Split" ? "split" : "axes"));
    if (node.op_type == "ReduceSum") {
      EDGEMM_ASSIGN_OR_RETURN(const int64_t noop, node.attr_int("noop_with_empty_axes", 0));
      out.attributes.erase("noop_with_empty_axes");
      if (noop != 0 && !out.has_attr("axes")) {
        ctx.emit("Identity", node.name, {node.inputs[0]}, {node.outputs[0]});
        ctx.count("ReduceSum with no axes to Identity");
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
