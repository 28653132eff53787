/// \file int8_gemm_neon.cc
/// The SDOT uint8 × int8 product (int8_gemm_neon.h): packing of B and of 8-row blocks of A, the
/// 8×8 register tile, the float32 dequantization of its sums.

#include "kernels/cpu/int8_gemm_neon.h"

#include <cstdio>
#include <mutex>

#include "kernels/cpu/xnnpack.h"
#include "kernels/cpu_features.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#endif

namespace edgemm::kernels::int8_neon {

bool enabled() {
#if defined(__aarch64__)
  return cpu_features().asimddp && xnnpack::enabled();
#else
  return false;
#endif
}

void warn_without_dot_product_once() {
#if defined(__aarch64__)
  if (enabled() || !xnnpack::enabled()) return;
  static std::once_flag once;
  std::call_once(once, [] {
    std::fprintf(stderr,
                 "edgemm: warning: this Arm CPU has no dot-product instructions (asimddp); int8 Conv and MatMul run "
                 "oneDNN's reference int8 kernels here, far slower than float32 (docs/aarch64.md)\n");
  });
#endif
}

#if defined(__aarch64__)

// The dot-product intrinsics need Armv8.2-A with the DotProd extension; callers check enabled().
#define EDGEMM_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

namespace {

constexpr int64_t kCols = 8;  // columns of the register tile

/// Stores 16 bytes of each of 8 rows (`r`, top bits already flipped), four groups of four, as
/// the first `count` (1..4) groups of a panel at `out` ([group][8 rows][4 bytes]): the 32-bit
/// words of each 4 rows transposed.
inline void store_groups(const uint8x16_t r[kBlockRows], int8_t* out, int count) {
  for (int h = 0; h < 2; ++h) {
    const uint32x4_t r0 = vreinterpretq_u32_u8(r[4 * h]), r1 = vreinterpretq_u32_u8(r[4 * h + 1]);
    const uint32x4_t r2 = vreinterpretq_u32_u8(r[4 * h + 2]), r3 = vreinterpretq_u32_u8(r[4 * h + 3]);
    const uint64x2_t a = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1)), b = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
    const uint64x2_t c = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3)), d = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
    const uint64x2_t g[4] = {vtrn1q_u64(a, c), vtrn1q_u64(b, d), vtrn2q_u64(a, c), vtrn2q_u64(b, d)};
    for (int j = 0; j < count; ++j) vst1q_s8(out + j * 32 + 16 * h, vreinterpretq_s8_u64(g[j]));
  }
}

/// Packs rows[0..8)[0..depth) into panel [groups][8 rows][4 bytes], each byte with its top bit
/// flipped (a − 128 as int8). The last 1..15 bytes of a row are read as the end of a 16-byte
/// load shifted down (rows of 16 bytes or more) or copied byte by byte; the bytes of the last
/// group past `depth` meet zero weights.
void pack_rows(const uint8_t* const* rows, int64_t depth, int8_t* panel) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const int64_t whole = depth / 16;
  uint8x16_t r[kBlockRows];
  for (int64_t q = 0; q < whole; ++q) {
    for (int i = 0; i < kBlockRows; ++i) r[i] = veorq_u8(vld1q_u8(rows[i] + 16 * q), flip);
    store_groups(r, panel + q * 4 * kBlockRows * 4, 4);
  }
  const int tail = static_cast<int>(depth - whole * 16);
  if (tail == 0) return;
  if (whole > 0) {
    uint8_t index[16];
    for (int j = 0; j < 16; ++j) index[j] = static_cast<uint8_t>(j < tail ? 16 - tail + j : 0xff);
    const uint8x16_t shift = vld1q_u8(index);
    for (int i = 0; i < kBlockRows; ++i) r[i] = veorq_u8(vqtbl1q_u8(vld1q_u8(rows[i] + depth - 16), shift), flip);
  } else {
    for (int i = 0; i < kBlockRows; ++i) {
      uint8_t bytes[16] = {};
      for (int j = 0; j < tail; ++j) bytes[j] = rows[i][j];
      r[i] = veorq_u8(vld1q_u8(bytes), flip);
    }
  }
  store_groups(r, panel + whole * 4 * kBlockRows * 4, (tail + 3) / 4);
}

/// Dequantizes one row's 8 sums into y[0..n) (n <= 8): (sum + correction) · scale + bias.
inline void store_row(int32x4_t lo, int32x4_t hi, const int32_t* correction, const float* scale, const float* bias,
                      float* y, int64_t n) {
  const float32x4_t f0 =
      vfmaq_f32(vld1q_f32(bias), vcvtq_f32_s32(vaddq_s32(lo, vld1q_s32(correction))), vld1q_f32(scale));
  const float32x4_t f1 =
      vfmaq_f32(vld1q_f32(bias + 4), vcvtq_f32_s32(vaddq_s32(hi, vld1q_s32(correction + 4))), vld1q_f32(scale + 4));
  if (n == kCols) {
    vst1q_f32(y, f0);
    vst1q_f32(y + 4, f1);
    return;
  }
  float tmp[kCols];
  vst1q_f32(tmp, f0);
  vst1q_f32(tmp + 4, f1);
  std::memcpy(y, tmp, static_cast<size_t>(n) * sizeof(float));
}

/// The 8×8 tile: sums of the packed 8-row panel against one packed 8-column block over `groups`
/// groups of 4 bytes, dequantized into the first `count` rows of y.
EDGEMM_DOTPROD void tile(const int8_t* panel, const int8_t* block, int64_t groups, int count, const int32_t* correction,
                         const float* scale, const float* bias, float* y, int64_t y_stride, int64_t n) {
  int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  int32x4_t c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  for (int64_t g = 0; g < groups; ++g) {
    const int8x16_t a0 = vld1q_s8(panel), a1 = vld1q_s8(panel + 16);
    const int8x16_t b0 = vld1q_s8(block), b1 = vld1q_s8(block + 16);
    c00 = vdotq_laneq_s32(c00, b0, a0, 0);
    c01 = vdotq_laneq_s32(c01, b1, a0, 0);
    c10 = vdotq_laneq_s32(c10, b0, a0, 1);
    c11 = vdotq_laneq_s32(c11, b1, a0, 1);
    c20 = vdotq_laneq_s32(c20, b0, a0, 2);
    c21 = vdotq_laneq_s32(c21, b1, a0, 2);
    c30 = vdotq_laneq_s32(c30, b0, a0, 3);
    c31 = vdotq_laneq_s32(c31, b1, a0, 3);
    c40 = vdotq_laneq_s32(c40, b0, a1, 0);
    c41 = vdotq_laneq_s32(c41, b1, a1, 0);
    c50 = vdotq_laneq_s32(c50, b0, a1, 1);
    c51 = vdotq_laneq_s32(c51, b1, a1, 1);
    c60 = vdotq_laneq_s32(c60, b0, a1, 2);
    c61 = vdotq_laneq_s32(c61, b1, a1, 2);
    c70 = vdotq_laneq_s32(c70, b0, a1, 3);
    c71 = vdotq_laneq_s32(c71, b1, a1, 3);
    panel += 32;
    block += 32;
  }
  const int32x4_t lo[kBlockRows] = {c00, c10, c20, c30, c40, c50, c60, c70};
  const int32x4_t hi[kBlockRows] = {c01, c11, c21, c31, c41, c51, c61, c71};
  for (int i = 0; i < count; ++i) store_row(lo[i], hi[i], correction, scale, bias, y + i * y_stride, n);
}

}  // namespace

Int8Gemm::Int8Gemm(const int8_t* w, int64_t depth, int64_t columns, int64_t k_stride, int64_t n_stride,
                   const float* w_scales, float x_scale, int32_t x_zero_point, const float* bias)
    : depth_(depth), columns_(columns), groups_((depth + 3) / 4) {
  const int64_t blocks = (columns + kCols - 1) / kCols;
  const auto padded = static_cast<size_t>(blocks * kCols);
  packed_.assign(static_cast<size_t>(blocks * groups_ * kCols * 4), 0);
  correction_.assign(padded, 0);
  scales_.assign(padded, 0.0f);
  bias_.assign(padded, 0.0f);
  for (int64_t n = 0; n < columns; ++n) {
    int32_t sum = 0;
    for (int64_t k = 0; k < depth; ++k) {
      const int8_t v = w[k * k_stride + n * n_stride];
      packed_[static_cast<size_t>((((n / kCols) * groups_ + k / 4) * kCols + n % kCols) * 4 + k % 4)] = v;
      sum += v;
    }
    correction_[n] = (128 - x_zero_point) * sum;
    scales_[n] = x_scale * w_scales[n];
    if (bias != nullptr) bias_[n] = bias[n];
  }
}

void Int8Gemm::gemm_rows(const uint8_t* const* rows, int count, float* y, int64_t y_stride) const {
  thread_local std::vector<int8_t> panel;
  panel.resize(static_cast<size_t>(groups_ * kBlockRows * 4));
  const uint8_t* full[kBlockRows];
  for (int i = 0; i < kBlockRows; ++i) full[i] = rows[std::min(i, count - 1)];  // unused rows repeat the last
  pack_rows(full, depth_, panel.data());
  for (int64_t n0 = 0; n0 < columns_; n0 += kCols) {
    tile(panel.data(), packed_.data() + (n0 / kCols) * groups_ * kCols * 4, groups_, count, correction_.data() + n0,
         scales_.data() + n0, bias_.data() + n0, y + n0, y_stride, std::min(kCols, columns_ - n0));
  }
}

void Int8Gemm::gemm(const uint8_t* a, int64_t a_stride, int64_t row_count, float* y, int64_t y_stride,
                    int threads) const {
  const int64_t blocks = (row_count + kBlockRows - 1) / kBlockRows;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t r0 = b * kBlockRows;
    const int count = static_cast<int>(std::min<int64_t>(kBlockRows, row_count - r0));
    const uint8_t* rows[kBlockRows];
    for (int i = 0; i < count; ++i) rows[i] = a + (r0 + i) * a_stride;
    gemm_rows(rows, count, y + r0 * y_stride, y_stride);
  }
}

#undef EDGEMM_DOTPROD
#endif

}  // namespace edgemm::kernels::int8_neon
