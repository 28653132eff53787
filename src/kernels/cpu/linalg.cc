/// \file linalg.cc
/// Det of the default ONNX domain (Operators.md "Det", version 11, the only one).
///
/// Det: X [*, M, M] (zero or more batch dimensions, then square matrices) → Y [*], the
/// determinant of every matrix (a 2-D X gives a scalar, shape []). Computed by LU factorization
/// with partial pivoting (the row with the largest |pivot| is swapped up; a NaN pivot candidate
/// is taken first so that NaN propagates), in float64 for every dtype and rounded to the output
/// dtype on store. A matrix with an all-zero pivot column is singular: its determinant is 0. An
/// empty matrix (M = 0) has determinant 1.
///
/// dtypes: float32, float64, float16 (widened to float64 on load). Errors (kInvalidArgument,
/// naming the node): X of rank < 2, or whose last two dimensions differ; other dtypes are
/// unsupported_dtype().

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace linalg_impl {
namespace {

// Determinant of the m x m row-major matrix `a` (overwritten by its LU factors).
double lu_determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    // Pivot: the largest |a[i][k]| for i >= k (NaN wins, so that it propagates).
    int64_t pivot = k;
    double best = std::abs(a[k * m + k]);
    for (int64_t i = k + 1; i < m && !std::isnan(best); ++i) {
      const double v = std::abs(a[i * m + k]);
      if (std::isnan(v) || v > best) {
        best = v;
        pivot = i;
      }
    }
    if (best == 0.0) return 0.0;  // singular: the whole pivot column below the diagonal is zero
    if (pivot != k) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[k * m + j], a[pivot * m + j]);
      det = -det;
    }
    const double p = a[k * m + k];
    det *= p;
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[i * m + k] / p;
      if (f == 0.0) continue;
      for (int64_t j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
    }
  }
  return det;
}

// Element access per dtype: conversions to and from float64.
double det_load(const float* p, int64_t i) { return p[i]; }
double det_load(const double* p, int64_t i) { return p[i]; }
double det_load(const uint16_t* p, int64_t i) { return half_to_float(p[i]); }
void det_store(float* p, int64_t i, double v) { p[i] = static_cast<float>(v); }
void det_store(double* p, int64_t i, double v) { p[i] = v; }
void det_store(uint16_t* p, int64_t i, double v) { p[i] = float_to_half(static_cast<float>(v)); }

template <typename T>
void det_batches(const T* x, T* y, int64_t batches, int64_t m, int threads) {
  parallel_for(threads, batches, m * m * m, [&](int64_t begin, int64_t end) {
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = det_load(x, b * m * m + i);
      det_store(y, b, lu_determinant(a.data(), m));
    }
  });
}

Status det_run(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input 'X' is required");
  const DataType dt = x->dtype();
  if (dt != DataType::kFloat32 && dt != DataType::kFloat64 && dt != DataType::kFloat16) {
    return unsupported_dtype(node, 0, dt);
  }
  const Shape& s = x->shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input 'X' must be [*, M, M] (square matrices), got shape " + shape_to_string(s));
  }
  const int64_t m = s.back();
  const Shape out_shape(s.begin(), s.end() - 2);
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
  const int64_t batches = y->element_count();
  if (dt == DataType::kFloat32) {
    det_batches(x->data<float>(), y->data<float>(), batches, m, ctx.threads());
  } else if (dt == DataType::kFloat64) {
    det_batches(x->data<double>(), y->data<double>(), batches, m, ctx.threads());
  } else {
    det_batches(x->data<uint16_t>(), y->data<uint16_t>(), batches, m, ctx.threads());
  }
  return Status::ok();
}

}  // namespace
}  // namespace linalg_impl

void register_linalg_kernels(KernelRegistry& registry) {
  registry.add("", "Det", 11, simple_kernel(linalg_impl::det_run));
}

}  // namespace edgemm::kernels
