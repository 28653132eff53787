/// Rewrites of ops that changed or appeared in opsets 18–21 (ONNX Operators.md, Changelog.md)
/// into forms opset 17 has (downgrade_rewrites.h). New ops with a function body in the spec
/// (Mish-18, Gelu-20, GroupNormalization-18/21) become that body; changed ones (Pad-18,
/// GridSample-20, DFT-20) go back to their previous signature when the node's use fits it.
#include <cmath>

#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kPadAxesOpset = 18;
constexpr int64_t kPadWrapOpset = 19;
constexpr int64_t kPadInputsOpset = 11;
constexpr int64_t kGridSampleOpset = 16;
constexpr int64_t kGridSampleNdOpset = 20;
constexpr int64_t kDftOpset = 17;
constexpr int64_t kDftAxisInputOpset = 20;
constexpr int64_t kGroupNormPerChannelOpset = 21;

/// The node's input `i`, or "" when absent.
std::string input_or_empty(const ir::Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : ""; }

}  // namespace

Status downgrade_pad(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.target_opset() < kPadInputsOpset) {
    return cannot_convert(node, ctx.target_opset(),
                          "Pad below opset 11 takes pads as an attribute; edgemm converts Pad down to opset 11");
  }
  EDGEMM_ASSIGN_OR_RETURN(const std::string mode, node.attr_string("mode", "constant"));
  if (mode == "wrap" && ctx.target_opset() < kPadWrapOpset) {
    return cannot_convert(node, ctx.target_opset(), "Pad mode 'wrap' exists only from Pad-19");
  }
  const std::string axes_name = input_or_empty(node, 3);
  if (axes_name.empty() || ctx.target_opset() >= kPadAxesOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  auto axes = ctx.constant_ints(axes_name);
  auto pads = ctx.constant_ints(input_or_empty(node, 1));
  const int64_t rank = ctx.rank(node.inputs[0]);
  if (!axes || !pads || rank < 0) {
    return cannot_convert(node, ctx.target_opset(),
                          "Pad-18's axes need constant 'axes' and 'pads' inputs and an input of known rank to be "
                          "spelled out for every axis");
  }
  if (pads->size() != 2 * axes->size()) {
    return cannot_convert(
        node, ctx.target_opset(),
        "'pads' has " + std::to_string(pads->size()) + " values for " + std::to_string(axes->size()) + " axes");
  }
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (a < 0 || a >= rank) {
      return cannot_convert(node, ctx.target_opset(),
                            "axis " + std::to_string((*axes)[i]) + " is out of range for rank " + std::to_string(rank));
    }
    full[a] = (*pads)[i];
    full[a + rank] = (*pads)[i + axes->size()];
  }
  ir::Node out = node;
  out.inputs.resize(3);
  out.inputs[1] = ctx.add_int64s(node.name + "/pads", full);
  while (!out.inputs.empty() && out.inputs.back().empty()) out.inputs.pop_back();
  ctx.count("Pad axes to pads for every axis");
  ctx.emit(std::move(out));
  return Status::ok();
}

Status downgrade_mish(RewriteContext& ctx, const ir::Node& node) {
  const std::string softplus = ctx.fresh_name(node.name + "/softplus");
  const std::string tanh = ctx.fresh_name(node.name + "/tanh");
  ctx.emit("Softplus", node.name, {node.inputs[0]}, {softplus});
  ctx.emit("Tanh", node.name, {softplus}, {tanh});
  ctx.emit("Mul", node.name, {node.inputs[0], tanh}, {node.outputs[0]});
  ctx.count("Mish to Softplus, Tanh, Mul");
  return Status::ok();
}

Status downgrade_gelu(RewriteContext& ctx, const ir::Node& node) {
  EDGEMM_ASSIGN_OR_RETURN(const std::string approximate, node.attr_string("approximate", "none"));
  const std::string& x = node.inputs[0];
  const DataType dtype = ctx.dtype(x);
  auto constant = [&](const std::string& hint, double value) -> Expected<std::string> {
    auto name = ctx.add_float_scalar(node.name + "/" + hint, value, dtype);
    if (!name) return cannot_convert(node, ctx.target_opset(), "Gelu of " + std::string(dtype_name(dtype)) + " input");
    return name;
  };
  EDGEMM_ASSIGN_OR_RETURN(const std::string half, constant("half", 0.5));
  EDGEMM_ASSIGN_OR_RETURN(const std::string one, constant("one", 1.0));
  const std::string inner = ctx.fresh_name(node.name + "/inner");
  const std::string curve = ctx.fresh_name(node.name + "/curve");
  if (approximate == "tanh") {
    EDGEMM_ASSIGN_OR_RETURN(const std::string cubic_coefficient, constant("c", 0.044715));
    EDGEMM_ASSIGN_OR_RETURN(const std::string scale, constant("sqrt_2_over_pi", std::sqrt(2.0 / M_PI)));
    const std::string x2 = ctx.fresh_name(node.name + "/x2"), x3 = ctx.fresh_name(node.name + "/x3");
    const std::string cx3 = ctx.fresh_name(node.name + "/cx3"), sum = ctx.fresh_name(node.name + "/sum");
    ctx.emit("Mul", node.name, {x, x}, {x2});
    ctx.emit("Mul", node.name, {x2, x}, {x3});
    ctx.emit("Mul", node.name, {x3, cubic_coefficient}, {cx3});
    ctx.emit("Add", node.name, {x, cx3}, {sum});
    ctx.emit("Mul", node.name, {sum, scale}, {inner});
    ctx.emit("Tanh", node.name, {inner}, {curve});
  } else if (approximate == "none") {
    EDGEMM_ASSIGN_OR_RETURN(const std::string inv_sqrt2, constant("inv_sqrt2", 1.0 / std::sqrt(2.0)));
    ctx.emit("Mul", node.name, {x, inv_sqrt2}, {inner});
    ctx.emit("Erf", node.name, {inner}, {curve});
  } else {
    return cannot_convert(node, ctx.target_opset(), "approximate '" + approximate + "' is neither 'none' nor 'tanh'");
  }
  const std::string shifted = ctx.fresh_name(node.name + "/shifted"), half_x = ctx.fresh_name(node.name + "/half_x");
  ctx.emit("Add", node.name, {curve, one}, {shifted});
  ctx.emit("Mul", node.name, {x, half}, {half_x});
  ctx.emit("Mul", node.name, {half_x, shifted}, {node.outputs[0]});
  ctx.count("Gelu to its function body");
  return Status::ok();
}

Status downgrade_group_norm(RewriteContext& ctx, const ir::Node& node) {
  const std::string& x = node.inputs[0];
  EDGEMM_ASSIGN_OR_RETURN(const int64_t groups, node.attr_int("num_groups", 0));
  EDGEMM_ASSIGN_OR_RETURN(const float epsilon, node.attr_float("epsilon", 1e-5f));
  if (groups < 1) return cannot_convert(node, ctx.target_opset(), "num_groups must be positive");
  if (ctx.dtype(x) != DataType::kFloat32) {
    return cannot_convert(node, ctx.target_opset(), "GroupNormalization is decomposed for float32 inputs only");
  }
  const bool per_channel = ctx.source_opset() >= kGroupNormPerChannelOpset;
  const int64_t rank = ctx.rank(x);
  if (per_channel && rank < 3) {
    return cannot_convert(node, ctx.target_opset(), "the per-channel scale needs an input of known rank >= 3");
  }
  const std::string grouped = ctx.fresh_name(node.name + "/grouped");
  const std::string normalized = ctx.fresh_name(node.name + "/normalized");
  const std::string shape = ctx.fresh_name(node.name + "/shape");
  ctx.emit("Reshape", node.name, {x, ctx.add_int64s(node.name + "/group_shape", {0, groups, -1})}, {grouped});
  std::string scale = node.inputs[1], bias = node.inputs[2];
  if (per_channel) {  // normalize with unit scale, then apply the per-channel affine
    scale = ctx.add_constant(node.name + "/ones", Tensor::from_floats({groups}, std::vector<float>(groups, 1.0f)));
    bias = ctx.add_constant(node.name + "/zeros", Tensor::from_floats({groups}, std::vector<float>(groups, 0.0f)));
  }
  ctx.emit("InstanceNormalization", node.name, {grouped, scale, bias}, {normalized}).attributes["epsilon"] =
      float_attribute(epsilon);
  ctx.emit("Shape", node.name, {x}, {shape});
  if (!per_channel) {
    ctx.emit("Reshape", node.name, {normalized, shape}, {node.outputs[0]});
  } else {
    std::vector<int64_t> channel_shape(rank, 1);
    channel_shape[1] = -1;
    const std::string restored = ctx.fresh_name(node.name + "/restored");
    const std::string scaled = ctx.fresh_name(node.name + "/scaled");
    const std::string scale_c = ctx.fresh_name(node.name + "/scale_c"), bias_c = ctx.fresh_name(node.name + "/bias_c");
    const std::string channel = ctx.add_int64s(node.name + "/channel_shape", channel_shape);
    ctx.emit("Reshape", node.name, {normalized, shape}, {restored});
    ctx.emit("Reshape", node.name, {node.inputs[1], channel}, {scale_c});
    ctx.emit("Reshape", node.name, {node.inputs[2], channel}, {bias_c});
    ctx.emit("Mul", node.name, {restored, scale_c}, {scaled});
    ctx.emit("Add", node.name, {scaled, bias_c}, {node.outputs[0]});
  }
  ctx.count("GroupNormalization to InstanceNormalization");
  return Status::ok();
}

Status downgrade_grid_sample(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.target_opset() < kGridSampleOpset) {
    return cannot_convert(node, ctx.target_opset(), "GridSample exists only from opset 16");
  }
  if (ctx.source_opset() < kGridSampleNdOpset || ctx.target_opset() >= kGridSampleNdOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  if (ctx.rank(node.inputs[0]) != 4) {
    return cannot_convert(node, ctx.target_opset(), "GridSample-16 samples 4-D inputs only (N-D from GridSample-20)");
  }
  ir::Node out = node;
  EDGEMM_ASSIGN_OR_RETURN(const std::string mode, node.attr_string("mode", "linear"));
  out.attributes["mode"] = string_attribute(mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode);
  ctx.count("GridSample modes renamed");
  ctx.emit(std::move(out));
  return Status::ok();
}

Status downgrade_dft(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.target_opset() < kDftOpset) return cannot_convert(node, ctx.target_opset(), "DFT exists only from opset 17");
  if (ctx.source_opset() < kDftAxisInputOpset || ctx.target_opset() >= kDftAxisInputOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  int64_t axis = -2;
  const std::string axis_name = input_or_empty(node, 2);
  if (!axis_name.empty()) {
    auto value = ctx.constant_ints(axis_name);
    if (!value || value->size() != 1) {
      return cannot_convert(node, ctx.target_opset(), "DFT-17 takes the axis only as a constant attribute");
    }
    axis = (*value)[0];
  }
  const int64_t rank = ctx.rank(node.inputs[0]);
  if (axis < 0) {
    if (rank < 0) return cannot_convert(node, ctx.target_opset(), "a negative DFT axis needs an input of known rank");
    axis += rank;
  }
  ir::Node out = node;
  out.inputs.resize(2);
  while (!out.inputs.empty() && out.inputs.back().empty()) out.inputs.pop_back();
  out.attributes["axis"] = int_attribute(axis);
  ctx.count("DFT axis input to attribute");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
