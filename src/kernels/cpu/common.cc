#include "kernels/cpu/common.h"

namespace edgemm::kernels {

Expected<int64_t> normalize_axis(const ir::Node& node, int64_t axis, int64_t rank) {
  const int64_t lo = -rank, hi = rank - 1;
  if (axis < lo || axis > hi) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                              " (expected " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

Expected<Shape> broadcast_shapes(const ir::Node& node, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                                " cannot be broadcast (axis " + std::to_string(i) + ": " + std::to_string(da) + " vs " +
                                std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const auto in_strides = contiguous_strides(in);
  const size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) strides[i + offset] = in[i] == 1 ? 0 : in_strides[i];
  return strides;
}

const char* onnx_only_type_name(int64_t onnx_type) {
  switch (onnx_type) {
    case 14:
      return "complex64";
    case 15:
      return "complex128";
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    case 23:
      return "float4e2m1";
    default:
      return nullptr;
  }
}

Status unsupported_dtype(const ir::Node& node, int input_index, DataType dtype) {
  const std::string name = input_index < static_cast<int>(node.inputs.size()) ? node.inputs[input_index] : "?";
  return ir::node_error(node, StatusCode::kUnsupported,
                        "input " + std::to_string(input_index) + " '" + name + "' has dtype " + dtype_name(dtype) +
                            ", which this op does not support here");
}

Expected<std::vector<int64_t>> read_int_values(const ir::Node& node, int input_index, const Tensor& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.element_count()));
  if (tensor.dtype() == DataType::kInt64) {
    for (size_t i = 0; i < values.size(); ++i) values[i] = tensor.data<int64_t>()[i];
  } else if (tensor.dtype() == DataType::kInt32) {
    for (size_t i = 0; i < values.size(); ++i) values[i] = tensor.data<int32_t>()[i];
  } else {
    return unsupported_dtype(node, input_index, tensor.dtype());
  }
  return values;
}

}  // namespace edgemm::kernels
