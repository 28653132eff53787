/// \file lrn.cc
/// LRN (local response normalization across channels) of the default ONNX domain
/// (Operators.md "LRN" 1 and 13).
///
/// X [N, C, D1, ..., Dk] (rank >= 2) → Y of X's shape:
///   square_sum[n, c, d] = sum of X[n, i, d]² for i in [max(0, c - floor((size - 1) / 2)),
///                                                     min(C - 1, c + ceil((size - 1) / 2))]
///   Y[n, c, d] = X[n, c, d] / (bias + alpha / size * square_sum[n, c, d]) ^ beta
/// Attributes: size (required, > 0), alpha (default 1e-4), beta (0.75), bias (1.0).
/// dtypes: float16, float32, float64 (LRN-13 adds bfloat16); computed in float64 and rounded
/// once. Errors name the node: a missing or non-positive size (kInvalidModel), rank < 2
/// (kInvalidArgument), other dtypes (unsupported_dtype).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace lrn_impl {
namespace {

struct LrnAttrs {
  int64_t size = 0;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
  elementwise::DTypeSet allowed = 0;
};

/// LRN over float or double storage.
template <typename T>
void lrn(const LrnAttrs& at, const Shape& shape, const T* x, T* y, int threads) {
  const int64_t n = shape[0], channels = shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  const int64_t before = (at.size - 1) / 2, after = at.size - 1 - before;  // floor and ceil of (size-1)/2
  const double alpha_over_size = static_cast<double>(at.alpha) / static_cast<double>(at.size);
  parallel_for(threads, n * channels, spatial * std::min(at.size, channels), [&](int64_t begin, int64_t end) {
    std::vector<double> sums(static_cast<size_t>(spatial));
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t b = nc / channels, c = nc % channels;
      const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(channels - 1, c + after);
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t i = lo; i <= hi; ++i) {
        const T* xi = x + (b * channels + i) * spatial;
        for (int64_t s = 0; s < spatial; ++s) sums[s] += static_cast<double>(xi[s]) * static_cast<double>(xi[s]);
      }
      const T* xc = x + nc * spatial;
      T* yc = y + nc * spatial;
      for (int64_t s = 0; s < spatial; ++s) {
        const double denom = std::pow(static_cast<double>(at.bias) + alpha_over_size * sums[s], at.beta);
        yc[s] = static_cast<T>(static_cast<double>(xc[s]) / denom);
      }
    }
  });
}

class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(LrnAttrs at) : at_(at) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, elementwise::need_input(ctx, 0));
    const DataType dt = x->dtype();
    if (!elementwise::dtype_in(at_.allowed, dt)) return unsupported_dtype(node, 0, dt);
    if (x->rank() < 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + elementwise::input_name(node, 0) + "' must have rank >= 2 [N, C, ...], got " +
                                shape_to_string(x->shape()));
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
    if (y->element_count() == 0) return Status::ok();
    const int threads = ctx.threads();
    if (dt == DataType::kFloat32) {
      lrn<float>(at_, x->shape(), x->data<float>(), y->data<float>(), threads);
    } else if (dt == DataType::kFloat64) {
      lrn<double>(at_, x->shape(), x->data<double>(), y->data<double>(), threads);
    } else {  // float16 / bfloat16 through float32
      EDGEMM_ASSIGN_OR_RETURN(Tensor x32, elementwise::to_float32(node, *x, threads));
      EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, x->shape()));
      lrn<float>(at_, x->shape(), x32.data<float>(), y32.data<float>(), threads);
      return elementwise::convert_tensor(node, y32, *y, threads);
    }
    return Status::ok();
  }

 private:
  LrnAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_lrn(const KernelInfo& info, elementwise::DTypeSet allowed) {
  const ir::Node& node = info.node;
  LrnAttrs at;
  at.allowed = allowed;
  if (!node.has_attr("size")) return ir::node_error(node, StatusCode::kInvalidModel, "attribute size is required");
  EDGEMM_ASSIGN_OR_RETURN(at.size, node.attr_int("size", 0));
  if (at.size <= 0) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute size must be > 0, got " + std::to_string(at.size));
  }
  EDGEMM_ASSIGN_OR_RETURN(at.alpha, node.attr_float("alpha", at.alpha));
  EDGEMM_ASSIGN_OR_RETURN(at.beta, node.attr_float("beta", at.beta));
  EDGEMM_ASSIGN_OR_RETURN(at.bias, node.attr_float("bias", at.bias));
  return std::unique_ptr<Kernel>(std::make_unique<LrnKernel>(at));
}

}  // namespace
}  // namespace lrn_impl

/// Registers LRN (opsets 1 and 13) in `registry`.
void register_lrn_kernels(KernelRegistry& registry) {
  using elementwise::kBFloat16Set;
  using elementwise::kFloatSet;
  registry.add("", "LRN", 1, [](const KernelInfo& info) { return lrn_impl::make_lrn(info, kFloatSet); });
  registry.add("", "LRN", 13,
               [](const KernelInfo& info) { return lrn_impl::make_lrn(info, kFloatSet | kBFloat16Set); });
}

}  // namespace edgemm::kernels
