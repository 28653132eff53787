/// \file quant_conv.cc
/// Integer and quantized convolutions of the default ONNX domain, reference loops
/// (Operators.md; attributes auto_pad, dilations, group, kernel_shape, pads, strides and the
/// shape rules exactly as Conv-1/11, through conv_reference.h):
///
/// - ConvInteger-10: inputs x (uint8 or int8, [N, C, D1, ...] with 1 to 3 spatial axes), w
///   (uint8 or int8, [M, C/group, k1, ...]), optional x_zero_point (x's dtype, one value: per
///   tensor) and w_zero_point (w's dtype, one value or [M]: per output channel). Output y
///   int32 [N, M, O1, ...]: the convolution of (x - x_zero_point) with (w - w_zero_point),
///   accumulated in 32 bits (wrapping). Padding reads as x_zero_point (zero after centering).
/// - QLinearConv-10: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
///   y_zero_point, optional B (int32 [M], quantized with scale x_scale * w_scale and zero point
///   0). Scales float32; x's and y's scale and zero point per tensor; w's per tensor or per
///   output channel ([M]). The output has y_zero_point's dtype (uint8 or int8):
///   y[n, m, ...] = saturate(round(acc * (x_scale * w_scale[m] / y_scale)) + y_zero_point)
///   with acc = B[m] + the int32 convolution above; the multiplier and its product in float32
///   (as ONNX Runtime), round half to even. x_zero_point and w_zero_point may be omitted (0).
///
/// Paths: x and w are widened to int32 with their zero points subtracted, then
/// conv_reference<int32_t> (64-bit accumulation stored modulo 2^32) convolves them.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/quant_common.h"

namespace edgemm::kernels {
namespace {

using quant::describe_input;

// Where a quantized convolution finds its inputs (node input indices; -1 when the op has none).
struct ConvInputs {
  int x = 0, w = 1, x_zp = 2, w_zp = 3, bias = -1;
};
constexpr ConvInputs kConvIntegerInputs{0, 1, 2, 3, -1};
constexpr ConvInputs kQLinearConvInputs{0, 3, 2, 5, 8};
// QLinearConv's scales and output zero point.
enum : int { kConvXScale = 1, kConvWScale = 4, kConvYScale = 6, kConvYZero = 7 };

const Tensor* optional_input(const KernelContext& ctx, int i) { return i >= 0 ? ctx.input(i) : nullptr; }

// A copy of the node with inputs [x, w, B] so that conv_geometry's messages name the right
// values (its input positions are Conv's).
ir::Node geometry_node(const ir::Node& node, const ConvInputs& in) {
  ir::Node g = node;
  auto name = [&](int i) {
    return i >= 0 && i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : std::string();
  };
  g.inputs = {name(in.x), name(in.w)};
  if (in.bias >= 0) g.inputs.push_back(name(in.bias));
  return g;
}

class QuantConvKernel final : public Kernel {
 public:
  QuantConvKernel(bool qlinear, ConvAttrs attrs, ir::Node geometry_node)
      : qlinear_(qlinear), attrs_(std::move(attrs)), geometry_node_(std::move(geometry_node)) {}

  const char* name() const override { return qlinear_ ? "qlinear_conv__reference" : "conv_integer__reference"; }

  Status run(KernelContext& ctx) const override;

 private:
  // Checks x/w dtypes and zero points; returns the geometry and the centered int32 operands.
  Status prepare(KernelContext& ctx, ConvGeometry* g, Tensor* x32, Tensor* w32) const;

  bool qlinear_;
  ConvAttrs attrs_;
  ir::Node geometry_node_;
};

Status QuantConvKernel::prepare(KernelContext& ctx, ConvGeometry* g, Tensor* x32, Tensor* w32) const {
  const ir::Node& node = ctx.node();
  const ConvInputs in = qlinear_ ? kQLinearConvInputs : kConvIntegerInputs;
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, quant::required_input(ctx, in.x, "x"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* w, quant::required_input(ctx, in.w, "w"));
  if (!quant::is_8bit(x->dtype())) return unsupported_dtype(node, in.x, x->dtype());
  if (!quant::is_8bit(w->dtype())) return unsupported_dtype(node, in.w, w->dtype());
  const Tensor* x_zp = optional_input(ctx, in.x_zp);
  const Tensor* w_zp = optional_input(ctx, in.w_zp);
  const Tensor* bias = optional_input(ctx, in.bias);
  if (x_zp != nullptr) {
    EDGEMM_RETURN_IF_ERROR(quant::check_zero_point_dtype(node, in.x_zp, *x_zp, x->dtype(), describe_input(node, in.x)));
    if (x_zp->element_count() != 1) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "zero point " + describe_input(node, in.x_zp) + " has shape " +
                                shape_to_string(x_zp->shape()) + "; the input is quantized per tensor (one value)");
    }
  }
  if (w_zp != nullptr) {
    EDGEMM_RETURN_IF_ERROR(quant::check_zero_point_dtype(node, in.w_zp, *w_zp, w->dtype(), describe_input(node, in.w)));
  }
  if (bias != nullptr && bias->dtype() != DataType::kInt32) return unsupported_dtype(node, in.bias, bias->dtype());
  const Shape b_shape = bias != nullptr ? bias->shape() : Shape{};
  EDGEMM_ASSIGN_OR_RETURN(
      *g, conv_geometry(geometry_node_, attrs_, x->shape(), w->shape(), bias != nullptr ? &b_shape : nullptr));
  if (w_zp != nullptr && w_zp->element_count() != 1 && (w_zp->rank() != 1 || w_zp->dim(0) != g->out_channels)) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "zero point " + describe_input(node, in.w_zp) + " has shape " +
                              shape_to_string(w_zp->shape()) + "; expected one value (per tensor) or [" +
                              std::to_string(g->out_channels) + "] (per output channel)");
  }
  // x: one zero point. w: one per output channel (axis 0) when w_zp has M values.
  EDGEMM_ASSIGN_OR_RETURN(*x32, quant::widen_minus_zero_point(*x, x->shape(), x_zp, Shape{}));
  Shape w_view;  // [M, 1, 1, ...]: w's zero point broadcast per output channel
  if (w_zp != nullptr && w_zp->element_count() != 1) {
    w_view.assign(w->shape().size(), 1);
    w_view[0] = g->out_channels;
  }
  EDGEMM_ASSIGN_OR_RETURN(*w32, quant::widen_minus_zero_point(*w, w->shape(), w_zp, w_view));
  return Status::ok();
}

template <typename Q>
void requantize(const ConvGeometry& g, const int32_t* acc, float x_scale, const float* w_scale, bool w_per_channel,
                float y_scale, int32_t y_zp, Q* y) {
  const quant::QRange r = quant::range_of(std::is_same_v<Q, int8_t> ? DataType::kInt8 : DataType::kUInt8);
  int64_t spatial = 1;
  for (int64_t d : g.out_spatial) spatial *= d;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const float multiplier = x_scale * w_scale[w_per_channel ? m : 0] / y_scale;
      const int64_t base = (n * g.out_channels + m) * spatial;
      for (int64_t i = 0; i < spatial; ++i) {
        y[base + i] = static_cast<Q>(quant::quantize_value(static_cast<float>(acc[base + i]) * multiplier, y_zp, r));
      }
    }
  }
}

// Checks QLinearConv's scales and output zero point; `w_per_channel` is set when w's scale
// holds one value per output channel.
Status check_qlinear_params(const ir::Node& node, const KernelContext& ctx, const ConvGeometry& g,
                            bool* w_per_channel) {
  for (int i : {kConvXScale, kConvWScale, kConvYScale}) {
    EDGEMM_RETURN_IF_ERROR(quant::check_scale_dtype(node, i, *ctx.input(i)));
  }
  const Tensor& x_scale = *ctx.input(kConvXScale);
  const Tensor& w_scale = *ctx.input(kConvWScale);
  const Tensor& y_scale = *ctx.input(kConvYScale);
  const Tensor& y_zp = *ctx.input(kConvYZero);
  EDGEMM_RETURN_IF_ERROR(
      quant::check_same_shape(node, kConvXScale, x_scale, kQLinearConvInputs.x_zp, ctx.input(kQLinearConvInputs.x_zp)));
  EDGEMM_RETURN_IF_ERROR(
      quant::check_same_shape(node, kConvWScale, w_scale, kQLinearConvInputs.w_zp, ctx.input(kQLinearConvInputs.w_zp)));
  EDGEMM_RETURN_IF_ERROR(quant::check_same_shape(node, kConvYScale, y_scale, kConvYZero, &y_zp));
  for (int i : {kConvXScale, kConvYScale}) {
    if (ctx.input(i)->element_count() != 1) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "scale " + describe_input(node, i) + " has shape " +
                                shape_to_string(ctx.input(i)->shape()) + "; it must hold one value (per tensor)");
    }
  }
  *w_per_channel = w_scale.element_count() != 1;
  if (*w_per_channel && (w_scale.rank() != 1 || w_scale.dim(0) != g.out_channels)) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "scale " + describe_input(node, kConvWScale) + " has shape " +
                              shape_to_string(w_scale.shape()) + "; expected one value (per tensor) or [" +
                              std::to_string(g.out_channels) + "] (per output channel)");
  }
  return Status::ok();
}

Status QuantConvKernel::run(KernelContext& ctx) const {
  const ir::Node& node = ctx.node();
  if (qlinear_) {
    for (auto [i, what] : {std::pair{kConvXScale, "x_scale"},
                           {kConvWScale, "w_scale"},
                           {kConvYScale, "y_scale"},
                           {kConvYZero, "y_zero_point"}}) {
      EDGEMM_RETURN_IF_ERROR(quant::required_input(ctx, i, what).status());
    }
    const DataType out = ctx.input(kConvYZero)->dtype();
    if (!quant::is_8bit(out)) return unsupported_dtype(node, kConvYZero, out);
  }
  ConvGeometry g;
  Tensor x32, w32;
  EDGEMM_RETURN_IF_ERROR(prepare(ctx, &g, &x32, &w32));
  bool w_per_channel = false;
  if (qlinear_) EDGEMM_RETURN_IF_ERROR(check_qlinear_params(node, ctx, g, &w_per_channel));
  const DataType out_dtype = qlinear_ ? ctx.input(kConvYZero)->dtype() : DataType::kInt32;
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dtype, g.output_shape()));
  if (y->element_count() == 0) return Status::ok();
  const Tensor* bias = qlinear_ ? optional_input(ctx, kQLinearConvInputs.bias) : nullptr;
  const int32_t* b = bias != nullptr ? bias->data<int32_t>() : nullptr;
  if (!qlinear_) {
    conv_reference<int32_t>(g, x32.data<int32_t>(), w32.data<int32_t>(), nullptr, y->data<int32_t>(), ctx.threads());
    return Status::ok();
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor acc, Tensor::create(DataType::kInt32, g.output_shape()));
  conv_reference<int32_t>(g, x32.data<int32_t>(), w32.data<int32_t>(), b, acc.data<int32_t>(), ctx.threads());
  const float x_scale = ctx.input(kConvXScale)->data<float>()[0];
  const float* w_scale = ctx.input(kConvWScale)->data<float>();
  const float y_scale = ctx.input(kConvYScale)->data<float>()[0];
  const int32_t y_zp = quant::zero_point_values(ctx.input(kConvYZero), 1)[0];
  if (out_dtype == DataType::kUInt8) {
    requantize(g, acc.data<int32_t>(), x_scale, w_scale, w_per_channel, y_scale, y_zp, y->data<uint8_t>());
  } else {
    requantize(g, acc.data<int32_t>(), x_scale, w_scale, w_per_channel, y_scale, y_zp, y->data<int8_t>());
  }
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> make_quant_conv(const KernelInfo& info, bool qlinear) {
  EDGEMM_ASSIGN_OR_RETURN(ConvAttrs attrs, parse_conv_attrs(info.node, false));
  ir::Node g = geometry_node(info.node, qlinear ? kQLinearConvInputs : kConvIntegerInputs);
  return std::unique_ptr<Kernel>(std::make_unique<QuantConvKernel>(qlinear, std::move(attrs), std::move(g)));
}

}  // namespace

void register_quant_conv_kernels(KernelRegistry& registry) {
  registry.add("", "ConvInteger", 10, [](const KernelInfo& info) { return make_quant_conv(info, false); });
  registry.add("", "QLinearConv", 10, [](const KernelInfo& info) { return make_quant_conv(info, true); });
}

}  // namespace edgemm::kernels
