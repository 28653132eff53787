/// \file nonzero_unique.cc
/// Data-dependent output sizes, default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// NonZero-9/13: int64 [rank, nnz] coordinates of the non-zero elements in row-major order
/// (like numpy.nonzero; a scalar input is treated as shape [1], as ONNX Runtime does).
/// Unique-11: unique elements (no axis: of the flattened input) or unique slices along
/// `axis`; sorted=1 orders them ascending (lexicographically for slices), sorted=0 by first
/// occurrence; optional outputs indices (first occurrence), inverse_indices and counts, all
/// int64. NaNs compare equal to each other and above all numbers; -0.0 equals 0.0.
/// Both accept every numeric dtype and bool.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

template <typename T>
bool is_nonzero(T v) {
  const auto c = NumTraits<T>::load(v);
  return c != decltype(c){};
}

Status run_nonzero(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "X"));
  if (!is_numeric_or_bool(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
  const Shape shape = x->rank() == 0 ? Shape{1} : x->shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t n = x->element_count();
  std::vector<int64_t> hits;
  dispatch_numeric(
      x->dtype(),
      [&]<typename T>() {
        const T* p = x->data<T>();
        for (int64_t i = 0; i < n; ++i) {
          if (is_nonzero(p[i])) hits.push_back(i);
        }
      },
      true);
  const int64_t nnz = static_cast<int64_t>(hits.size());
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, {rank, nnz}));
  int64_t* o = out->data<int64_t>();
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t rem = hits[j];
    for (int64_t k = rank - 1; k >= 0; --k) {
      o[k * nnz + j] = rem % shape[k];
      rem /= shape[k];
    }
  }
  return Status::ok();
}

/// Three-way comparison of two values for Unique: NaN equals NaN and is above numbers.
template <typename T>
int compare_values(T a, T b) {
  const auto x = NumTraits<T>::load(a);
  const auto y = NumTraits<T>::load(b);
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

/// Sorts slice ids [0, dim) (slice s = elements (o, s, i)) and groups equal slices.
/// Returns the group of each slice and, per group, its first slice and count.
template <typename T>
void group_slices(const T* x, int64_t outer, int64_t dim, int64_t inner,
                  std::vector<int64_t>& group_of, std::vector<int64_t>& first,
                  std::vector<int64_t>& count) {
  auto cmp = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      const T* pa = x + (o * dim + a) * inner;
      const T* pb = x + (o * dim + b) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int c = compare_values(pa[i], pb[i]);
        if (c != 0) return c;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  group_of.assign(static_cast<size_t>(dim), 0);
  for (size_t j = 0; j < order.size(); ++j) {
    if (j == 0 || cmp(order[j - 1], order[j]) != 0) {
      first.push_back(order[j]);  // stable sort: the smallest index of its group
      count.push_back(0);
    }
    group_of[order[j]] = static_cast<int64_t>(first.size()) - 1;
    ++count.back();
  }
}

Status run_unique(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "X"));
  if (!is_numeric_or_bool(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
  EDGEMM_ASSIGN_OR_RETURN(int64_t sorted, node.attr_int("sorted", 1));
  int64_t outer = 1, dim = x->element_count(), inner = 1, axis = -1;
  if (node.has_attr("axis")) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, node.attr_int("axis", 0));
    EDGEMM_ASSIGN_OR_RETURN(axis, normalize_axis(node, a, x->rank()));
    dim = x->shape()[axis];
    for (int64_t k = 0; k < x->rank(); ++k) {
      if (k < axis) outer *= x->shape()[k];
      if (k > axis) inner *= x->shape()[k];
    }
  }
  std::vector<int64_t> group_of, first, count;
  dispatch_numeric(
      x->dtype(),
      [&]<typename T>() { group_slices(x->data<T>(), outer, dim, inner, group_of, first, count); },
      true);
  const int64_t groups = static_cast<int64_t>(first.size());
  // Output position of each group: sorted order as is, or by first occurrence.
  std::vector<int64_t> pos_of(static_cast<size_t>(groups));
  std::iota(pos_of.begin(), pos_of.end(), int64_t{0});
  if (sorted == 0) {
    std::vector<int64_t> by_first(static_cast<size_t>(groups));
    std::iota(by_first.begin(), by_first.end(), int64_t{0});
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t p = 0; p < groups; ++p) pos_of[by_first[p]] = p;
  }
  std::vector<int64_t> first_at(static_cast<size_t>(groups)), count_at(first_at.size());
  for (int64_t g = 0; g < groups; ++g) {
    first_at[pos_of[g]] = first[g];
    count_at[pos_of[g]] = count[g];
  }

  Shape y_shape = {groups};
  if (axis >= 0) {
    y_shape = x->shape();
    y_shape[axis] = groups;
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), y_shape));
  const size_t block = static_cast<size_t>(inner) * dtype_size(x->dtype());
  const auto* src = x->data<char>();
  auto* dst = y->data<char>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < groups; ++p) {
      copy_bytes(dst + (o * groups + p) * block, src + (o * dim + first_at[p]) * block, block);
    }
  }
  auto write = [&](int i, const std::vector<int64_t>& v) -> Status {
    if (ctx.output_count() <= i || !ctx.output_wanted(i)) return Status::ok();
    EDGEMM_ASSIGN_OR_RETURN(
        Tensor * t, ctx.allocate_output(i, DataType::kInt64, {static_cast<int64_t>(v.size())}));
    copy_bytes(t->raw_data(), v.data(), v.size() * sizeof(int64_t));
    return Status::ok();
  };
  EDGEMM_RETURN_IF_ERROR(write(1, first_at));
  std::vector<int64_t> inverse(static_cast<size_t>(dim));
  for (int64_t s = 0; s < dim; ++s) inverse[s] = pos_of[group_of[s]];
  EDGEMM_RETURN_IF_ERROR(write(2, inverse));
  EDGEMM_RETURN_IF_ERROR(write(3, count_at));
  return Status::ok();
}

}  // namespace

void register_nonzero_unique_kernels(KernelRegistry& registry) {
  registry.add("", "NonZero", 9, simple_kernel(run_nonzero));
  registry.add("", "Unique", 11, simple_kernel(run_unique));
}

}  // namespace edgemm::kernels
