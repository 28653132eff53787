/// \file generate.cc
/// Ops that create tensors from attributes or small inputs, default ONNX domain, opsets
/// 7–17 (ONNX Operators.md): Constant-1/9/11/12/13 (value, value_float(s), value_int(s);
/// value_string(s) and sparse_value are Unsupported: Tensor holds no strings or sparse data),
/// ConstantOfShape-9 (shape input, one-element `value` tensor attribute, default float 0),
/// Range-11 (count = max(ceil((limit - start) / delta), 0), element i = start + i·delta),
/// EyeLike-9 (2-D, ones on diagonal k, dtype attribute or the input's),
/// OneHot-9/11 (indices of any numeric type, negative ones wrap by depth, out-of-range ones
/// give an all-off row as the spec says; values = [off, on]; output axis inserted at `axis`).
/// Sizes read from data are validated before allocating.

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

Status run_constant(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  static const char* const kKeys[] = {"value",         "value_float", "value_floats",
                                      "value_int",     "value_ints",  "value_string",
                                      "value_strings", "sparse_value"};
  std::string key;
  int present = 0;
  for (const char* k : kKeys) {
    if (node.has_attr(k)) {
      ++present;
      key = k;
    }
  }
  if (present != 1) {
    return node_error(
        node, StatusCode::kInvalidModel,
        "needs exactly one of the value* attributes, found " + std::to_string(present));
  }
  if (key == "value") {
    const Tensor* t = node.attr_tensor("value");
    if (t == nullptr || !t->defined()) {
      return node_error(node, StatusCode::kInvalidModel, "attribute 'value' is not a tensor");
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, t->dtype(), t->shape()));
    copy_tensor_bytes(*out, *t);
  } else if (key == "value_float") {
    EDGEMM_ASSIGN_OR_RETURN(float v, node.attr_float(key, 0.0f));
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kFloat32, {}));
    *out->data<float>() = v;
  } else if (key == "value_floats") {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<float> v, node.attr_floats(key));
    EDGEMM_ASSIGN_OR_RETURN(
        Tensor * out, ctx.allocate_output(0, DataType::kFloat32, {static_cast<int64_t>(v.size())}));
    copy_bytes(out->raw_data(), v.data(), v.size() * sizeof(float));
  } else if (key == "value_int") {
    EDGEMM_ASSIGN_OR_RETURN(int64_t v, node.attr_int(key, 0));
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, {}));
    *out->data<int64_t>() = v;
  } else if (key == "value_ints") {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> v, node.attr_ints(key));
    EDGEMM_ASSIGN_OR_RETURN(
        Tensor * out, ctx.allocate_output(0, DataType::kInt64, {static_cast<int64_t>(v.size())}));
    copy_bytes(out->raw_data(), v.data(), v.size() * sizeof(int64_t));
  } else {
    return node_error(node, StatusCode::kUnsupported,
                      "attribute '" + key + "' is not supported (no string or sparse tensors)");
  }
  return Status::ok();
}

Status run_constant_of_shape(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* shape_t, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_int_list(node, *shape_t, "input"));
  DataType dtype = DataType::kFloat32;
  std::vector<unsigned char> value(sizeof(float), 0);
  if (const Tensor* v = node.attr_tensor("value"); v != nullptr && v->defined()) {
    if (v->element_count() != 1) {
      return node_error(
          node, StatusCode::kInvalidModel,
          "attribute 'value' must hold one element, got shape " + shape_to_string(v->shape()));
    }
    dtype = v->dtype();
    value.assign(v->data<char>(), v->data<char>() + dtype_size(dtype));
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, shape, dtype, "input 'input' (the shape)"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, shape));
  fill_elements(out->raw_data(), out->element_count(), dtype_size(dtype), value.data());
  return Status::ok();
}

template <typename T>
Status range_typed(KernelContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d) {
  const ir::Node& node = ctx.node();
  const T start = *s.data<T>(), limit = *l.data<T>(), delta = *d.data<T>();
  if (delta == T{0}) {
    return node_error(node, StatusCode::kInvalidArgument, "input 'delta' is 0");
  }
  int64_t count = 0;
  if constexpr (std::is_floating_point_v<T>) {
    // As ONNX Runtime: the difference in T, the division and ceil in double.
    const double c = std::ceil(static_cast<double>(limit - start) / static_cast<double>(delta));
    if (std::isnan(c)) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "start, limit and delta (" + std::to_string(start) + ", " +
                            std::to_string(limit) + ", " + std::to_string(delta) +
                            ") give no element count");
    }
    if (c > static_cast<double>(kMaxTensorBytes)) {
      return node_error(node, StatusCode::kOutOfMemory,
                        "range of " + std::to_string(c) + " elements exceeds the size limit");
    }
    count = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    // Exact integer arithmetic in 128 bits: limit - start cannot overflow there.
    const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 step = delta;
    __int128 c = 0;
    if (span != 0 && (span > 0) == (step > 0)) {
      c = span / step;
      if (c * step != span) ++c;  // ceil
    }
    if (c > static_cast<__int128>(kMaxTensorBytes)) {
      return node_error(node, StatusCode::kOutOfMemory,
                        "range of more than " + std::to_string(kMaxTensorBytes) +
                            " elements exceeds the size limit");
    }
    count = static_cast<int64_t>(c);
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, {count}, s.dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, s.dtype(), {count}));
  T* o = out->data<T>();
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    } else {
      o[i] = static_cast<T>(static_cast<__int128>(start) + static_cast<__int128>(i) * delta);
    }
  }
  return Status::ok();
}

Status run_range(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 0, "start"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* l, required_input(ctx, 1, "limit"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* d, required_input(ctx, 2, "delta"));
  const char* names[] = {"start", "limit", "delta"};
  const Tensor* all[] = {s, l, d};
  for (int i = 0; i < 3; ++i) {
    if (all[i]->element_count() != 1 || all[i]->dtype() != s->dtype()) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input '" + std::string(names[i]) + "' must be a scalar of dtype " +
                            dtype_name(s->dtype()) + ", got " + dtype_name(all[i]->dtype()) + " " +
                            shape_to_string(all[i]->shape()));
    }
  }
  switch (s->dtype()) {
    case DataType::kFloat32:
      return range_typed<float>(ctx, *s, *l, *d);
    case DataType::kFloat64:
      return range_typed<double>(ctx, *s, *l, *d);
    case DataType::kInt16:
      return range_typed<int16_t>(ctx, *s, *l, *d);
    case DataType::kInt32:
      return range_typed<int32_t>(ctx, *s, *l, *d);
    case DataType::kInt64:
      return range_typed<int64_t>(ctx, *s, *l, *d);
    default:
      return unsupported_dtype(node, 0, s->dtype());
  }
}

Status run_eye_like(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  if (in->rank() != 2) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'input' must be 2-D, got shape " + shape_to_string(in->shape()));
  }
  DataType dtype = in->dtype();
  if (node.has_attr("dtype")) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t d, node.attr_int("dtype", 0));
    dtype = static_cast<DataType>(d);
  }
  if (!is_numeric_or_bool(dtype)) return unsupported_dtype(node, 0, dtype);
  EDGEMM_ASSIGN_OR_RETURN(int64_t k, node.attr_int("k", 0));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, in->shape()));
  if (out->element_count() == 0) return Status::ok();
  std::memset(out->raw_data(), 0, out->byte_size());
  const int64_t rows = in->shape()[0], cols = in->shape()[1];
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < cols) store_from_double(dtype, out->raw_data(), i * cols + j, 1.0);
  }
  return Status::ok();
}

Status run_one_hot(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 0, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* depth_t, required_input(ctx, 1, "depth"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* values, required_input(ctx, 2, "values"));
  if (!is_numeric_or_bool(indices->dtype()) || indices->dtype() == DataType::kBool) {
    return unsupported_dtype(node, 0, indices->dtype());
  }
  if (depth_t->element_count() != 1 || !is_numeric_or_bool(depth_t->dtype())) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'depth' must be a numeric scalar, got " +
                          std::string(dtype_name(depth_t->dtype())) + " " +
                          shape_to_string(depth_t->shape()));
  }
  const int64_t depth = load_as_int64(depth_t->dtype(), depth_t->raw_data(), 0);
  if (depth < 1) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'depth' must be positive, got " + std::to_string(depth));
  }
  if (values->element_count() != 2) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'values' must hold 2 elements [off, on], got shape " +
                          shape_to_string(values->shape()));
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", -1));
  const int64_t out_rank = indices->rank() + 1;
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, out_rank));
  Shape out_shape = indices->shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, values->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, values->dtype(), out_shape));
  const size_t elem = dtype_size(values->dtype());
  const auto* off = values->data<char>();
  const auto* on = off + elem;
  fill_elements(out->raw_data(), out->element_count(), elem, off);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < indices->rank(); ++k) (k < axis ? outer : inner) *= indices->shape()[k];
  auto* dst = out->data<char>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = load_as_int64(indices->dtype(), indices->raw_data(), o * inner + i);
      if (!wrap_index(v, depth)) continue;  // out of range: the row stays all "off"
      copy_bytes(dst + ((o * depth + v) * inner + i) * elem, on, elem);
    }
  }
  return Status::ok();
}

}  // namespace

void register_generate_kernels(KernelRegistry& registry) {
  registry.add("", "Constant", 1, simple_kernel(run_constant));
  registry.add("", "ConstantOfShape", 9, simple_kernel(run_constant_of_shape));
  registry.add("", "Range", 11, simple_kernel(run_range));
  registry.add("", "EyeLike", 9, simple_kernel(run_eye_like));
  registry.add("", "OneHot", 9, simple_kernel(run_one_hot));
}

}  // namespace edgemm::kernels
