/// \file trilu_cumsum.cc
/// Default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Trilu-14: keeps the upper (upper=1: j - i >= k) or lower (upper=0: j - i <= k) triangle of
/// the last two axes, zeroes the rest; optional int64 scalar input k. All dtypes (zero is
/// the all-zero bit pattern in every dtype).
/// CumSum-11/14: cumulative sum along the scalar `axis` input; exclusive=1 starts from 0
/// (each output excludes its own element), reverse=1 sums from the end. Numeric dtypes;
/// float16/bfloat16 accumulate in float32, others in their own type.

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

/// Reads an optional scalar integer input (int32/int64, rank 0 or one element).
Expected<int64_t> read_int_scalar(const ir::Node& node, const Tensor& t, const char* what) {
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, t, what));
  if (t.element_count() != 1 || t.rank() > 1) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input '" + std::string(what) + "' must be a scalar, got shape " +
                          shape_to_string(t.shape()));
  }
  return IndexView(t)[0];
}

Status run_trilu(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  if (in->rank() < 2) {
    return node_error(
        node, StatusCode::kInvalidArgument,
        "input 'input' must have rank >= 2, got shape " + shape_to_string(in->shape()));
  }
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1); kt != nullptr && kt->defined()) {
    EDGEMM_ASSIGN_OR_RETURN(k, read_int_scalar(node, *kt, "k"));
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t upper, node.attr_int("upper", 1));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), in->shape()));
  copy_tensor_bytes(*out, *in);
  if (out->element_count() == 0) return Status::ok();
  const int64_t rows = in->dim(-2), cols = in->dim(-1);
  const int64_t matrices = in->element_count() / (rows * cols);
  // Beyond ±(rows + cols) every k behaves the same; clamping keeps i + k from overflowing.
  k = std::clamp<int64_t>(k, -(rows + cols), rows + cols);
  const size_t elem = dtype_size(in->dtype());
  auto* base = out->data<char>();
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      char* row = base + ((m * rows + i) * cols) * static_cast<int64_t>(elem);
      int64_t z0, z1;  // zeroed columns [z0, z1)
      if (upper != 0) {
        z0 = 0;
        z1 = std::clamp<int64_t>(i + k, 0, cols);
      } else {
        z0 = std::clamp<int64_t>(i + k + 1, 0, cols);
        z1 = cols;
      }
      if (z1 > z0) std::memset(row + z0 * elem, 0, static_cast<size_t>(z1 - z0) * elem);
    }
  }
  return Status::ok();
}

template <typename T>
void cumsum_typed(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner, bool exclusive,
                  bool reverse) {
  using Tr = NumTraits<T>;
  using C = typename Tr::Compute;
  std::vector<C> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), C{});
    for (int64_t s = 0; s < dim; ++s) {
      const int64_t t = reverse ? dim - 1 - s : s;
      const T* xr = x + (o * dim + t) * inner;
      T* yr = y + (o * dim + t) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (exclusive) {
          yr[i] = Tr::store(acc[i]);
          acc[i] = static_cast<C>(acc[i] + Tr::load(xr[i]));
        } else {
          acc[i] = static_cast<C>(acc[i] + Tr::load(xr[i]));
          yr[i] = Tr::store(acc[i]);
        }
      }
    }
  }
}

Status run_cumsum(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "x"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* axis_t, required_input(ctx, 1, "axis"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_v, read_int_scalar(node, *axis_t, "axis"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_v, x->rank()));
  EDGEMM_ASSIGN_OR_RETURN(int64_t exclusive, node.attr_int("exclusive", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t reverse, node.attr_int("reverse", 0));
  if (!is_numeric_or_bool(x->dtype()) || x->dtype() == DataType::kBool) {
    return unsupported_dtype(node, 0, x->dtype());
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < x->rank(); ++k) {
    if (k < axis) outer *= x->shape()[k];
    if (k > axis) inner *= x->shape()[k];
  }
  const int64_t dim = x->shape()[axis];
  dispatch_numeric(x->dtype(), [&]<typename T>() {
    cumsum_typed(x->data<T>(), y->data<T>(), outer, dim, inner, exclusive != 0, reverse != 0);
  });
  return Status::ok();
}

}  // namespace

void register_trilu_cumsum_kernels(KernelRegistry& registry) {
  registry.add("", "Trilu", 14, simple_kernel(run_trilu));
  registry.add("", "CumSum", 11, simple_kernel(run_cumsum));
}

}  // namespace edgemm::kernels
