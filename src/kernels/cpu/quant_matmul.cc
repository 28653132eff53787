/// \file quant_matmul.cc
/// Integer and quantized matrix products of the default ONNX domain, reference loops
/// (Operators.md, numpy.matmul shapes and broadcasting as MatMul: matmul_reference.h):
///
/// - MatMulInteger-10: inputs A (uint8 or int8, [..., M, K]), B (uint8 or int8, [..., K, N]),
///   optional a_zero_point (A's dtype) and b_zero_point (B's dtype). Output Y int32:
///   Y = (A - a_zero_point) x (B - b_zero_point), accumulated in 32 bits (wrapping, as the spec
///   allows). a_zero_point: one value (per tensor), [M] or [..., M, 1] (per row of A);
///   b_zero_point: one value, [N] or [..., 1, N] (per column of B).
/// - QLinearMatMul-10: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
///   y_zero_point (scales float32; a/b uint8 or int8, zero points of their data's dtype; the
///   output has y_zero_point's dtype, uint8 or int8):
///   y = saturate(round(((a - a_zp) x (b - b_zp)) * (a_scale * b_scale / y_scale)) + y_zp),
///   the integer product in int32, the multiplier and the product with it in float32 (as ONNX
///   Runtime), round half to even. a's scale and zero point are per tensor or per row, b's per
///   tensor or per column (the layouts above; the spec's "K element vector" for b is a typo for
///   the N columns), y's per tensor or per row of Y. a_zero_point and b_zero_point may be
///   omitted (0); y_zero_point is required since it gives the output dtype.
///
/// Paths: the operands are widened to int32 with their zero points subtracted, then
/// matmul_reference<int32_t> multiplies them (64-bit accumulation stored modulo 2^32).

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/matmul_reference.h"
#include "kernels/cpu/quant_common.h"

namespace edgemm::kernels {
namespace {

using quant::describe_input;
using quant::ParamRole;

Status check_operand_dtype(const ir::Node& node, int i, const Tensor& t) {
  if (!quant::is_8bit(t.dtype())) return unsupported_dtype(node, i, t.dtype());
  return Status::ok();
}

// An operand widened to int32 minus its zero point, with the view its zero point was read by.
struct Centered {
  Tensor values;
  Shape zp_view;
};

// Checks a zero point (input `zp_index`, may be null) against its operand (input `data_index`)
// and returns the operand in int32 with the zero point subtracted, in its promoted shape.
Expected<Centered> center(const ir::Node& node, int data_index, const Tensor& data, const Shape& promoted, int zp_index,
                          const Tensor* zp, ParamRole role) {
  Centered c;
  if (zp != nullptr) {
    EDGEMM_RETURN_IF_ERROR(
        quant::check_zero_point_dtype(node, zp_index, *zp, data.dtype(), describe_input(node, data_index)));
    EDGEMM_ASSIGN_OR_RETURN(c.zp_view, quant::matmul_param_view(node, zp_index, zp->shape(), promoted, role));
  }
  EDGEMM_ASSIGN_OR_RETURN(c.values, quant::widen_minus_zero_point(data, promoted, zp, c.zp_view));
  return c;
}

// The int32 product of the centered operands, laid out as [batch..., M, N].
Expected<Tensor> integer_product(const MatMulShape& s, const Centered& a, const Centered& b, int threads) {
  Shape full = s.batch;
  full.push_back(s.m);
  full.push_back(s.n);
  EDGEMM_ASSIGN_OR_RETURN(Tensor acc, Tensor::create(DataType::kInt32, full));
  if (acc.element_count() > 0) {
    matmul_reference<int32_t>(s, a.values.data<int32_t>(), b.values.data<int32_t>(), acc.data<int32_t>(), threads);
  }
  return acc;
}

Status run_matmul_integer(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* a, quant::required_input(ctx, 0, "A"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* b, quant::required_input(ctx, 1, "B"));
  EDGEMM_RETURN_IF_ERROR(check_operand_dtype(node, 0, *a));
  EDGEMM_RETURN_IF_ERROR(check_operand_dtype(node, 1, *b));
  EDGEMM_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(node, a->shape(), b->shape()));
  EDGEMM_ASSIGN_OR_RETURN(Centered ca, center(node, 0, *a, s.a, 2, ctx.input(2), ParamRole::kRow));
  EDGEMM_ASSIGN_OR_RETURN(Centered cb, center(node, 1, *b, s.b, 3, ctx.input(3), ParamRole::kColumn));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, s.out));
  if (y->element_count() == 0) return Status::ok();
  matmul_reference<int32_t>(s, ca.values.data<int32_t>(), cb.values.data<int32_t>(), y->data<int32_t>(), ctx.threads());
  return Status::ok();
}

// Inputs of QLinearMatMul.
enum : int { kA = 0, kAScale, kAZero, kB, kBScale, kBZero, kYScale, kYZero };

// The view of a scale (input `index`) as it broadcasts onto `operand`; its zero point
// (input `zp_index`) must have the same shape.
Expected<Shape> scale_view(const ir::Node& node, int index, const Tensor& scale, int zp_index, const Tensor* zp,
                           const Shape& operand, ParamRole role) {
  EDGEMM_RETURN_IF_ERROR(quant::check_scale_dtype(node, index, scale));
  EDGEMM_RETURN_IF_ERROR(quant::check_same_shape(node, index, scale, zp_index, zp));
  return quant::matmul_param_view(node, index, scale.shape(), operand, role);
}

template <typename Q>
void requantize(const Shape& full, const int32_t* acc, const float* a_scale, const float* b_scale, const float* y_scale,
                const std::vector<int32_t>& y_zp, const std::vector<int64_t> (&strides)[3], bool per_tensor, Q* y) {
  const quant::QRange r = quant::range_of(std::is_same_v<Q, int8_t> ? DataType::kInt8 : DataType::kUInt8);
  if (per_tensor) {
    const float multiplier = a_scale[0] * b_scale[0] / y_scale[0];
    int64_t n = 1;
    for (int64_t d : full) n *= d;
    for (int64_t i = 0; i < n; ++i)
      y[i] = static_cast<Q>(quant::quantize_value(static_cast<float>(acc[i]) * multiplier, y_zp[0], r));
    return;
  }
  quant::for_each_broadcast(full, strides, [&](int64_t i, const int64_t* off) {
    const float multiplier = a_scale[off[0]] * b_scale[off[1]] / y_scale[off[2]];
    y[i] = static_cast<Q>(quant::quantize_value(static_cast<float>(acc[i]) * multiplier, y_zp[off[2]], r));
  });
}

Status run_qlinear_matmul(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* a, quant::required_input(ctx, kA, "a"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* a_scale, quant::required_input(ctx, kAScale, "a_scale"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* b, quant::required_input(ctx, kB, "b"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* b_scale, quant::required_input(ctx, kBScale, "b_scale"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* y_scale, quant::required_input(ctx, kYScale, "y_scale"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* y_zp, quant::required_input(ctx, kYZero, "y_zero_point"));
  const Tensor* a_zp = ctx.input(kAZero);
  const Tensor* b_zp = ctx.input(kBZero);
  EDGEMM_RETURN_IF_ERROR(check_operand_dtype(node, kA, *a));
  EDGEMM_RETURN_IF_ERROR(check_operand_dtype(node, kB, *b));
  if (!quant::is_8bit(y_zp->dtype())) return unsupported_dtype(node, kYZero, y_zp->dtype());
  EDGEMM_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(node, a->shape(), b->shape()));
  Shape full = s.batch;
  full.push_back(s.m);
  full.push_back(s.n);
  EDGEMM_ASSIGN_OR_RETURN(Shape a_view, scale_view(node, kAScale, *a_scale, kAZero, a_zp, s.a, ParamRole::kRow));
  EDGEMM_ASSIGN_OR_RETURN(Shape b_view, scale_view(node, kBScale, *b_scale, kBZero, b_zp, s.b, ParamRole::kColumn));
  EDGEMM_ASSIGN_OR_RETURN(Shape y_view, scale_view(node, kYScale, *y_scale, kYZero, y_zp, full, ParamRole::kRow));
  EDGEMM_ASSIGN_OR_RETURN(Centered ca, center(node, kA, *a, s.a, kAZero, a_zp, ParamRole::kRow));
  EDGEMM_ASSIGN_OR_RETURN(Centered cb, center(node, kB, *b, s.b, kBZero, b_zp, ParamRole::kColumn));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, y_zp->dtype(), s.out));
  if (y->element_count() == 0) return Status::ok();
  EDGEMM_ASSIGN_OR_RETURN(Tensor acc, integer_product(s, ca, cb, ctx.threads()));
  const std::vector<int64_t> strides[3] = {broadcast_strides(a_view, full), broadcast_strides(b_view, full),
                                           broadcast_strides(y_view, full)};
  const bool per_tensor = a_view.empty() && b_view.empty() && y_view.empty();
  const std::vector<int32_t> y_zps = quant::zero_point_values(y_zp, y_zp->element_count());
  if (y_zp->dtype() == DataType::kUInt8) {
    requantize(full, acc.data<int32_t>(), a_scale->data<float>(), b_scale->data<float>(), y_scale->data<float>(), y_zps,
               strides, per_tensor, y->data<uint8_t>());
  } else {
    requantize(full, acc.data<int32_t>(), a_scale->data<float>(), b_scale->data<float>(), y_scale->data<float>(), y_zps,
               strides, per_tensor, y->data<int8_t>());
  }
  return Status::ok();
}

}  // namespace

void register_quant_matmul_kernels(KernelRegistry& registry) {
  registry.add("", "MatMulInteger", 10, simple_kernel(run_matmul_integer, "matmul_integer__reference"));
  registry.add("", "QLinearMatMul", 10, simple_kernel(run_qlinear_matmul, "qlinear_matmul__reference"));
}

}  // namespace edgemm::kernels
