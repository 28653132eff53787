/// \file quantize.cc
/// Linear (de)quantization of the default ONNX domain, reference loops (Operators.md):
///
/// - QuantizeLinear-10 / -13: inputs x (float32 or int32, any shape), y_scale (float32),
///   optional y_zero_point (uint8 or int8; absent: uint8 zero). Output y has x's shape and the
///   zero point's dtype: y = saturate(round(x / y_scale) + y_zero_point), round half to even,
///   saturating to [0, 255] / [-128, 127]. Opset 10: scale and zero point hold one value (per
///   tensor). Opset 13 adds attribute `axis` (default 1, negative counts from the back): a 1-D
///   scale of x.shape[axis] values quantizes per axis. The division is done in float32 for a
///   float32 x (as the spec's float reference and ONNX Runtime do) and in double for int32.
/// - DequantizeLinear-10 / -13: inputs x (uint8, int8 or int32), x_scale (float32), optional
///   x_zero_point (x's dtype; for int32 x it must be 0). Output y float32 with x's shape:
///   y = (x - x_zero_point) * x_scale in float32; per tensor (10) or per axis (13, `axis`).
/// - DynamicQuantizeLinear-11: input x float32, outputs y (uint8, x's shape), y_scale (float32
///   scalar), y_zero_point (uint8 scalar): the range [min(0, min x), max(0, max x)] maps onto
///   [0, 255]: y_scale = (max - min) / 255, y_zero_point = round(saturate(-min / y_scale)),
///   y = saturate(round(x / y_scale) + y_zero_point). NaNs are left out of min and max. When
///   the range is empty (x all zeros, or empty) the spec's formula divides by zero; like ONNX
///   Runtime we then use y_scale = 1 and y_zero_point = 0 (y is all zero points either way;
///   onnx.reference in later ONNX releases returns y_scale = 1/255 instead).
///
/// NaN inputs quantize to the zero point; ±inf saturate.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/quant_common.h"

namespace edgemm::kernels {
namespace {

using quant::AxisLayout;
using quant::describe_input;
using quant::QRange;

// Reads the optional axis attribute (opset 13; opset 10 has none and quantizes per tensor).
Expected<int64_t> read_axis(const ir::Node& node, bool per_axis_opset) {
  if (!per_axis_opset) return int64_t{1};
  return node.attr_int("axis", 1);
}

template <typename Q, typename X, typename F>
void quantize_loop(const AxisLayout& layout, const X* x, const float* scale, const std::vector<int32_t>& zps, QRange r,
                   Q* y, int threads) {
  const int64_t n = layout.outer * layout.extent * layout.inner;
  parallel_for(threads, n, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = layout.param_index(i);
      const F v = static_cast<F>(x[i]) / static_cast<F>(scale[p]);
      y[i] = static_cast<Q>(quant::quantize_value<F>(v, zps[static_cast<size_t>(p)], r));
    }
  });
}

Status run_quantize_linear(KernelContext& ctx, bool per_axis_opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, quant::required_input(ctx, 0, "x"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* scale, quant::required_input(ctx, 1, "y_scale"));
  const Tensor* zp = ctx.input(2);
  if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kInt32) return unsupported_dtype(node, 0, x->dtype());
  EDGEMM_RETURN_IF_ERROR(quant::check_scale_dtype(node, 1, *scale));
  const DataType out_dtype = zp != nullptr ? zp->dtype() : DataType::kUInt8;
  if (!quant::is_8bit(out_dtype)) return unsupported_dtype(node, 2, out_dtype);
  EDGEMM_RETURN_IF_ERROR(quant::check_same_shape(node, 1, *scale, 2, zp));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, read_axis(node, per_axis_opset));
  EDGEMM_ASSIGN_OR_RETURN(AxisLayout layout,
                          quant::axis_layout(node, 1, scale->shape(), x->shape(), per_axis_opset, axis));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dtype, x->shape()));
  const std::vector<int32_t> zps = quant::zero_point_values(zp, scale->element_count());
  const QRange r = quant::range_of(out_dtype);
  const float* s = scale->data<float>();
  const int threads = ctx.threads();
  if (out_dtype == DataType::kUInt8) {
    if (x->dtype() == DataType::kFloat32) {
      quantize_loop<uint8_t, float, float>(layout, x->data<float>(), s, zps, r, y->data<uint8_t>(), threads);
    } else {
      quantize_loop<uint8_t, int32_t, double>(layout, x->data<int32_t>(), s, zps, r, y->data<uint8_t>(), threads);
    }
  } else if (x->dtype() == DataType::kFloat32) {
    quantize_loop<int8_t, float, float>(layout, x->data<float>(), s, zps, r, y->data<int8_t>(), threads);
  } else {
    quantize_loop<int8_t, int32_t, double>(layout, x->data<int32_t>(), s, zps, r, y->data<int8_t>(), threads);
  }
  return Status::ok();
}

template <typename Q>
void dequantize_loop(const AxisLayout& layout, const Q* x, const float* scale, const std::vector<int32_t>& zps,
                     float* y, int threads) {
  const int64_t n = layout.outer * layout.extent * layout.inner;
  parallel_for(threads, n, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = layout.param_index(i);
      // int64: an int32 x minus a zero point cannot overflow.
      const int64_t centered = static_cast<int64_t>(x[i]) - zps[static_cast<size_t>(p)];
      y[i] = static_cast<float>(centered) * scale[p];
    }
  });
}

Status run_dequantize_linear(KernelContext& ctx, bool per_axis_opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, quant::required_input(ctx, 0, "x"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* scale, quant::required_input(ctx, 1, "x_scale"));
  const Tensor* zp = ctx.input(2);
  const DataType dt = x->dtype();
  if (!quant::is_8bit(dt) && dt != DataType::kInt32) return unsupported_dtype(node, 0, dt);
  EDGEMM_RETURN_IF_ERROR(quant::check_scale_dtype(node, 1, *scale));
  if (zp != nullptr) {
    EDGEMM_RETURN_IF_ERROR(quant::check_zero_point_dtype(node, 2, *zp, dt, describe_input(node, 0)));
  }
  EDGEMM_RETURN_IF_ERROR(quant::check_same_shape(node, 1, *scale, 2, zp));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, read_axis(node, per_axis_opset));
  EDGEMM_ASSIGN_OR_RETURN(AxisLayout layout,
                          quant::axis_layout(node, 1, scale->shape(), x->shape(), per_axis_opset, axis));
  const std::vector<int32_t> zps = quant::zero_point_values(zp, scale->element_count());
  if (dt == DataType::kInt32) {
    for (size_t i = 0; i < zps.size(); ++i) {
      if (zps[i] != 0) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "zero point " + describe_input(node, 2) + " has value " + std::to_string(zps[i]) +
                                  " at index " + std::to_string(i) +
                                  "; an int32 input is dequantized without a zero point (it must be 0)");
      }
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
  const float* s = scale->data<float>();
  float* out = y->data<float>();
  switch (dt) {
    case DataType::kUInt8:
      dequantize_loop(layout, x->data<uint8_t>(), s, zps, out, ctx.threads());
      break;
    case DataType::kInt8:
      dequantize_loop(layout, x->data<int8_t>(), s, zps, out, ctx.threads());
      break;
    default:
      dequantize_loop(layout, x->data<int32_t>(), s, zps, out, ctx.threads());
      break;
  }
  return Status::ok();
}

Status run_dynamic_quantize_linear(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, quant::required_input(ctx, 0, "x"));
  if (x->dtype() != DataType::kFloat32) return unsupported_dtype(node, 0, x->dtype());
  const float* in = x->data<float>();
  const int64_t n = x->element_count();
  // The range always includes 0 (Operators.md: "data range is adjusted to include 0").
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(in[i])) continue;
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const QRange r = quant::range_of(DataType::kUInt8);
  float scale = (hi - lo) / static_cast<float>(r.hi - r.lo);
  int32_t zero_point = 0;
  if (hi == lo || !(scale > 0.0f) || !std::isfinite(scale)) {
    scale = 1.0f;  // empty range (all zeros) or an infinite one: see the file comment
  } else {
    const float initial = static_cast<float>(r.lo) - lo / scale;
    zero_point =
        quant::quantize_value<float>(std::clamp(initial, static_cast<float>(r.lo), static_cast<float>(r.hi)), 0, r);
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kUInt8, x->shape()));
  uint8_t* out = y->data<uint8_t>();
  parallel_for(ctx.threads(), n, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = static_cast<uint8_t>(quant::quantize_value(in[i] / scale, zero_point, r));
  });
  if (ctx.output_wanted(1)) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(1, DataType::kFloat32, Shape{}));
    s->data<float>()[0] = scale;
  }
  if (ctx.output_wanted(2)) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(2, DataType::kUInt8, Shape{}));
    z->data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
  }
  return Status::ok();
}

}  // namespace

void register_quantize_kernels(KernelRegistry& registry) {
  for (int since : {10, 13}) {
    const bool per_axis = since >= 13;
    registry.add("", "QuantizeLinear", since,
                 simple_kernel([per_axis](KernelContext& ctx) { return run_quantize_linear(ctx, per_axis); },
                               "quantize_linear__reference"));
    registry.add("", "DequantizeLinear", since,
                 simple_kernel([per_axis](KernelContext& ctx) { return run_dequantize_linear(ctx, per_axis); },
                               "dequantize_linear__reference"));
  }
  registry.add("", "DynamicQuantizeLinear", 11,
               simple_kernel(run_dynamic_quantize_linear, "dynamic_quantize_linear__reference"));
}

}  // namespace edgemm::kernels
