/// \file quant_common.cc
/// Scale / zero-point checks and layouts shared by the quantization kernels (quant_common.h).

#include "kernels/cpu/quant_common.h"

#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"

namespace edgemm::kernels::quant {

bool is_8bit(DataType dtype) { return dtype == DataType::kUInt8 || dtype == DataType::kInt8; }

QRange range_of(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {0, 255};
  }
}

std::string input_name(const ir::Node& node, int i) {
  return i >= 0 && i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : std::string();
}

std::string describe_input(const ir::Node& node, int i) {
  return "input " + std::to_string(i) + " '" + input_name(node, i) + "'";
}

Expected<const Tensor*> required_input(const KernelContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) {
    return ir::node_error(ctx.node(), StatusCode::kInvalidModel,
                          "required input " + std::to_string(i) + " (" + what + ") is missing");
  }
  return t;
}

Status check_scale_dtype(const ir::Node& node, int i, const Tensor& scale) {
  if (scale.dtype() != DataType::kFloat32) return unsupported_dtype(node, i, scale.dtype());
  return Status::ok();
}

Status check_zero_point_dtype(const ir::Node& node, int zp_index, const Tensor& zp, DataType want,
                              const std::string& data_what) {
  if (zp.dtype() == want) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "zero point " + describe_input(node, zp_index) + " has dtype " + dtype_name(zp.dtype()) +
                            " but " + data_what + " has dtype " + dtype_name(want) +
                            "; a zero point must have the dtype of its data");
}

Status check_same_shape(const ir::Node& node, int scale_index, const Tensor& scale, int zp_index, const Tensor* zp) {
  if (zp == nullptr) return Status::ok();
  const bool both_single = scale.element_count() == 1 && zp->element_count() == 1;
  if (scale.shape() == zp->shape() || both_single) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "scale " + describe_input(node, scale_index) + " has shape " + shape_to_string(scale.shape()) +
                            " but zero point " + describe_input(node, zp_index) + " has shape " +
                            shape_to_string(zp->shape()) + "; they must match");
}

std::vector<int32_t> zero_point_values(const Tensor* zp, int64_t count) {
  std::vector<int32_t> v(static_cast<size_t>(count), 0);
  if (zp == nullptr) return v;
  const int64_t n = zp->element_count() < count ? zp->element_count() : count;
  for (int64_t i = 0; i < n; ++i) {
    switch (zp->dtype()) {
      case DataType::kUInt8:
        v[i] = zp->data<uint8_t>()[i];
        break;
      case DataType::kInt8:
        v[i] = zp->data<int8_t>()[i];
        break;
      case DataType::kInt32:
        v[i] = zp->data<int32_t>()[i];
        break;
      default:
        break;
    }
  }
  return v;
}

Expected<AxisLayout> axis_layout(const ir::Node& node, int scale_index, const Shape& param, const Shape& data,
                                 bool allow_axis, int64_t axis) {
  AxisLayout layout;
  int64_t total = 1;
  for (int64_t d : data) total *= d;
  int64_t count = 1;
  for (int64_t d : param) count *= d;
  if (count == 1) {
    layout.inner = total;
    return layout;
  }
  if (!allow_axis || param.size() != 1) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "scale " + describe_input(node, scale_index) + " has shape " + shape_to_string(param) +
                              (allow_axis ? "; expected a scalar (per tensor) or a 1-D tensor (per axis)"
                                          : "; this opset quantizes per tensor only (a scalar or one element)"));
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axis, static_cast<int64_t>(data.size())));
  if (param[0] != data[a]) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "scale " + describe_input(node, scale_index) + " has " + std::to_string(param[0]) +
                              " elements but axis " + std::to_string(axis) + " of input 0 '" + input_name(node, 0) +
                              "' " + shape_to_string(data) + " has extent " + std::to_string(data[a]));
  }
  layout.per_axis = true;
  layout.extent = data[a];
  for (int64_t i = 0; i < a; ++i) layout.outer *= data[i];
  for (size_t i = static_cast<size_t>(a) + 1; i < data.size(); ++i) layout.inner *= data[i];
  return layout;
}

Expected<Shape> matmul_param_view(const ir::Node& node, int index, const Shape& param, const Shape& operand,
                                  ParamRole role) {
  int64_t count = 1;
  for (int64_t d : param) count *= d;
  if (count == 1) return Shape{};
  const size_t rank = operand.size();
  const int64_t rows = operand[rank - 2], cols = operand[rank - 1];
  const bool per_row = role == ParamRole::kRow;
  auto fail = [&]() -> Status {
    const std::string len = std::to_string(per_row ? rows : cols);
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          describe_input(node, index) + " has shape " + shape_to_string(param) + "; for an operand " +
                              shape_to_string(operand) + " expected a scalar (per tensor), [" + len + "] or [..., " +
                              (per_row ? len + ", 1" : "1, " + len) + "] (per " + (per_row ? "row" : "column") + ")");
  };
  if (param.size() == 1) {
    if (param[0] != (per_row ? rows : cols)) return fail();
    return per_row ? Shape{param[0], 1} : Shape{1, param[0]};
  }
  if (param.size() > rank || param.size() < 2) return fail();
  if (param[param.size() - (per_row ? 1 : 2)] != 1) return fail();
  const size_t offset = rank - param.size();
  for (size_t i = 0; i < param.size(); ++i) {
    if (param[i] != 1 && param[i] != operand[i + offset]) return fail();
  }
  return param;
}

Expected<Tensor> widen_minus_zero_point(const Tensor& q, const Shape& shape, const Tensor* zp, const Shape& zp_view) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(DataType::kInt32, shape));
  int32_t* dst = out.data<int32_t>();
  const int64_t n = out.element_count();
  const std::vector<int32_t> zps = zero_point_values(zp, zp != nullptr ? zp->element_count() : 1);
  auto load = [&](int64_t i) -> int32_t {
    return q.dtype() == DataType::kInt8 ? int32_t{q.data<int8_t>()[i]} : int32_t{q.data<uint8_t>()[i]};
  };
  if (zps.size() == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = load(i) - zps[0];
    return out;
  }
  const std::vector<int64_t> strides[1] = {broadcast_strides(zp_view, shape)};
  for_each_broadcast(shape, strides, [&](int64_t i, const int64_t* off) { dst[i] = load(i) - zps[off[0]]; });
  return out;
}

}  // namespace edgemm::kernels::quant
