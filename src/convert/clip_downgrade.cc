/// Clip-11 takes min and max as optional inputs (ONNX Changelog "Clip-11"); Clip-6 as float
/// attributes defaulting to the float range. Clip-12/13 only add types. Below opset 11 the
/// bounds must be constants; absent ones stay absent (same defaults).
#include "convert/downgrade_rewrites.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kBoundsAsInputsOpset = 11;

}  // namespace

Status downgrade_clip(RewriteContext& ctx, const ir::Node& node) {
  if (ctx.source_opset() < kBoundsAsInputsOpset || ctx.target_opset() >= kBoundsAsInputsOpset) {
    ctx.count("relabelled");
    ctx.emit(node);
    return Status::ok();
  }
  ir::Node out = node;
  out.inputs.resize(1);
  const char* keys[] = {"min", "max"};
  for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
    if (node.inputs[i].empty()) continue;
    auto bound = ctx.constant_scalar(node.inputs[i]);
    if (!bound) {
      return cannot_convert(node, ctx.target_opset(),
                            std::string("bound '") + keys[i - 1] + "' (input '" + node.inputs[i] +
                                "') is not a float constant; Clip below opset 11 takes bounds only as attributes");
    }
    out.attributes[keys[i - 1]] = float_attribute(static_cast<float>(*bound));
  }
  ctx.count("Clip bounds to attributes");
  ctx.emit(std::move(out));
  return Status::ok();
}

}  // namespace edgemm::convert
