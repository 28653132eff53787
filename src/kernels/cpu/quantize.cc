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
/// - QuantizeLinear-19 / DequantizeLinear-19: the float8 types (not in edgemm: refused) and,
///   for QuantizeLinear, attribute saturate (float8 only: checked to be 0 or 1, else ignored).
///   float16 / bfloat16 x and scales are Unsupported.
/// - -21: attribute block_size (default 0). When > 0 (and the scale has more than one element)
///   the scale and zero point have x's shape with the axis extent ceil(x[axis] / block_size);
///   element j along the axis uses block j / block_size. QuantizeLinear-21's output_dtype sets
///   y's dtype when there is no zero point and must equal the zero point's dtype when there is
///   one. Only uint8 and int8 (and int32 DQ input) are implemented: int16, uint16, int4, uint4
///   and float8 are Unsupported.
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
#include <memory>
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

/// Attributes of one QuantizeLinear / DequantizeLinear node at the model's opset.
struct QdqAttrs {
  bool per_axis_opset = false;  ///< 13+: attribute axis and 1-D (per axis) scales
  int64_t axis = 1;
  int64_t block_size = 0;                        ///< 21+: > 0 quantizes in blocks along axis
  DataType output_dtype = DataType::kUndefined;  ///< QuantizeLinear-21 output_dtype (0: unset)
};

/// Name of a quantized ONNX type edgemm does not implement (int16, uint16, and the types its
/// Tensor cannot hold: float8, int4, float4), or nullptr. Complex types are no quantized type
/// at all (the caller's InvalidModel).
const char* unsupported_qtype_name(int64_t t) {
  if (t == 4) return "uint16";
  if (t == 5) return "int16";
  if (t == 14 || t == 15) return nullptr;
  return onnx_only_type_name(t);
}

Expected<QdqAttrs> read_qdq_attrs(const KernelInfo& info, bool quantize) {
  const ir::Node& node = info.node;
  QdqAttrs a;
  a.per_axis_opset = info.opset >= 13;
  if (a.per_axis_opset) {
    EDGEMM_ASSIGN_OR_RETURN(a.axis, node.attr_int("axis", 1));
  }
  if (quantize && info.opset >= 19) {
    // saturate only changes float8 outputs, which edgemm does not have.
    EDGEMM_ASSIGN_OR_RETURN(int64_t saturate, node.attr_int("saturate", 1));
    if (saturate != 0 && saturate != 1) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute saturate is " + std::to_string(saturate) + "; expected 0 or 1");
    }
  }
  if (info.opset < 21) return a;
  EDGEMM_ASSIGN_OR_RETURN(a.block_size, node.attr_int("block_size", 0));
  if (a.block_size < 0) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute block_size is " + std::to_string(a.block_size) + "; it must be >= 0");
  }
  if (!quantize) return a;
  EDGEMM_ASSIGN_OR_RETURN(int64_t out, node.attr_int("output_dtype", 0));
  if (const char* name = unsupported_qtype_name(out)) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          "attribute output_dtype = " + std::to_string(out) + " (" + name +
                              ") is not supported; only uint8 (2) and int8 (3) are");
  }
  if (out != 0 && out != static_cast<int64_t>(DataType::kUInt8) && out != static_cast<int64_t>(DataType::kInt8)) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute output_dtype = " + std::to_string(out) + " is not a quantized type");
  }
  a.output_dtype = static_cast<DataType>(out);
  return a;
}

/// Where element i of x (viewed as [outer, extent, inner] around the quantization axis) finds
/// its scale and zero point: per tensor or per axis (AxisLayout), or in blocks of `block`
/// elements along the axis, the parameters then being [outer, blocks, inner].
struct ParamLayout {
  AxisLayout axis;
  int64_t block = 0;  ///< > 0: blocked
  int64_t blocks = 1;
  int64_t param_index(int64_t i) const {
    if (block == 0) return axis.param_index(i);
    const int64_t rest = i / axis.inner;
    return ((rest / axis.extent) * blocks + (rest % axis.extent) / block) * axis.inner + i % axis.inner;
  }
  int64_t elements() const { return axis.outer * axis.extent * axis.inner; }
};

/// The layout of the scale (input 1) of shape `scale` over x of shape `x`. One element is per
/// tensor (also with block_size, as ONNX's reference has it); with block_size > 0 the scale
/// must have x's shape with axis extent ceil(x[axis] / block_size).
Expected<ParamLayout> param_layout(const ir::Node& node, const QdqAttrs& a, const Shape& scale, const Shape& x) {
  ParamLayout p;
  int64_t count = 1;
  for (int64_t d : scale) count *= d;
  if (a.block_size == 0 || count == 1) {
    EDGEMM_ASSIGN_OR_RETURN(p.axis, quant::axis_layout(node, 1, scale, x, a.per_axis_opset, a.axis));
    return p;
  }
  EDGEMM_ASSIGN_OR_RETURN(const int64_t ax, normalize_axis(node, a.axis, static_cast<int64_t>(x.size())));
  Shape want = x;
  want[ax] = (x[ax] + a.block_size - 1) / a.block_size;
  if (scale != want) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "scale " + describe_input(node, 1) + " has shape " + shape_to_string(scale) +
                              "; blocked quantization of input 0 '" + quant::input_name(node, 0) + "' " +
                              shape_to_string(x) + " along axis " + std::to_string(a.axis) + " with block_size " +
                              std::to_string(a.block_size) + " needs " + shape_to_string(want));
  }
  p.axis.per_axis = true;
  p.axis.extent = x[ax];
  for (int64_t i = 0; i < ax; ++i) p.axis.outer *= x[i];
  for (size_t i = static_cast<size_t>(ax) + 1; i < x.size(); ++i) p.axis.inner *= x[i];
  p.block = a.block_size;
  p.blocks = want[ax];
  return p;
}

template <typename Q, typename X, typename F>
void quantize_loop(const ParamLayout& layout, const X* x, const float* scale, const std::vector<int32_t>& zps, QRange r,
                   Q* y, int threads) {
  parallel_for(threads, layout.elements(), 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = layout.param_index(i);
      const F v = static_cast<F>(x[i]) / static_cast<F>(scale[p]);
      y[i] = static_cast<Q>(quant::quantize_value<F>(v, zps[static_cast<size_t>(p)], r));
    }
  });
}

Status run_quantize_linear(KernelContext& ctx, const QdqAttrs& a) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, quant::required_input(ctx, 0, "x"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* scale, quant::required_input(ctx, 1, "y_scale"));
  const Tensor* zp = ctx.input(2);
  if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kInt32) return unsupported_dtype(node, 0, x->dtype());
  EDGEMM_RETURN_IF_ERROR(quant::check_scale_dtype(node, 1, *scale));
  if (zp != nullptr && a.output_dtype != DataType::kUndefined && zp->dtype() != a.output_dtype) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          std::string("attribute output_dtype is ") + dtype_name(a.output_dtype) + " but zero point " +
                              describe_input(node, 2) + " has dtype " + dtype_name(zp->dtype()) + "; they must agree");
  }
  const DataType out_dtype = zp != nullptr                            ? zp->dtype()
                             : a.output_dtype != DataType::kUndefined ? a.output_dtype
                                                                      : DataType::kUInt8;
  if (!quant::is_8bit(out_dtype)) return unsupported_dtype(node, 2, out_dtype);
  EDGEMM_RETURN_IF_ERROR(quant::check_same_shape(node, 1, *scale, 2, zp));
  EDGEMM_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(node, a, scale->shape(), x->shape()));
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
void dequantize_loop(const ParamLayout& layout, const Q* x, const float* scale, const std::vector<int32_t>& zps,
                     float* y, int threads) {
  parallel_for(threads, layout.elements(), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = layout.param_index(i);
      // int64: an int32 x minus a zero point cannot overflow.
      const int64_t centered = static_cast<int64_t>(x[i]) - zps[static_cast<size_t>(p)];
      y[i] = static_cast<float>(centered) * scale[p];
    }
  });
}

Status run_dequantize_linear(KernelContext& ctx, const QdqAttrs& a) {
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
  EDGEMM_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(node, a, scale->shape(), x->shape()));
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

/// A Q/DQ kernel: attributes read once, at load time.
class QdqKernel final : public Kernel {
 public:
  QdqKernel(QdqAttrs a, bool quantize) : a_(a), quantize_(quantize) {}
  const char* name() const override {
    return quantize_ ? "quantize_linear__reference" : "dequantize_linear__reference";
  }
  Status run(KernelContext& ctx) const override {
    return quantize_ ? run_quantize_linear(ctx, a_) : run_dequantize_linear(ctx, a_);
  }

 private:
  QdqAttrs a_;
  bool quantize_;
};

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
  // One factory per op reads the attributes of the model's opset (13: axis; 19: saturate;
  // 21: block_size, output_dtype).
  auto factory = [](bool quantize) {
    return [quantize](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
      EDGEMM_ASSIGN_OR_RETURN(QdqAttrs a, read_qdq_attrs(info, quantize));
      return std::unique_ptr<Kernel>(std::make_unique<QdqKernel>(a, quantize));
    };
  };
  for (int since : {10, 13, 19, 21}) {
    registry.add("", "QuantizeLinear", since, factory(true));
    registry.add("", "DequantizeLinear", since, factory(false));
  }
  registry.add("", "DynamicQuantizeLinear", 11,
               simple_kernel(run_dynamic_quantize_linear, "dynamic_quantize_linear__reference"));
}

}  // namespace edgemm::kernels
