/// Softmax / LogSoftmax / Hardmax one-axis semantics (opset 13, ONNX Changelog "Softmax-13")
/// back to the coerced-2-D semantics of opsets 1–12: the input is seen as
/// [prod(d_0..d_{axis-1}), prod(d_axis..d_{r-1})] and normalized along the second axis. With
/// axis = r-1 both agree, so the node is relabelled; any other axis is first swapped with the
/// last one by a Transpose (its own inverse), normalized there and swapped back. Below opset 11
/// the axis must be non-negative (Softmax-11 allowed negative axes).
#include <numeric>

#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kOneAxisOpset = 13;
constexpr int64_t kNegativeAxisOpset = 11;

/// Opset 11/12 → older: only the axis sign changes.
Status downgrade_negative_axis(RewriteContext& ctx, const ir::Node& node) {
  ir::Node out = node;
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", 1));
  if (axis < 0) {
    const int64_t rank = ctx.rank(node.inputs[0]);
    if (rank < 0) {
      return cannot_convert(
          node, ctx.target_opset(),
          "a negative axis exists only from opset 11 and the input's rank is unknown (try --fix-shape)");
    }
    out.attributes["axis"] = int_attribute(axis + rank);
  }
  ctx.count("relabelled");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace

Status downgrade_softmax(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.source_opset() < kOneAxisOpset || ctx.target_opset() >= kOneAxisOpset) {
    return downgrade_negative_axis(ctx, node);
  }
  EDGEMM_ASSIGN_OR_RETURN(const int64_t axis, node.attr_int("axis", -1));
  const int64_t rank = ctx.rank(node.inputs[0]);
  if (rank < 0) {
    if (axis != -1 || ctx.target_opset() < kNegativeAxisOpset) {
      return cannot_convert(
          node, ctx.target_opset(),
          node.op_type + "-13 on a non-last axis needs the input's rank, which is unknown (try --fix-shape)");
    }
    ctx.count(node.op_type + " on the last axis relabelled");
    ctx.emit(node);  // axis -1: the 2-D coercion puts every axis but the last into rows
    return Status::ok();
  }
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return cannot_convert(node, ctx.target_opset(), "axis is out of range for the input's rank");
  ir::Node op = node;
  op.attributes["axis"] = int_attribute(rank - 1);
  if (a == rank - 1) {
    ctx.count(node.op_type + " on the last axis relabelled");
    ctx.emit(std::move(op));
    return Status::ok();
  }
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(rank - 1)]);
  const std::string moved = ctx.fresh_name(node.name + "/Transpose_output");
  const std::string normalized = ctx.fresh_name(node.name + "/" + node.op_type + "_output");
  ctx.emit("Transpose", node.name, {node.inputs[0]}, {moved}).attributes["perm"] = ints_attribute(perm);
  op.inputs = {moved};
  op.outputs = {normalized};
  ctx.emit(std::move(op));
  ctx.emit("Transpose", node.name + "/back", {normalized}, {node.outputs[0]}).attributes["perm"] = ints_attribute(perm);
  ctx.count(node.op_type + " axis moved last by Transpose");
  return Status::ok();
}

}  // namespace edgemm::convert
