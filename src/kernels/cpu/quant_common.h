#pragma once
/// \file quant_common.h
/// Helpers shared by the reference kernels of ONNX's linear quantization operators
/// (quantize.cc: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear; quant_matmul.cc:
/// MatMulInteger, QLinearMatMul; quant_conv.cc: ConvInteger, QLinearConv), following
/// Operators.md at opsets 10, 11 and 13:
/// - quantization `q = saturate(round(v / scale) + zero_point)` with round half to even and
///   saturation to the dtype's range (uint8 [0, 255], int8 [-128, 127]);
/// - dtype and shape checks of scales and zero points with errors naming the node, op and input;
/// - the layouts of MatMul-family scales / zero points (per tensor, per row of A, per column of
///   B) as shapes that broadcast onto the operand, and the widening of a uint8/int8 operand to
///   int32 with its zero point subtracted.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace edgemm::kernels::quant {

/// True for the 8-bit quantized dtypes of opsets 10–13: uint8 and int8.
bool is_8bit(DataType dtype);

/// Inclusive range of a quantized dtype: uint8 [0, 255], int8 [-128, 127], int32 [-2^31, 2^31-1].
struct QRange {
  int32_t lo = 0;
  int32_t hi = 255;
};
/// Range of uint8, int8 or int32 (uint8's for any other dtype; callers check dtypes first).
QRange range_of(DataType dtype);

/// saturate(round(v) + zero_point) into `r`: round half to even (std::nearbyint in the default
/// rounding mode), then the zero point, then saturation. F = float or double. NaN gives the
/// zero point (saturated); ±inf and huge values saturate. No conversion is ever out of range.
template <typename F>
int32_t quantize_value(F v, int32_t zero_point, QRange r) {
  if (std::isnan(v)) return zero_point < r.lo ? r.lo : (zero_point > r.hi ? r.hi : zero_point);
  // Clamp first so that the integer conversion cannot overflow; values one beyond the range on
  // either side still saturate after the zero point is added.
  const F lo = static_cast<F>(static_cast<int64_t>(r.lo) - zero_point - 1);
  const F hi = static_cast<F>(static_cast<int64_t>(r.hi) - zero_point + 1);
  v = v < lo ? lo : (v > hi ? hi : v);
  const int64_t q = static_cast<int64_t>(std::nearbyint(v)) + zero_point;
  return static_cast<int32_t>(q < r.lo ? r.lo : (q > r.hi ? r.hi : q));
}

/// The node's value name for input `i` ("" when absent).
std::string input_name(const ir::Node& node, int i);
/// "input 2 'y_zero_point'": how errors name an input.
std::string describe_input(const ir::Node& node, int i);

/// Input `i`, or InvalidModel naming the node and the input's position when it is absent.
Expected<const Tensor*> required_input(const KernelContext& ctx, int i, const char* what);

/// A scale (input `i`) must be float32 (the only scale type of opsets 10–13): Unsupported for
/// other dtypes.
Status check_scale_dtype(const ir::Node& node, int i, const Tensor& scale);

/// A zero point (input `zp_index`) must have dtype `want`, the dtype of the data it belongs to
/// (input or output `data_what`, e.g. "input 0 'x'"); InvalidArgument otherwise.
Status check_zero_point_dtype(const ir::Node& node, int zp_index, const Tensor& zp, DataType want,
                              const std::string& data_what);

/// A scale and its zero point must have the same shape (Operators.md "Shape must match
/// y_scale"); any two one-element shapes (a scalar, [1]) count as equal. InvalidArgument naming
/// both inputs otherwise. `zp` may be null (absent: nothing to check).
Status check_same_shape(const ir::Node& node, int scale_index, const Tensor& scale, int zp_index, const Tensor* zp);

/// The values of a zero point (uint8, int8 or int32) as int32; `count` zeros when `zp` is null.
std::vector<int32_t> zero_point_values(const Tensor* zp, int64_t count);

/// Per-tensor or per-channel parameter over one axis. `count` (1 or the axis extent) values
/// apply to the elements of a tensor viewed as [outer, axis_extent, inner].
struct AxisLayout {
  int64_t outer = 1;
  int64_t extent = 1;  ///< extent of the quantization axis (1 for per-tensor)
  int64_t inner = 1;
  bool per_axis = false;
  /// Index of the parameter for element `i` of the tensor.
  int64_t param_index(int64_t i) const { return per_axis ? (i / inner) % extent : 0; }
};

/// Layout for a scale (input `scale_index`) of shape `param` over a tensor of shape `data`:
/// per-tensor when it has one element (a scalar, [1]), per-axis when it is 1-D with data[axis] elements (only
/// when `allow_axis`, i.e. opset >= 13; `axis` may be negative and is ignored for per-tensor).
/// Errors (InvalidArgument): any other shape, an axis out of range.
Expected<AxisLayout> axis_layout(const ir::Node& node, int scale_index, const Shape& param, const Shape& data,
                                 bool allow_axis, int64_t axis);

/// Whether a MatMul-family parameter varies along the rows of A ([..., M, K]: per row) or the
/// columns of B ([..., K, N]: per column). QLinearMatMul's output parameters are per row of Y.
enum class ParamRole { kRow, kColumn };

/// The shape with which a MatMul-family scale or zero point (input `index`, shape `param`)
/// broadcasts onto `operand` (promoted shape [..., R, C]): [] for one element of any shape (per
/// tensor);
/// a 1-D [R] becomes [R, 1] (per row) and a 1-D [C] becomes [1, C] (per column); an N-D shape
/// must have 1 on the reduced axis (C for rows, R for columns) and broadcast onto `operand`
/// (Operators.md MatMulInteger-10 / QLinearMatMul-10: [D1, D2, M, 1] and [D1, D2, 1, N]).
/// InvalidArgument naming the input and the accepted shapes otherwise.
Expected<Shape> matmul_param_view(const ir::Node& node, int index, const Shape& param, const Shape& operand,
                                  ParamRole role);

/// Widens a uint8/int8 tensor `q` of shape `shape` (same element count as q) to int32 and
/// subtracts the zero point `zp` (may be null) read through `zp_view` broadcast onto `shape`.
Expected<Tensor> widen_minus_zero_point(const Tensor& q, const Shape& shape, const Tensor* zp, const Shape& zp_view);

/// Calls fn(i, offsets) for every element i of `target` (row-major), where offsets[j] is the
/// element of parameter j that applies to it; strides[j] = broadcast_strides(view_j, target)
/// (common.h) for the parameter's view (e.g. from matmul_param_view). Single-threaded.
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& target, const std::vector<int64_t> (&strides)[N], Fn&& fn) {
  const size_t rank = target.size();
  int64_t total = 1;
  for (int64_t d : target) total *= d;
  std::vector<int64_t> idx(rank, 0);
  int64_t off[N] = {};
  for (int64_t i = 0; i < total; ++i) {
    fn(i, static_cast<const int64_t*>(off));
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t j = 0; j < N; ++j) off[j] += strides[j][d];
      if (idx[d] < target[d]) break;
      for (size_t j = 0; j < N; ++j) off[j] -= strides[j][d] * target[d];
      idx[d] = 0;
    }
  }
}

}  // namespace edgemm::kernels::quant
