// MatMulNBits with accuracy_level 4: A quantized to int8 per block (src/kernels/cpu/
// matmul_nbits_int8.{h,cc}; ONNX Runtime's CompInt8 does the same, and the ONNX Runtime fixtures
// 7-11 of kernels_matmul_nbits_test.cc check edgemm's results against it).
// (1) quantize_row_int8 on hand-worked values: scale max|a| / 127, ties to even, zeros past K,
//     an all-zero block, NaN and infinities refused.
// (2) Every variant (reference, portable, avx2, avx512, neon (SDOT) where the CPU has them) against an
//     oracle written here in double from the spec's layout and the quantized rows, on seeded
//     random inputs over bits 4 and 8, block sizes 16-256, K not a multiple of the block, N, M
//     up to 10 (more than one pass of the fast kernels), default and uint8 zero points (float
//     ones are computed in float32, as ONNX Runtime 1.30 does: fixture 11), bias, 1 and 2 threads.
// (3) Rows with NaN or infinities: computed in float32 as the float product (NaN and infinities
//     where the float32 reference kernel has them), the other rows unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/matmul_nbits.h"
#include "kernels/cpu/matmul_nbits_int8.h"
#include "edgemm/cpu.h"
#include "matmul_nbits_test_util.h"

namespace edgemm {
namespace kernels_matmul_nbits_int8_test {  // named for the file: unity batches merge anonymous namespaces

using kernels::MatMulNBitsShape;
using kernels::MatMulNBitsVariant;
using kernels::MatMulNBitsWeights;
using nbits_test::available_variants;
using nbits_test::ZpKind;

TEST(MatMulNBitsInt8, QuantizeRowHandWorked) {
  // Block 0 (16 values): max |a| = 127, so the codes are a rounded half to even: 2.5 -> 2,
  // 3.5 -> 4, -2.5 -> -2, 0.5 -> 0, 1.5 -> 2; the sum of the codes is 127 + 2 + 4 - 2 + 0 + 2 = 133.
  // Block 1: K = 20 leaves 4 values, all zero: scale 0, codes 0, sum 0 (no division by zero).
  std::vector<float> a(20, 0.0f);
  a[0] = 127.0f, a[1] = 2.5f, a[2] = 3.5f, a[3] = -2.5f, a[4] = 0.5f, a[5] = 1.5f;
  std::vector<int8_t> q(32, 99);
  std::vector<float> scales(2, -1.0f);
  std::vector<int32_t> sums(2, -1);
  ASSERT_TRUE(kernels::quantize_row_int8(a.data(), 20, 16, q.data(), scales.data(), sums.data()));
  EXPECT_EQ(scales[0], 1.0f);
  const std::vector<int8_t> want0 = {127, 2, 4, -2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<int8_t>(q.begin(), q.begin() + 16), want0);
  EXPECT_EQ(sums[0], 133);
  EXPECT_EQ(scales[1], 0.0f);
  EXPECT_EQ(std::vector<int8_t>(q.begin() + 16, q.end()), std::vector<int8_t>(16, 0));
  EXPECT_EQ(sums[1], 0);
  // max |a| = 2: scale 2 / 127, codes round(a · 63.5): 1 -> 63.5 -> 64 (tie to even), -2 -> -127.
  const std::vector<float> b = {1.0f, -2.0f, 0.25f};
  ASSERT_TRUE(kernels::quantize_row_int8(b.data(), 3, 16, q.data(), scales.data(), sums.data()));
  EXPECT_FLOAT_EQ(scales[0], 2.0f / 127.0f);
  EXPECT_EQ(q[0], 64);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], 16);  // 15.875 -> 16
  // NaN and infinities are refused.
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    const std::vector<float> c = {1.0f, bad};
    EXPECT_FALSE(kernels::quantize_row_int8(c.data(), 2, 16, q.data(), scales.data(), sums.data()));
  }
}

// Seeded random weights in MatMulNBits' layout, with the spec's formulas for codes and zero points.
struct Weights {
  MatMulNBitsShape shape;
  ZpKind kind = ZpKind::kNone;
  std::vector<uint8_t> b, zp;
  std::vector<float> scales, float_zp, bias;

  Weights(const MatMulNBitsShape& s, ZpKind k, uint32_t seed) : shape(s), kind(k) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    b.resize(static_cast<size_t>(s.n * s.k_blocks() * s.blob_size()));
    for (uint8_t& v : b) v = static_cast<uint8_t>(byte(rng));
    scales.resize(static_cast<size_t>(s.n * s.k_blocks()));
    for (float& v : scales) v = 0.01f + 0.1f * unit(rng);
    zp.resize(static_cast<size_t>(s.n * s.zero_point_row_bytes()));
    for (uint8_t& v : zp) v = static_cast<uint8_t>(byte(rng));
    float_zp.resize(scales.size());
    for (float& v : float_zp) v = (s.bits == 8 ? 255.0f : 15.0f) * unit(rng);
    bias.resize(static_cast<size_t>(s.n));
    for (float& v : bias) v = 2.0f * unit(rng) - 1.0f;
  }

  MatMulNBitsWeights view(bool with_bias) const {
    MatMulNBitsWeights w;
    w.b = b.data();
    w.scales = scales.data();
    if (kind == ZpKind::kPacked) w.zero_points = zp.data();
    if (kind == ZpKind::kFloat) w.float_zero_points = float_zp.data();
    if (with_bias) w.bias = bias.data();
    return w;
  }

  // Code of column n at K index k (4 bits: position p of its block in byte p / 2, low nibble
  // for even p) minus the block's zero point, in double.
  double centered(int64_t n, int64_t k) const {
    const int64_t kb = shape.k_blocks(), j = k / shape.block_size, p = k % shape.block_size;
    const uint8_t* blob = b.data() + (n * kb + j) * shape.blob_size();
    const int code = shape.bits == 8 ? blob[p] : (p % 2 == 0 ? blob[p / 2] & 15 : blob[p / 2] >> 4);
    double z = shape.bits == 8 ? 128 : 8;
    if (kind == ZpKind::kFloat) z = float_zp[n * kb + j];
    if (kind == ZpKind::kPacked) {
      const uint8_t zb = zp[n * shape.zero_point_row_bytes() + (shape.bits == 8 ? j : j / 2)];
      z = shape.bits == 8 ? zb : (j % 2 == 0 ? zb & 15 : zb >> 4);
    }
    return code - z;
  }
};

std::vector<float> random_rows(int64_t m, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(m * k));
  for (float& v : a) v = normal(rng) * std::exp(normal(rng));  // heavy tails: blocks of unequal range
  return a;
}

TEST(MatMulNBitsInt8, VariantsMatchOracle) {
  const std::vector<MatMulNBitsVariant> variants = available_variants();
  uint32_t seed = 1;
  int checked = 0;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128, 256}) {
      // K = 512: whole 256-byte chunks of 4-bit codes in blocks of 32; 650: one chunk, then 64-byte
      // steps (with blocks of 128, one starting at an odd block)
      for (int64_t k : {96, 512, 650}) {
        for (int64_t n : {5, 33}) {
          for (ZpKind kind : {ZpKind::kNone, ZpKind::kPacked}) {  // float zero points: float32 (fixture 11)
            MatMulNBitsShape s{k, n, bits, block};
            s.accuracy_level = 4;
            const Weights w(s, kind, ++seed);
            for (int64_t m : {1, 2, 3, 4, 10}) {
              const std::vector<float> a = random_rows(m, k, ++seed);
              // Oracle: the quantized rows (quantize_row_int8, checked above and against ONNX
              // Runtime) times the centered codes, per block, in double.
              const int64_t kb = s.k_blocks(), k_pad = kb * block;
              std::vector<int8_t> q(static_cast<size_t>(k_pad));
              std::vector<float> a_scales(static_cast<size_t>(kb));
              std::vector<int32_t> sums(static_cast<size_t>(kb));
              std::vector<double> want(static_cast<size_t>(m * n)), mag(want.size());
              for (int64_t r = 0; r < m; ++r) {
                ASSERT_TRUE(
                    kernels::quantize_row_int8(a.data() + r * k, k, block, q.data(), a_scales.data(), sums.data()));
                for (int64_t c = 0; c < n; ++c) {
                  // mag: Σ |each product|, the scale of float32 rounding in kernels that split a
                  // block's dot product over vector lanes and scale each lane's part.
                  double total = w.bias[c], abs_total = std::abs(w.bias[c]);
                  for (int64_t j = 0; j < kb; ++j) {
                    double dot = 0, abs_dot = 0;
                    for (int64_t i = j * block; i < std::min(k, (j + 1) * block); ++i) {
                      dot += q[i] * w.centered(c, i);
                      abs_dot += std::abs(q[i] * w.centered(c, i));
                    }
                    const double scale = w.scales[c * kb + j] * a_scales[j];
                    total += dot * scale;
                    abs_total += abs_dot * scale;
                  }
                  want[r * n + c] = total;
                  mag[r * n + c] = abs_total;
                }
              }
              for (MatMulNBitsVariant v : variants) {
                for (int threads : {1, 2}) {
                  std::vector<float> y(want.size(), NAN);
                  kernels::matmul_nbits(v, s, w.view(true), a.data(), m, y.data(), threads);
                  for (size_t i = 0; i < y.size(); ++i) {
                    ASSERT_NEAR(y[i], want[i], 1e-5 * mag[i] + 1e-6)
                        << kernels::matmul_nbits_kernel_name(v, s) << " bits " << bits << " block " << block << " K "
                        << k << " N " << n << " M " << m << " zp " << static_cast<int>(kind) << " threads " << threads
                        << " element " << i;
                  }
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(MatMulNBitsInt8, KernelNamesFollowTheCpu) {
  MatMulNBitsShape s{64, 8, 4, 32};
  s.accuracy_level = 4;
  EXPECT_STREQ(kernels::matmul_nbits_kernel_name(MatMulNBitsVariant::kReference, s), "i8_matmul_nbits__reference");
  if (kernels::matmul_nbits_available(MatMulNBitsVariant::kAvx2)) {
    EXPECT_STREQ(kernels::matmul_nbits_kernel_name(MatMulNBitsVariant::kAvx2, s), "i8_matmul_nbits__avx2");
  }
  if (kernels::matmul_nbits_available(MatMulNBitsVariant::kNeon) && cpu_features().asimddp) {
    EXPECT_STREQ(kernels::matmul_nbits_kernel_name(MatMulNBitsVariant::kNeon, s), "i8_matmul_nbits__neon_dot");
  }
  MatMulNBitsShape blocks16 = s;
  blocks16.block_size = 16;  // 4-bit codes in blocks of 16: the reference path
  EXPECT_STREQ(kernels::matmul_nbits_kernel_name(kernels::matmul_nbits_best_variant(), blocks16),
               "i8_matmul_nbits__reference");
  s.accuracy_level = 0;
  EXPECT_STREQ(kernels::matmul_nbits_kernel_name(MatMulNBitsVariant::kReference, s), "f32_matmul_nbits__reference");
}

TEST(MatMulNBitsInt8, RowsWithNaNOrInfinityAreComputedInFloat) {
  // Rows 1 and 3 hold NaN and +Inf: their outputs are the float32 product's (the reference
  // kernel's with accuracy_level 0: NaN everywhere for the NaN row; +-Inf, or NaN where a weight
  // is 0, for the infinite one); rows 0 and 2 are the int8 product's.
  for (int64_t bits : {4, 8}) {
    MatMulNBitsShape s{256, 19, bits, 32};
    s.accuracy_level = 4;
    const Weights w(s, ZpKind::kPacked, 7 + static_cast<uint32_t>(bits));
    std::vector<float> a = random_rows(4, 256, 8);
    a[1 * 256 + 17] = std::numeric_limits<float>::quiet_NaN();
    a[3 * 256 + 200] = std::numeric_limits<float>::infinity();
    MatMulNBitsShape float_shape = s;
    float_shape.accuracy_level = 0;
    std::vector<float> want(4 * 19), clean(4 * 19);
    kernels::matmul_nbits(MatMulNBitsVariant::kReference, float_shape, w.view(true), a.data(), 4, want.data(), 1);
    kernels::matmul_nbits(MatMulNBitsVariant::kReference, s, w.view(true), a.data(), 4, clean.data(), 1);
    int nan = 0, inf = 0;
    for (float v : want) nan += std::isnan(v), inf += std::isinf(v);
    EXPECT_GE(nan, 19);  // the NaN row at least
    EXPECT_GT(inf, 0);
    for (MatMulNBitsVariant v : available_variants()) {
      std::vector<float> y(want.size());
      kernels::matmul_nbits(v, s, w.view(true), a.data(), 4, y.data(), 1);
      for (size_t i = 0; i < y.size(); ++i) {
        const bool special_row = i / 19 == 1 || i / 19 == 3;
        const float expected = special_row ? want[i] : clean[i];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(y[i])) << kernels::matmul_nbits_kernel_name(v, s) << " element " << i;
        } else if (std::isinf(expected)) {
          EXPECT_EQ(y[i], expected) << kernels::matmul_nbits_kernel_name(v, s) << " element " << i;
        } else {
          EXPECT_NEAR(y[i], expected, 1e-5 * (1 + std::abs(expected)))
              << kernels::matmul_nbits_kernel_name(v, s) << " element " << i;
        }
      }
    }
  }
}

TEST(MatMulNBitsFloat, EveryVariantGivesTheReferenceNaNAndInfinities) {
  // accuracy_level 0 (float32 products) with NaN, +Inf and -Inf in A: every fast variant puts
  // NaN and infinities where the reference kernel does (padding of K multiplies zeros only).
  for (int64_t bits : {4, 8}) {
    for (int64_t m : {1, 3, 9}) {
      const MatMulNBitsShape s{100, 21, bits, 32};
      const Weights w(s, ZpKind::kPacked, 30 + static_cast<uint32_t>(bits));
      std::vector<float> a = random_rows(m, 100, 31);
      a[0] = std::numeric_limits<float>::quiet_NaN();
      a[(m - 1) * 100 + 99] = std::numeric_limits<float>::infinity();
      if (m > 2) a[100 + 50] = -std::numeric_limits<float>::infinity();
      std::vector<float> want(static_cast<size_t>(m * 21));
      kernels::matmul_nbits(MatMulNBitsVariant::kReference, s, w.view(false), a.data(), m, want.data(), 1);
      for (MatMulNBitsVariant v : available_variants()) {
        std::vector<float> y(want.size());
        kernels::matmul_nbits(v, s, w.view(false), a.data(), m, y.data(), 1);
        for (size_t i = 0; i < y.size(); ++i) {
          if (std::isnan(want[i]) || std::isinf(want[i])) {
            EXPECT_EQ(std::isnan(y[i]), std::isnan(want[i])) << kernels::matmul_nbits_variant_name(v) << " " << i;
            if (std::isinf(want[i])) {
              EXPECT_EQ(y[i], want[i]) << kernels::matmul_nbits_variant_name(v) << " " << i;
            }
          } else {
            EXPECT_NEAR(y[i], want[i], 1e-4 * (1 + std::abs(want[i])))
                << kernels::matmul_nbits_variant_name(v) << " " << i;
          }
        }
      }
    }
  }
}

}  // namespace kernels_matmul_nbits_int8_test
}  // namespace edgemm
