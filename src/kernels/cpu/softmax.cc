/// \file softmax.cc
/// Softmax, LogSoftmax and Hardmax of the default ONNX domain.
///
/// Follows the ONNX operator spec (Operators.md / Changelog.md):
/// - versions 1 and 11: the input is coerced to 2-D, [prod(shape[:axis]), prod(shape[axis:])],
///   and the operation runs over each row; `axis` defaults to 1 (negative axes from 11).
/// - version 13: the operation runs along the single axis `axis`, which defaults to -1.
/// Softmax(x) = exp(x - max) / sum(exp(x - max)); LogSoftmax(x) = x - max - log(sum(exp(x -
/// max))); both subtract the maximum first, so large inputs do not overflow. Hardmax writes 1
/// at the first maximum of each slice and 0 elsewhere.
///
/// dtypes: float32, float64. float32 exponentials use exp_approx (kernels/cpu/vector_math.h, within
/// ~3e-7 relative) in loops compiled for SSE2, AVX2 and AVX-512F, or NEON (exp_approx4) on
/// aarch64; float64 calls std::exp.

#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/vector_math.h"

namespace edgemm::kernels {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

/// e^d for float32 softmax terms, d = x - max <= 0: exp_approx (within ~3e-7 relative) with d
/// raised to -80 first, so terms stay normal floats (denormal arithmetic is slow): a term below
/// e^-80 ≈ 1.8e-35 comes out as 1.8e-35, an absolute error no float32 consumer can see. NaN
/// propagates.
inline float softmax_exp(float d) { return exp_approx(d < -80.f ? -80.f : d); }

#if defined(__aarch64__)
/// softmax_exp on four lanes, for d <= 0 only: d raised to -80 (FMAX keeps NaN as the clamp
/// does), n = round(d · log2 e) by the 1.5 · 2^23 shifter (its low bits hold n + 127), r = d − n ·
/// ln 2 in two parts, e^r by its Taylor polynomial to r^6 (truncation below 1.2e-7 relative for
/// |r| <= ln 2 / 2), times 2^n made by shifting n + 127 into the exponent (n >= -116: a normal
/// float). Within ~3e-7 relative, as exp_approx, in fewer instructions than exp_approx4 (which
/// covers every d).
inline float32x4_t softmax_exp4(float32x4_t d) {
  const float32x4_t shifter = vdupq_n_f32(12583039.f);  // 1.5 · 2^23 + 127
  d = vmaxq_f32(d, vdupq_n_f32(-80.f));
  const float32x4_t t = vfmaq_f32(shifter, d, vdupq_n_f32(1.44269504088896341f));
  const float32x4_t n = vsubq_f32(t, shifter);
  float32x4_t r = vfmsq_f32(d, n, vdupq_n_f32(0.693359375f));
  r = vfmaq_f32(r, n, vdupq_n_f32(2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.f / 720);
  for (const float c : {1.f / 120, 1.f / 24, 1.f / 6, 0.5f, 1.f, 1.f}) p = vfmaq_f32(vdupq_n_f32(c), p, r);
  return vmulq_f32(p, vreinterpretq_f32_s32(vshlq_n_s32(vreinterpretq_s32_f32(t), 23)));
}

/// y[i] = e^(x[i] - m) for i < n: four lanes at a time, the last 1-3 values through a padded
/// vector (x and y may be the same array).
void exp_shift(const float* x, const float* m, float* y, int64_t n) {
  const float32x4_t shift = vdupq_n_f32(*m);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, softmax_exp4(vsubq_f32(vld1q_f32(x + i), shift)));
  if (i == n) return;
  float t[4] = {};
  for (int64_t j = i; j < n; ++j) t[j - i] = x[j];
  vst1q_f32(t, softmax_exp4(vsubq_f32(vld1q_f32(t), shift)));
  for (int64_t j = i; j < n; ++j) y[j] = t[j - i];
}

/// y[i] = e^(x[i] - m[i]) for i < n, as exp_shift.
void exp_shift_each(const float* x, const float* m, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, softmax_exp4(vsubq_f32(vld1q_f32(x + i), vld1q_f32(m + i))));
  for (; i < n; ++i) y[i] = softmax_exp(x[i] - m[i]);
}
#else
/// y[i] = e^(x[i] - m) for i < n.
EDGEMM_AVX512_CLONES void exp_shift(const float* x, const float* m, float* y, int64_t n) {
  const float shift = *m;
  for (int64_t i = 0; i < n; ++i) y[i] = softmax_exp(x[i] - shift);
}

/// y[i] = e^(x[i] - m[i]) for i < n.
EDGEMM_AVX512_CLONES void exp_shift_each(const float* x, const float* m, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = softmax_exp(x[i] - m[i]);
}
#endif

inline void exp_shift(const double* x, const double* m, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - *m);
}

inline void exp_shift_each(const double* x, const double* m, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m[i]);
}

#if defined(__aarch64__)
/// Maximum of n > 0 values in four NEON accumulators (FMAX returns NaN when either operand is NaN,
/// so a row holding NaN takes the plain definition's path and comes out NaN, as it would here).
inline float max_of(const float* x, int64_t n) {
  if (n < 16) return *std::max_element(x, x + n);
  float32x4_t acc[4];
  for (int j = 0; j < 4; ++j) acc[j] = vld1q_f32(x + 4 * j);
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 4; ++j) acc[j] = vmaxq_f32(acc[j], vld1q_f32(x + i + 4 * j));
  }
  for (; i + 4 <= n; i += 4) acc[0] = vmaxq_f32(acc[0], vld1q_f32(x + i));
  float m = vmaxvq_f32(vmaxq_f32(vmaxq_f32(acc[0], acc[1]), vmaxq_f32(acc[2], acc[3])));
  for (; i < n; ++i) m = x[i] > m || x[i] != x[i] ? x[i] : m;
  return m;
}

/// y[i] = e^(x[i] - m) for i < n (as exp_shift; x and y may be the same array), returning Σ y[i]:
/// eight lanes at a time in float32 partial sums over blocks of 256 values, added up in double;
/// the last 1-3 values as the end of an overlapping vector read before any store.
double exp_shift_sum(const float* x, const float* m, float* y, int64_t n) {
  if (n < 4) {
    exp_shift(x, m, y, n);
    double total = 0;
    for (int64_t i = 0; i < n; ++i) total += y[i];
    return total;
  }
  constexpr int64_t kBlock = 256;
  const float32x4_t shift = vdupq_n_f32(*m);
  const float32x4_t last = vld1q_f32(x + n - 4);
  double total = 0;
  int64_t i = 0;
  while (i + 4 <= n) {
    float32x4_t acc0 = vdupq_n_f32(0.f), acc1 = vdupq_n_f32(0.f);
    const int64_t end = std::min(n, i + kBlock);
    for (; i + 8 <= end; i += 8) {
      const float32x4_t e0 = softmax_exp4(vsubq_f32(vld1q_f32(x + i), shift));
      const float32x4_t e1 = softmax_exp4(vsubq_f32(vld1q_f32(x + i + 4), shift));
      vst1q_f32(y + i, e0);
      vst1q_f32(y + i + 4, e1);
      acc0 = vaddq_f32(acc0, e0);
      acc1 = vaddq_f32(acc1, e1);
    }
    if (i + 4 <= end) {
      const float32x4_t e = softmax_exp4(vsubq_f32(vld1q_f32(x + i), shift));
      vst1q_f32(y + i, e);
      acc0 = vaddq_f32(acc0, e);
      i += 4;
    }
    total += vaddvq_f32(vaddq_f32(acc0, acc1));
  }
  if (i < n) {
    // Lanes 4 - (n - i) .. 3 of the last vector are new; the others repeat stored values.
    static const uint32_t kNew[7] = {0, 0, 0, ~0u, ~0u, ~0u, ~0u};
    const float32x4_t e = softmax_exp4(vsubq_f32(last, shift));
    vst1q_f32(y + n - 4, e);
    const uint32x4_t fresh = vandq_u32(vreinterpretq_u32_f32(e), vld1q_u32(kNew + (n - i) - 1));
    total += vaddvq_f32(vreinterpretq_f32_u32(fresh));
  }
  return total;
}

/// y[i] *= s for i < n.
void scale(float* y, int64_t n, float s) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 4; ++j) vst1q_f32(y + i + 4 * j, vmulq_n_f32(vld1q_f32(y + i + 4 * j), s));
  }
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), s));
  for (; i < n; ++i) y[i] *= s;
}
#else
/// 4-lane float vectors (GCC/Clang vector extensions: SSE2 on x86-64).
typedef float F4 __attribute__((vector_size(16)));

/// Maximum of n > 0 values (NaN is skipped here; it still propagates through exp).
inline float max_of(const float* x, int64_t n) {
  float m = x[0];
  int64_t i = 0;
  if (n >= 16) {
    F4 acc[4];
    for (int j = 0; j < 4; ++j) std::memcpy(&acc[j], x + 4 * j, sizeof(F4));
    for (i = 16; i + 16 <= n; i += 16) {
      for (int j = 0; j < 4; ++j) {
        F4 v;
        std::memcpy(&v, x + i + 4 * j, sizeof v);
        acc[j] = v > acc[j] ? v : acc[j];
      }
    }
    for (int j = 1; j < 4; ++j) acc[0] = acc[j] > acc[0] ? acc[j] : acc[0];
    for (int l = 0; l < 4; ++l) m = std::max(m, acc[0][l]);
  }
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

#endif

inline double max_of(const double* x, int64_t n) {
  double m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

template <typename T>
double sum_lanes(const T* y, int64_t n) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += y[i + j];
  }
  for (; i < n; ++i) acc[0] += y[i];
  double s = 0;
  for (double a : acc) s += a;
  return s;
}

/// y[i] = e^(x[i] - m) for i < n, returning Σ y[i] (summed in double).
template <typename T>
double exp_shift_sum(const T* x, const T* m, T* y, int64_t n) {
  exp_shift(x, m, y, n);
  return sum_lanes(y, n);
}

/// y[i] *= s for i < n.
template <typename T>
void scale(T* y, int64_t n, T s) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

// One contiguous row of length n.
template <SoftmaxKind kKind, typename T>
void row_contiguous(const T* x, T* y, int64_t n) {
  if (n == 0) return;
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (x[i] > x[best]) best = i;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = i == best ? T(1) : T(0);
  } else {
    const T m = max_of(x, n);
    if (!std::isfinite(m)) {
      // All -inf (or +inf/NaN present): fall back to the plain definition, element by element.
      const double mm = static_cast<double>(m);
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i]) - mm);
      for (int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(x[i]) - mm;
        y[i] = static_cast<T>(kKind == SoftmaxKind::kSoftmax ? std::exp(d) / s : d - std::log(s));
      }
      return;
    }
    // y holds exp(x - m) first; both variants finish from it.
    const double s = exp_shift_sum(x, &m, y, n);
    if constexpr (kKind == SoftmaxKind::kSoftmax) {
      scale(y, n, static_cast<T>(1.0 / s));
    } else {
      // (x - m) first: it is exact near the maximum, where x - (m + log s) would round.
      const T log_s = static_cast<T>(std::log(s));
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_s;
    }
  }
}

// Slices along the middle axis of [outer, n, inner], processed in blocks of columns so that
// reads stay contiguous.
template <SoftmaxKind kKind, typename T>
void block_strided(const T* x, T* y, int64_t n, int64_t inner, int64_t b0, int64_t width) {
  constexpr int64_t kBlock = 64;
  T m[kBlock];
  double s[kBlock];
  int64_t best[kBlock];
  for (int64_t j = 0; j < width; ++j) {
    m[j] = x[b0 + j];
    s[j] = 0;
    best[j] = 0;
  }
  for (int64_t r = 1; r < n; ++r) {
    const T* row = x + r * inner + b0;
    for (int64_t j = 0; j < width; ++j) {
      if (row[j] > m[j]) {
        m[j] = row[j];
        best[j] = r;
      }
    }
  }
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    for (int64_t r = 0; r < n; ++r) {
      T* out = y + r * inner + b0;
      for (int64_t j = 0; j < width; ++j) out[j] = best[j] == r ? T(1) : T(0);
    }
  } else {
    bool finite = true;
    for (int64_t j = 0; j < width; ++j) finite = finite && std::isfinite(m[j]);
    for (int64_t r = 0; r < n; ++r) {
      const T* row = x + r * inner + b0;
      T* out = y + r * inner + b0;
      if (finite) {
        exp_shift_each(row, m, out, width);
        for (int64_t j = 0; j < width; ++j) s[j] += out[j];
      } else {
        for (int64_t j = 0; j < width; ++j) {
          out[j] = static_cast<T>(std::exp(static_cast<double>(row[j]) - m[j]));
          s[j] += out[j];
        }
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      const T* row = x + r * inner + b0;
      T* out = y + r * inner + b0;
      for (int64_t j = 0; j < width; ++j) {
        if constexpr (kKind == SoftmaxKind::kSoftmax) {
          out[j] = static_cast<T>(out[j] / s[j]);
        } else {
          out[j] = static_cast<T>(static_cast<double>(row[j]) - m[j] - std::log(s[j]));
        }
      }
    }
  }
}

}  // namespace

void softmax_row(const float* x, float* y, int64_t n) { row_contiguous<SoftmaxKind::kSoftmax, float>(x, y, n); }

EDGEMM_AVX512_CLONES void exp_columns32(float* s, int64_t n, float* sums) {
  float m[32];
  for (int j = 0; j < 32; ++j) {
    m[j] = -std::numeric_limits<float>::infinity();
    sums[j] = 0;
  }
  for (int64_t t = 0; t < n; ++t) {
    const float* row = s + t * 32;
    for (int j = 0; j < 32; ++j) m[j] = row[j] > m[j] ? row[j] : m[j];
  }
  for (int64_t t = 0; t < n; ++t) {
    float* row = s + t * 32;
    for (int j = 0; j < 32; ++j) {
      row[j] = softmax_exp(row[j] - m[j]);
      sums[j] += row[j];
    }
  }
}

namespace {

template <SoftmaxKind kKind, typename T>
void softmax_tensor(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int threads) {
  if (inner == 1) {
    parallel_for(threads, outer, n * 8, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) row_contiguous<kKind, T>(x + o * n, y + o * n, n);
    });
    return;
  }
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallel_for(threads, outer * blocks, n * kBlock * 8, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks;
      const int64_t b0 = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, inner - b0);
      block_strided<kKind, T>(x + o * n * inner, y + o * n * inner, n, inner, b0, width);
    }
  });
}

template <SoftmaxKind kKind>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t axis, bool coerce_2d) : axis_(axis), coerce_2d_(coerce_2d) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "input 'input' is missing");
    }
    const int64_t rank = x->rank();
    if (rank == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'input' is a scalar; it needs at least one axis");
    }
    EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_, rank));
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t d = x->shape()[i];
      if (i < axis) {
        outer *= d;
      } else if (i == axis || coerce_2d_) {
        n *= d;
      } else {
        inner *= d;
      }
    }
    if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kFloat64) {
      return unsupported_dtype(node, 0, x->dtype());
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->element_count() == 0) return Status::ok();
    if (x->dtype() == DataType::kFloat32) {
      softmax_tensor<kKind, float>(x->data<float>(), y->data<float>(), outer, n, inner, ctx.threads());
    } else {
      softmax_tensor<kKind, double>(x->data<double>(), y->data<double>(), outer, n, inner, ctx.threads());
    }
    return Status::ok();
  }

  const char* name() const override {
    return avx512_clones_selected() ? "softmax__avx512" : avx2_clones_selected() ? "softmax__avx2" : "softmax";
  }

 private:
  int64_t axis_;
  bool coerce_2d_;
};

template <SoftmaxKind kKind>
Expected<std::unique_ptr<Kernel>> make_softmax(const KernelInfo& info) {
  const bool coerce_2d = info.opset < 13;
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, info.node.attr_int("axis", coerce_2d ? 1 : -1));
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel<kKind>>(axis, coerce_2d));
}

}  // namespace

void register_softmax_kernels(KernelRegistry& registry) {
  for (int since : {1, 11, 13}) {
    registry.add("", "Softmax", since, make_softmax<SoftmaxKind::kSoftmax>);
    registry.add("", "LogSoftmax", since, make_softmax<SoftmaxKind::kLogSoftmax>);
    registry.add("", "Hardmax", since, make_softmax<SoftmaxKind::kHardmax>);
  }
}

}  // namespace edgemm::kernels
