/// \file topk.cc
/// TopK of the default ONNX domain.
///
/// Follows the ONNX operator spec (Operators.md / Changelog.md):
/// - version 1: `k` is an attribute, `axis` defaults to -1, largest elements, sorted.
/// - version 10: `k` is a 1-element int64 input.
/// - version 11: `largest` (default 1) and `sorted` (default 1) attributes; negative axis.
/// Outputs Values (input dtype) and Indices (int64), both with extent k along `axis`. Equal
/// values are ordered by lower index first, as ONNX Runtime does; the output is always sorted
/// (also for sorted=0, where the spec leaves the order open).
///
/// dtypes: float32, float64, int32, int64, int8, uint8.

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

// Strict ordering for the selection: value first (NaN counts as the largest value, as in
// numpy's sort), then lower index first.
template <typename T, bool kLargest>
struct Before {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const bool a_nan = std::isnan(a.first), b_nan = std::isnan(b.first);
      if (a_nan || b_nan) {
        if (a_nan && b_nan) return a.second < b.second;
        return kLargest ? a_nan : b_nan;
      }
    }
    if (a.first != b.first) return kLargest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

template <typename T, bool kLargest>
void topk_tensor(const T* x, T* values, int64_t* indices, int64_t outer, int64_t n, int64_t inner,
                 int64_t k, int threads) {
  if (k == 0) return;
  parallel_for(threads, outer * inner, n * 4, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<T, int64_t>> items(static_cast<size_t>(n));
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t o = idx / inner, i = idx % inner;
      const T* p = x + o * n * inner + i;
      for (int64_t r = 0; r < n; ++r) items[r] = {p[r * inner], r};
      std::partial_sort(items.begin(), items.begin() + k, items.end(), Before<T, kLargest>());
      T* v = values + o * k * inner + i;
      int64_t* ix = indices + o * k * inner + i;
      for (int64_t r = 0; r < k; ++r) {
        v[r * inner] = items[r].first;
        ix[r * inner] = items[r].second;
      }
    }
  });
}

template <typename T>
void topk_dispatch(const Tensor& x, Tensor& values, Tensor& indices, int64_t outer, int64_t n,
                   int64_t inner, int64_t k, bool largest, int threads) {
  if (largest) {
    topk_tensor<T, true>(x.data<T>(), values.data<T>(), indices.data<int64_t>(), outer, n, inner, k,
                         threads);
  } else {
    topk_tensor<T, false>(x.data<T>(), values.data<T>(), indices.data<int64_t>(), outer, n, inner,
                          k, threads);
  }
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(int64_t axis, bool largest, bool k_from_input, int64_t k_attr)
      : axis_(axis), largest_(largest), k_from_input_(k_from_input), k_attr_(k_attr) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "input 'X' is missing");
    }
    int64_t k = k_attr_;
    if (k_from_input_) {
      const Tensor* kt = ctx.input(1);
      if (kt == nullptr) {
        return ir::node_error(node, StatusCode::kInvalidModel, "input 'K' is missing");
      }
      EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> kv, read_int_values(node, 1, *kt));
      if (kv.size() != 1 || kt->rank() > 1) {
        return ir::node_error(
            node, StatusCode::kInvalidArgument,
            "input 'K' must hold exactly one value, got shape " + shape_to_string(kt->shape()));
      }
      k = kv[0];
    }
    const int64_t rank = x->rank();
    if (rank == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' is a scalar; it needs at least one axis");
    }
    EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_, rank));
    const int64_t n = x->shape()[axis];
    if (k < 0 || k > n) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "k = " + std::to_string(k) + " is out of range for axis " +
                                std::to_string(axis) + " of extent " + std::to_string(n) +
                                " (expected 0.." + std::to_string(n) + ")");
    }
    int64_t outer = 1, inner = 1;
    Shape out_shape = x->shape();
    out_shape[axis] = k;
    for (int64_t i = 0; i < axis; ++i) outer *= x->shape()[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= x->shape()[i];
    const DataType dtype = x->dtype();
    if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64 && dtype != DataType::kInt32 &&
        dtype != DataType::kInt64 && dtype != DataType::kInt8 && dtype != DataType::kUInt8) {
      return unsupported_dtype(node, 0, dtype);
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, dtype, out_shape));
    EDGEMM_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DataType::kInt64, out_shape));
    const int t = ctx.threads();
    switch (dtype) {
      case DataType::kFloat32:
        topk_dispatch<float>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
      case DataType::kFloat64:
        topk_dispatch<double>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
      case DataType::kInt32:
        topk_dispatch<int32_t>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
      case DataType::kInt64:
        topk_dispatch<int64_t>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
      case DataType::kInt8:
        topk_dispatch<int8_t>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
      default:
        topk_dispatch<uint8_t>(*x, *values, *indices, outer, n, inner, k, largest_, t);
        break;
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
  bool largest_;
  bool k_from_input_;
  int64_t k_attr_;
};

Expected<std::unique_ptr<Kernel>> make_topk(const KernelInfo& info) {
  const ir::Node& node = info.node;
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", -1));
  int64_t largest = 1, sorted = 1, k = -1;
  if (info.opset >= 11) {
    EDGEMM_ASSIGN_OR_RETURN(largest, node.attr_int("largest", 1));
    EDGEMM_ASSIGN_OR_RETURN(sorted, node.attr_int("sorted", 1));
  }
  (void)sorted;  // the output is sorted either way
  const bool k_from_input = info.opset >= 10;
  if (!k_from_input) {
    if (!node.has_attr("k")) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute 'k' is required at opset " + std::to_string(info.opset));
    }
    EDGEMM_ASSIGN_OR_RETURN(k, node.attr_int("k", -1));
  }
  return std::unique_ptr<Kernel>(std::make_unique<TopKKernel>(axis, largest != 0, k_from_input, k));
}

}  // namespace

void register_topk_kernels(KernelRegistry& registry) {
  for (int since : {1, 10, 11}) registry.add("", "TopK", since, make_topk);
}

}  // namespace edgemm::kernels
