#pragma once
/// \file int8_gemm_neon.h
/// The uint8 × int8 matrix product under com.edgemm Int8Conv and Int8MatMul on Arm CPUs with the
/// dot-product instructions (SDOT, FEAT_DotProd, Armv8.2; the RK3588's Cortex-A76 and A55 have
/// it) where oneDNN 2.6 has only reference int8 kernels (no SVE). XNNPACK's int8 operators
/// (qc8, qs8) requantize their output to int8, while these nodes finish in float32 (bias,
/// HardSwish, residual adds, kernels/cpu/epilogue.h), so the product is ours.
///
/// Arithmetic, exact in int32: sum[r, n] = Σ_k (a[r, k] − zp) · w[k, n], with a uint8 (zero
/// point zp, 0..255) and w int8. SDOT multiplies signed bytes, so a is read as a − 128 (its top
/// bit flipped) and (128 − zp) · Σ_k w[k, n] is added per column. Then
///   y[r, n] = float(sum[r, n]) · x_scale · w_scales[n] + bias[n]   (float32),
/// the product of the dequantized values that the QDQ graph computes, up to float rounding.
///
/// Register tile: 8 rows × 8 columns (16 int32x4 accumulators); A is repacked per block of 8
/// rows as [K/4][8 rows][4 bytes], B once as [N/8][K/4][8 columns][4 bytes].

#include <cstdint>
#include <vector>

namespace edgemm::kernels::int8_neon {

/// Whether the SDOT kernels run: an aarch64 build, a CPU with dot product (asimddp) where the
/// other Arm kernels run (xnnpack::enabled(): asimd, no SVE, EDGEMM_XNNPACK not "0").
bool enabled();

/// On an aarch64 CPU where the other Arm kernels run but enabled() is false (no dot product:
/// Cortex-A53, A72 and other Armv8.0 cores), prints once per process that int8 Conv/MatMul run
/// oneDNN's reference int8 kernels there, far slower than float32 (docs/aarch64.md). Elsewhere
/// does nothing.
void warn_without_dot_product_once();

#if defined(__aarch64__)

/// Largest K: |sum| stays below 2^31 (each product is at most 128 · 128, the zero-point term as
/// much again).
inline constexpr int64_t kMaxDepth = 65535;

/// Rows of one block: gemm_rows() takes at most this many.
inline constexpr int kBlockRows = 8;

/// One constant int8 B [K, N] (K <= kMaxDepth) packed with its dequantization.
class Int8Gemm {
 public:
  /// B's element (k, n) is w[k * k_stride + n * n_stride]; `w_scales` [N] (per column),
  /// `x_scale` and `x_zero_point` A's quantization, `bias` [N] float32 or null. Copies all.
  Int8Gemm(const int8_t* w, int64_t depth, int64_t columns, int64_t k_stride, int64_t n_stride, const float* w_scales,
           float x_scale, int32_t x_zero_point, const float* bias);

  int64_t depth() const { return depth_; }
  int64_t columns() const { return columns_; }
  /// Bytes of the packed B and its per-column terms.
  int64_t packed_bytes() const {
    return static_cast<int64_t>(packed_.size() + 4 * (correction_.size() + scales_.size() + bias_.size()));
  }

  /// y[i * y_stride + n] for i < count (<= kBlockRows), n < N: the rows rows[i][0..K) (uint8).
  /// On the calling thread; its scratch is per thread.
  void gemm_rows(const uint8_t* const* rows, int count, float* y, int64_t y_stride) const;

  /// The same for `row_count` rows a[r * a_stride + k], split into blocks over `threads` OpenMP
  /// threads.
  void gemm(const uint8_t* a, int64_t a_stride, int64_t row_count, float* y, int64_t y_stride, int threads) const;

 private:
  int64_t depth_, columns_, groups_;  // groups_: K rounded up to 4, over 4
  std::vector<int8_t> packed_;        // [ceil(N/8)][groups_][8][4], zero-padded
  std::vector<int32_t> correction_;   // (128 − zp) · Σ_k w[k, n], padded to a multiple of 8
  std::vector<float> scales_;         // x_scale · w_scales[n], padded
  std::vector<float> bias_;           // bias[n] or 0, padded
};

#endif

}  // namespace edgemm::kernels::int8_neon
