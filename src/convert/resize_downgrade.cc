/// Resize-13 makes `roi` and `scales` optional (ONNX Changelog "Resize-13"; it also drops
/// coordinate_transformation_mode "tf_half_pixel_for_nn", which only matters going up); Resize-11
/// requires both inputs, empty tensors meaning "not given". Resize-10 (scales only, no
/// coordinate modes) is not a target: going below 11 is refused.
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kResizeOpset = 11;
constexpr int64_t kOptionalInputsOpset = 13;

}  // namespace

Status downgrade_resize(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.target_opset() < kResizeOpset) {
    return cannot_convert(
        node, ctx.target_opset(),
        "Resize-10 has only scales and asymmetric coordinates; edgemm converts Resize down to opset 11 only");
  }
  if (ctx.source_opset() < kOptionalInputsOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  ir::Node out = node;
  if (out.inputs.size() < 3) out.inputs.resize(3);
  for (size_t i = 1; i < 3; ++i) {
    if (out.inputs[i].empty()) out.inputs[i] = ctx.add_constant(node.name + "/empty", Tensor::from_floats({0}, {}));
  }
  ctx.count("Resize empty roi/scales inputs");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
