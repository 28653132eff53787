/// Slice-10 takes starts, ends, axes and steps as inputs (ONNX Changelog "Slice-10"); Slice-1
/// takes starts, ends and axes as attributes and has no steps. Slice-11 allows negative axes;
/// Slice-13 adds bfloat16. Below opset 10 the inputs must be constants and every step 1; below
/// 11 negative axes are made non-negative with the input's rank.
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kInputsOpset = 10;
constexpr int64_t kNegativeAxesOpset = 11;

/// Non-negative axes, or an error when one is negative and the rank unknown.
Expected<std::vector<int64_t>> non_negative_axes(const RewriteContext& ctx, const ir::Node& node,
                                                 std::vector<int64_t> axes) {
  const int64_t rank = ctx.rank(node.inputs[0]);
  for (int64_t& axis : axes) {
    if (axis >= 0) continue;
    if (rank < 0) {
      return cannot_convert(node, ctx.target_opset(),
                            "negative Slice axes exist only from opset 11 and the input's rank is unknown");
    }
    axis += rank;
  }
  return axes;
}

/// The constant int64 values of input `index`, or an error naming it.
Expected<std::vector<int64_t>> constant_input(const RewriteContext& ctx, const ir::Node& node, size_t index,
                                              const char* what) {
  auto values = ctx.constant_ints(node.inputs[index]);
  if (!values) {
    return cannot_convert(node, ctx.target_opset(),
                          std::string("'") + what +
                              "' is computed at run time; Slice below opset 10 takes it only as "
                              "a constant attribute");
  }
  return std::move(values).value();
}

/// Opset ≥ 10 → 10: only the axes sign changes.
Status downgrade_axes_input(RewriteContext& ctx, const ir::Node& node) {
  ir::Node out = node;
  if (node.inputs.size() > 3 && !node.inputs[3].empty()) {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constant_input(ctx, node, 3, "axes"));
    EDGEMM_ASSIGN_OR_RETURN(axes, non_negative_axes(ctx, node, axes));
    out.inputs[3] = ctx.add_int64s(node.name + "/axes", axes);
  }
  ctx.count("relabelled");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace

Status downgrade_slice(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.source_opset() < kInputsOpset || ctx.target_opset() >= kNegativeAxesOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  if (ctx.target_opset() >= kInputsOpset) return downgrade_axes_input(ctx, node);
  if (node.inputs.size() < 3) return cannot_convert(node, ctx.target_opset(), "Slice-10 needs starts and ends");
  ir::Node out = node;
  out.inputs.resize(1);
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> starts, constant_input(ctx, node, 1, "starts"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> ends, constant_input(ctx, node, 2, "ends"));
  out.attributes["starts"] = ints_attribute(starts);
  out.attributes["ends"] = ints_attribute(ends);
  if (node.inputs.size() > 3 && !node.inputs[3].empty()) {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constant_input(ctx, node, 3, "axes"));
    EDGEMM_ASSIGN_OR_RETURN(axes, non_negative_axes(ctx, node, axes));
    out.attributes["axes"] = ints_attribute(axes);
  }
  if (node.inputs.size() > 4 && !node.inputs[4].empty()) {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> steps, constant_input(ctx, node, 4, "steps"));
    for (int64_t step : steps) {
      if (step != 1)
        return cannot_convert(node, ctx.target_opset(), "Slice steps other than 1 exist only from opset 10");
    }
  }
  ctx.count("Slice inputs to attributes");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
