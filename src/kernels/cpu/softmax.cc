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
/// dtypes: float32, float64.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

/// exp(x) for float32 with about 1 ulp error and no libm call: x = n ln2 + r with |r| <=
/// ln2/2, exp(r) by a degree-6 polynomial, 2^n through the exponent bits. Returns 0 below
/// -87.3 (where exp would be subnormal) and clamps above 88. Written once for GCC/Clang
/// vector extensions (4 lanes: SSE2 on x86-64, NEON on aarch64) and once for scalars.
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));

template <typename V, typename I>
inline V exp_poly(V x, V lo, V hi) {
  V c = x < lo ? lo : x;
  c = c > hi ? hi : c;
  const V round = lo * 0.0f + 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const V shifted = c * 1.44269504088896341f + round;
  const V n = shifted - round;
  const I n_bits = std::bit_cast<I>(shifted) - std::bit_cast<I>(round);
  const V r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  V p = lo * 0.0f + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const V result = p * std::bit_cast<V>((n_bits + 127) << 23);
  return x < lo ? lo * 0.0f : result;
}

inline F4 exp_f4(F4 x) { return exp_poly<F4, I4>(x, F4{} - 87.3f, F4{} + 88.0f); }

inline float exp_f32(float x) {
  if (x != x) return x;  // NaN
  if (x < -87.3f) return 0.0f;
  const float c = x > 88.0f ? 88.0f : x;
  const float shifted = c * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const int32_t n_bits = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(12582912.0f);
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * std::bit_cast<float>((n_bits + 127) << 23);
}

/// y[i] = exp(x[i] - m[i or 0]) for i < n; `m_stride` is 0 (one shift) or 1 (per element).
inline void exp_shift(const float* x, const float* m, int64_t m_stride, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    F4 v, mv;
    std::memcpy(&v, x + i, sizeof v);
    if (m_stride == 0) {
      mv = F4{} + m[0];
    } else {
      std::memcpy(&mv, m + i, sizeof mv);
    }
    const F4 e = exp_f4(v - mv);
    std::memcpy(y + i, &e, sizeof e);
  }
  for (; i < n; ++i) y[i] = exp_f32(x[i] - m[i * m_stride]);
}

inline void exp_shift(const double* x, const double* m, int64_t m_stride, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m[i * m_stride]);
}

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
    exp_shift(x, &m, 0, y, n);
    const double s = sum_lanes(y, n);
    if constexpr (kKind == SoftmaxKind::kSoftmax) {
      const T inv = static_cast<T>(1.0 / s);
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
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
        exp_shift(row, m, 1, out, width);
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
      softmax_tensor<kKind, float>(x->data<float>(), y->data<float>(), outer, n, inner,
                                   ctx.threads());
    } else {
      softmax_tensor<kKind, double>(x->data<double>(), y->data<double>(), outer, n, inner,
                                    ctx.threads());
    }
    return Status::ok();
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
