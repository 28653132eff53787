/// Resize-18 adds antialias, axes and keep_aspect_ratio_policy, Resize-19 the coordinate mode
/// "half_pixel_symmetric": going below them needs each at a value Resize-13 has. Resize-13 makes
/// `roi` and `scales` optional (ONNX Changelog "Resize-13"; it also drops
/// coordinate_transformation_mode "tf_half_pixel_for_nn", which only matters going up); Resize-11
/// requires both inputs, empty tensors meaning "not given". Resize-10 (scales only, no
/// coordinate modes) is not a target: going below 11 is refused.
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kResizeOpset = 11;
constexpr int64_t kOptionalInputsOpset = 13;
constexpr int64_t kAntialiasOpset = 18;
constexpr int64_t kSymmetricOpset = 19;

/// Resize-18's antialias, axes and keep_aspect_ratio_policy, and Resize-19's coordinate mode
/// "half_pixel_symmetric", when the node uses them; else drops the attributes at their defaults.
Status drop_resize18_attributes(const RewriteContext& ctx, ir::Node& node) {
  EDGEMM_ASSIGN_OR_RETURN(const int64_t antialias, node.attr_int("antialias", 0));
  EDGEMM_ASSIGN_OR_RETURN(const std::string policy, node.attr_string("keep_aspect_ratio_policy", "stretch"));
  EDGEMM_ASSIGN_OR_RETURN(const std::string mode, node.attr_string("coordinate_transformation_mode", "half_pixel"));
  EDGEMM_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, node.attr_ints("axes"));
  const int64_t rank = ctx.rank(node.inputs[0]);
  bool every_axis = axes.empty() || static_cast<int64_t>(axes.size()) == rank;
  for (size_t i = 0; i < axes.size() && every_axis; ++i) every_axis = axes[i] == static_cast<int64_t>(i);
  std::string why;
  if (antialias != 0) why = "antialias = 1";
  if (policy != "stretch") why = "keep_aspect_ratio_policy '" + policy + "'";
  if (!every_axis) why = "'axes' covering only some axes";
  if (mode == "half_pixel_symmetric" && ctx.target_opset() < kSymmetricOpset) {
    return cannot_convert(node, ctx.target_opset(),
                          "coordinate mode 'half_pixel_symmetric' exists only from Resize-19");
  }
  if (!why.empty()) return cannot_convert(node, ctx.target_opset(), why + " exists only from Resize-18");
  for (const char* key : {"antialias", "keep_aspect_ratio_policy", "axes"}) node.attributes.erase(key);
  return Status::ok();
}

}  // namespace

Status downgrade_resize(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.target_opset() < kResizeOpset) {
    return cannot_convert(
        node, ctx.target_opset(),
        "Resize-10 has only scales and asymmetric coordinates; edgemm converts Resize down to opset 11 only");
  }
  ir::Node out = node;
  if (ctx.source_opset() >= kAntialiasOpset && ctx.target_opset() < kAntialiasOpset) {
    EDGEMM_RETURN_IF_ERROR(drop_resize18_attributes(ctx, out));
  }
  if (ctx.source_opset() < kOptionalInputsOpset || ctx.target_opset() >= kOptionalInputsOpset) {
    ctx.count("relabelled");
    ctx.emit(std::move(out));
    return Status::ok();
  }
  if (out.inputs.size() < 3) out.inputs.resize(3);
  for (size_t i = 1; i < 3; ++i) {
    if (out.inputs[i].empty()) out.inputs[i] = ctx.add_constant(node.name + "/empty", Tensor::from_floats({0}, {}));
  }
  ctx.count("Resize empty roi/scales inputs");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
