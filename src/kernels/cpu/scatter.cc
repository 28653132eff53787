/// \file scatter.cc
/// Index-driven writes, default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Scatter-9/11 (deprecated alias of ScatterElements without reduction),
/// ScatterElements-11/13/16 and ScatterND-11/13/16 (output = copy of data with updates
/// written at the indexed positions; `reduction` none/add/mul from opset 16, and max/min as
/// opset 18 defines them, accepted early). With reduction none and repeated indices the
/// last update wins (the spec leaves the order undefined). Indices are int32/int64,
/// negative values wrap, out-of-range ones are InvalidArgument errors. Reductions run on
/// every numeric dtype and bool (add = or, mul = and); plain scatter on every dtype.

#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Expected<Reduction> read_reduction(const ir::Node& node, int64_t opset) {
  if (opset < 16) return Reduction::kNone;
  EDGEMM_ASSIGN_OR_RETURN(std::string r, node.attr_string("reduction", "none"));
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return node_error(node, StatusCode::kInvalidArgument,
                    "attribute 'reduction' must be none, add, mul, max or min, got '" + r + "'");
}

/// Applies `n` updates from `upd` onto `dst` elementwise with the reduction (typed).
template <typename T>
void combine(T* dst, const T* upd, int64_t n, Reduction red) {
  using Tr = NumTraits<T>;
  for (int64_t i = 0; i < n; ++i) {
    const auto a = Tr::load(dst[i]);
    const auto b = Tr::load(upd[i]);
    switch (red) {
      case Reduction::kAdd:
        if constexpr (std::is_same_v<T, bool>) {
          dst[i] = a || b;
        } else {
          dst[i] = Tr::store(a + b);
        }
        break;
      case Reduction::kMul:
        if constexpr (std::is_same_v<T, bool>) {
          dst[i] = a && b;
        } else {
          dst[i] = Tr::store(a * b);
        }
        break;
      case Reduction::kMax:
        dst[i] = Tr::store(a < b ? b : a);
        break;
      case Reduction::kMin:
        dst[i] = Tr::store(b < a ? b : a);
        break;
      case Reduction::kNone:
        dst[i] = upd[i];
        break;
    }
  }
}

/// Writes `n` elements of `elem` bytes from `upd` to `dst` with the reduction.
void apply_update(void* dst, const void* upd, int64_t n, DataType dtype, Reduction red) {
  if (red == Reduction::kNone) {
    copy_bytes(dst, upd, static_cast<size_t>(n) * dtype_size(dtype));
    return;
  }
  dispatch_numeric(
      dtype,
      [&]<typename T>() { combine(static_cast<T*>(dst), static_cast<const T*>(upd), n, red); },
      /*with_bool=*/true);
}

Status check_reduction_dtype(const ir::Node& node, DataType dtype, Reduction red) {
  if (red == Reduction::kNone || is_numeric_or_bool(dtype)) return Status::ok();
  return unsupported_dtype(node, 0, dtype);
}

/// ScatterElements (and Scatter): out[i with i_axis := indices[i]] (op)= updates[i].
Status run_scatter_elements(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* updates, required_input(ctx, 2, "updates"));
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, *indices, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(Reduction red, read_reduction(node, opset));
  EDGEMM_RETURN_IF_ERROR(check_reduction_dtype(node, data->dtype(), red));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, data->rank()));
  if (updates->dtype() != data->dtype() || updates->shape() != indices->shape()) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'updates' (" + std::string(dtype_name(updates->dtype())) + " " +
                          shape_to_string(updates->shape()) + ") must match the dtype of 'data' (" +
                          dtype_name(data->dtype()) + ") and the shape of 'indices' " +
                          shape_to_string(indices->shape()));
  }
  bool ok = indices->rank() == data->rank();
  for (int64_t k = 0; ok && k < data->rank(); ++k) {
    ok = k == axis || indices->shape()[k] <= data->shape()[k];
  }
  if (!ok) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'indices' of shape " + shape_to_string(indices->shape()) +
                          " does not fit input 'data' of shape " + shape_to_string(data->shape()));
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), data->shape()));
  copy_tensor_bytes(*out, *data);
  const int64_t count = indices->element_count();
  const int64_t rank = data->rank();
  const int64_t dim = data->shape()[axis];
  const std::vector<int64_t> dstride = contiguous_strides(data->shape());
  const size_t elem = dtype_size(data->dtype());
  auto* dst = out->data<char>();
  const auto* upd = updates->data<char>();
  IndexView view(*indices);
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  int64_t base = 0;
  for (int64_t j = 0; j < count; ++j) {
    int64_t v = view[j];
    if (!wrap_index(v, dim)) return index_out_of_range(node, view[j], axis, dim, "indices");
    apply_update(dst + (base + v * dstride[axis]) * elem, upd + j * elem, 1, data->dtype(), red);
    for (int64_t k = rank - 1; k >= 0; --k) {
      if (k != axis) base += dstride[k];
      if (++pos[k] < indices->shape()[k]) break;
      if (k != axis) base -= dstride[k] * pos[k];
      pos[k] = 0;
    }
  }
  return Status::ok();
}

/// ScatterND: out[indices[i0..iq-2, :]] (op)= updates[i0..iq-2] (a slice of data.shape[k:]).
Status run_scatter_nd(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* updates, required_input(ctx, 2, "updates"));
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, *indices, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(Reduction red, read_reduction(node, opset));
  EDGEMM_RETURN_IF_ERROR(check_reduction_dtype(node, data->dtype(), red));
  const int64_t r = data->rank(), q = indices->rank();
  const int64_t k = q >= 1 ? indices->shape()[q - 1] : 0;
  if (r < 1 || q < 1 || k < 1 || k > r) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "needs data and indices of rank >= 1 with the last extent of 'indices' in "
                      "[1, rank(data)]; got data " +
                          shape_to_string(data->shape()) + ", indices " +
                          shape_to_string(indices->shape()));
  }
  Shape want(indices->shape().begin(), indices->shape().end() - 1);
  want.insert(want.end(), data->shape().begin() + k, data->shape().end());
  if (updates->dtype() != data->dtype() || updates->shape() != want) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'updates' is " + std::string(dtype_name(updates->dtype())) + " " +
                          shape_to_string(updates->shape()) + ", expected " +
                          dtype_name(data->dtype()) + " " + shape_to_string(want));
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), data->shape()));
  copy_tensor_bytes(*out, *data);
  int64_t rows = 1, block = 1;
  for (int64_t j = 0; j < q - 1; ++j) rows *= indices->shape()[j];
  for (int64_t j = k; j < r; ++j) block *= data->shape()[j];
  std::vector<int64_t> stride(static_cast<size_t>(k));
  int64_t s = block;
  for (int64_t j = k - 1; j >= 0; --j) {
    stride[j] = s;
    s *= data->shape()[j];
  }
  const size_t elem = dtype_size(data->dtype());
  auto* dst = out->data<char>();
  const auto* upd = updates->data<char>();
  IndexView view(*indices);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = view[row * k + j];
      const int64_t dim = data->shape()[j];
      if (!wrap_index(v, dim))
        return index_out_of_range(node, view[row * k + j], j, dim, "indices");
      offset += v * stride[j];
    }
    apply_update(dst + offset * elem, upd + row * block * elem, block, data->dtype(), red);
  }
  return Status::ok();
}

}  // namespace

void register_scatter_kernels(KernelRegistry& registry) {
  registry.add("", "Scatter", 9, versioned_kernel([](KernelContext& ctx, int64_t) {
                 return run_scatter_elements(ctx, /*opset=*/9);  // never has `reduction`
               }));
  registry.add("", "ScatterElements", 11, versioned_kernel(run_scatter_elements));
  registry.add("", "ScatterND", 11, versioned_kernel(run_scatter_nd));
}

}  // namespace edgemm::kernels
