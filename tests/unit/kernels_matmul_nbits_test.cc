// com.microsoft MatMulNBits (src/kernels/cpu/matmul_nbits.{h,cc}), following ONNX Runtime's
// docs/ContribOperators.md.
// (1) Hand-computed cases, arithmetic in the comments: nibble order inside a byte, zero-point
//     nibble order, the default zero point 2^(bits - 1), a padded last block, 8-bit codes,
//     uint8 and float zero points, bias.
// (2) Every variant (reference, portable, avx2 / avx512 / neon where the CPU has them) against
//     an independent double-precision oracle written here from the spec's layout, on seeded
//     random inputs over M, K (including K not a multiple of block_size), N, block sizes,
//     zero-point kinds, bias, bits 4 and 8, and 1 and 2 threads; and against the reference
//     kernel over M = 1, 2, 3, 7, 8, 17, 64 (where the fast paths change strategy), odd N, 16+
//     blocks, with an infinity and a NaN in A.
// (3) pack_matmul_nbits: the layout on a hand-made weight (codes, scales, zero-point packing for
//     an odd block count), and pack -> kernel round trips within the quantization error bound.
// (4) ONNX Runtime 1.30 as the oracle: models in tests/fixtures/matmul_nbits (4 and 8 bits,
//     packed / float / default zero points, padded K, bias, rank-3 A, accuracy_level 0 and 4: A
//     quantized to int8 per block, kernels_matmul_nbits_int8_test.cc) loaded through the importer
//     and run with the best kernel and the reference kernel, against ORT's outputs
//     (tools/fixtures/make_matmul_nbits_fixture.sh).
// (5) Errors: codes and messages naming the node, the input and the offending value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "kernels/cpu/matmul_nbits.h"
#include "matmul_nbits_test_util.h"
#include "nn_test_util.h"
#include "source_dir.h"

namespace edgemm {
namespace kernels_matmul_nbits_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;
using kernels::MatMulNBitsShape;
using kernels::MatMulNBitsVariant;
using kernels::MatMulNBitsWeights;
using nbits_test::available_variants;
using nbits_test::ZpKind;
using testutil::u8;

// A MatMulNBits node; `inputs` names its inputs ("" for an absent optional one).
ir::Node nbits_node(int64_t k, int64_t n, int64_t bits, int64_t block_size, std::vector<std::string> inputs) {
  ir::Node node = make_node("MatMulNBits", std::move(inputs));
  node.domain = "com.microsoft";
  set_int(node, "K", k);
  set_int(node, "N", n);
  set_int(node, "bits", bits);
  set_int(node, "block_size", block_size);
  return node;
}

const std::vector<std::string> kAllInputs = {"A", "B", "scales", "zero_points", "g_idx", "bias"};

// Runs the node through the runtime with the best kernel and with the reference kernel.
std::vector<Tensor> run_both(const ir::Node& node, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  auto fast = run(node, inputs, 1);
  EXPECT_TRUE(fast.has_value()) << fast.status().to_string();
  auto ref = run_reference(node, inputs, 1);
  EXPECT_TRUE(ref.has_value()) << ref.status().to_string();
  if (fast.has_value()) out.push_back(*fast);
  if (ref.has_value()) out.push_back(*ref);
  return out;
}

// Bytes of a 4-bit blob holding `codes` in K order (lower index in the low nibble).
std::vector<uint8_t> nibbles(const std::vector<int>& codes) {
  std::vector<uint8_t> b((codes.size() + 1) / 2, 0);
  for (size_t i = 0; i < codes.size(); ++i) b[i / 2] |= static_cast<uint8_t>(codes[i] << (i % 2 == 0 ? 0 : 4));
  return b;
}

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// The hand case's B: K = 32, block 16 (k_blocks 2, blob 8 bytes), N = 2.
// column 0: block 0 codes 0, 1, ..., 15 (byte i = (2i) | (2i + 1) << 4); block 1 codes all 3.
// column 1: block 0 codes all 15; block 1 codes 0, 1, ..., 15.
Tensor hand_b() {
  std::vector<int> ramp(16), threes(16, 3), fifteens(16, 15);
  for (int i = 0; i < 16; ++i) ramp[i] = i;
  EXPECT_EQ(nibbles(ramp)[0], 0x10);  // codes 0 (low) and 1 (high)
  return u8({2, 2, 8}, concat({nibbles(ramp), nibbles(threes), nibbles(fifteens), nibbles(ramp)}));
}

// A [2, 32]: row 0 all ones, row 1 a[k] = k.
Tensor hand_a() {
  std::vector<float> a(64);
  for (int k = 0; k < 32; ++k) a[k] = 1.0f, a[32 + k] = static_cast<float>(k);
  return f32({2, 32}, a);
}

TEST(MatMulNBits, HandComputedWithZeroPointsAndBias) {
  // scales [[0.5, 2], [3, 1]]; zero points: column 0 blocks (8, 1) -> byte 0x18, column 1
  // blocks (15, 0) -> byte 0x0F (lower block in the low nibble).
  // Weights: column 0, k < 16: (k - 8) * 0.5 = -4 .. 3.5; k >= 16: (3 - 1) * 2 = 4.
  //          column 1, k < 16: (15 - 15) * 3 = 0; k = 16 + i: (i - 0) * 1 = i.
  // Row 0 (ones): y00 = 0.5 * (120 - 128) + 16 * 4 = 60; y01 = 0 + 120 = 120.
  // Row 1 (a = k): y10 = 0.5 * (sum k^2 - 8 sum k) + 4 * sum_{16..31} k = 0.5 * (1240 - 960) +
  //   4 * 376 = 1644; y11 = sum_i (16 + i) * i = 1920 + 1240 = 3160.
  // bias [0.5, -1].
  ir::Node node = nbits_node(32, 2, 4, 16, {"A", "B", "scales", "zero_points", "", "bias"});
  const std::vector<Tensor> inputs = {
      hand_a(), hand_b(), f32({2, 2}, {0.5f, 2, 3, 1}), u8({2, 1}, {0x18, 0x0F}), Tensor(), f32({2}, {0.5f, -1})};
  for (const Tensor& y : run_both(node, inputs)) expect_near(y, {2, 2}, {60.5f, 119, 1644.5f, 3159});
}

TEST(MatMulNBits, HandComputedDefaultZeroPoint) {
  // Same B and scales, no zero points: every zero point is 2^(4 - 1) = 8.
  // column 0: k < 16: (k - 8) * 0.5; k >= 16: (3 - 8) * 2 = -10.
  // column 1: k < 16: (15 - 8) * 3 = 21; k = 16 + i: i - 8.
  // Row 0: y00 = -4 - 160 = -164; y01 = 16 * 21 + (120 - 128) = 328.
  // Row 1: y00 = 140 - 10 * 376 = -3620; y01 = 21 * 120 + (3160 - 8 * 376) = 2672.
  ir::Node node = nbits_node(32, 2, 4, 16, {"A", "B", "scales"});
  for (const Tensor& y : run_both(node, {hand_a(), hand_b(), f32({4}, {0.5f, 2, 3, 1})})) {
    expect_near(y, {2, 2}, {-164, 328, -3620, 2672});
  }
}

TEST(MatMulNBits, PaddedLastBlockIsIgnored) {
  // K = 20, block 16: k_blocks 2, the second block has 4 codes of K and 12 of padding (set to 15
  // here, which would add 12 * 7 if read). Codes: block 0 all 9, block 1 first four 10.
  // Zero point 8, scales 1: y = 16 * 1 + 4 * 2 = 24 for A = ones; A [1, 1, 20] keeps its rank.
  std::vector<int> nines(16, 9), tail(16, 15);
  for (int i = 0; i < 4; ++i) tail[i] = 10;
  ir::Node node = nbits_node(20, 1, 4, 16, {"A", "B", "scales"});
  const std::vector<Tensor> inputs = {f32({1, 1, 20}, std::vector<float>(20, 1.0f)),
                                      u8({1, 2, 8}, concat({nibbles(nines), nibbles(tail)})), f32({1, 2}, {1, 1})};
  for (const Tensor& y : run_both(node, inputs)) expect_near(y, {1, 1, 1}, {24});
}

TEST(MatMulNBits, EightBitCodesAndZeroPointKinds) {
  // bits 8, K = 16, block 16: codes 10k; scale 0.25; A = ones; sum_k 10k = 1200.
  // Default zero point 2^7 = 128: 0.25 * (1200 - 16 * 128) = -212.
  // uint8 zero point 100: 0.25 * (1200 - 1600) = -100. float zero point 100.5: 0.25 * (1200 - 1608) = -102.
  std::vector<uint8_t> codes(16);
  for (int k = 0; k < 16; ++k) codes[k] = static_cast<uint8_t>(10 * k);
  const Tensor a = f32({1, 16}, std::vector<float>(16, 1.0f));
  const Tensor b = u8({1, 1, 16}, codes), scales = f32({1}, {0.25f});
  for (const Tensor& y : run_both(nbits_node(16, 1, 8, 16, {"A", "B", "scales"}), {a, b, scales})) {
    expect_near(y, {1, 1}, {-212});
  }
  ir::Node with_zp = nbits_node(16, 1, 8, 16, {"A", "B", "scales", "zero_points"});
  for (const Tensor& y : run_both(with_zp, {a, b, scales, u8({1}, {100})})) expect_near(y, {1, 1}, {-100});
  for (const Tensor& y : run_both(with_zp, {a, b, scales, f32({1, 1}, {100.5f})})) expect_near(y, {1, 1}, {-102});
}

TEST(MatMulNBits, KernelNames) {
  ir::Node node = nbits_node(32, 2, 4, 16, {"A", "B", "scales"});
  auto fast = make_kernel(node, {}, 1);
  ASSERT_TRUE(fast.has_value()) << fast.status().to_string();
  EXPECT_STREQ((*fast)->name(), kernels::matmul_nbits_variant_name(kernels::matmul_nbits_best_variant()));
  // The best variant is the most specific one this CPU has.
  EXPECT_EQ(kernels::matmul_nbits_best_variant(),
            kernels::matmul_nbits_available(MatMulNBitsVariant::kAvx512) ? MatMulNBitsVariant::kAvx512
            : kernels::matmul_nbits_available(MatMulNBitsVariant::kAvx2) ? MatMulNBitsVariant::kAvx2
            : kernels::matmul_nbits_available(MatMulNBitsVariant::kNeon) ? MatMulNBitsVariant::kNeon
                                                                         : MatMulNBitsVariant::kPortable);
  kernels::onednn::ScopedEnabled off(false);
  auto ref = make_kernel(node, {}, 1);
  ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
  EXPECT_STREQ((*ref)->name(), "f32_matmul_nbits__reference");
}

// ---------------------------------------------------------------------------------------------
// Variants against an independent oracle

// Seeded random weights in MatMulNBits' layout.
struct RandomWeights {
  MatMulNBitsShape shape;
  std::vector<uint8_t> b, zp;
  std::vector<float> scales, float_zp, bias;
  ZpKind kind = ZpKind::kNone;

  MatMulNBitsWeights view(bool with_bias) const {
    MatMulNBitsWeights w;
    w.b = b.data();
    w.scales = scales.data();
    if (kind == ZpKind::kPacked) w.zero_points = zp.data();
    if (kind == ZpKind::kFloat) w.float_zero_points = float_zp.data();
    if (with_bias) w.bias = bias.data();
    return w;
  }

  // Weight (n, k) from the spec's formula, in double: the code of K index k sits in block
  // k / block_size at position k % block_size; with 4 bits, position p is in byte p / 2, low
  // nibble for even p.
  double weight(int64_t n, int64_t k) const {
    const int64_t kb = shape.k_blocks(), j = k / shape.block_size, p = k % shape.block_size;
    const uint8_t* blob = b.data() + (n * kb + j) * shape.blob_size();
    const int code = shape.bits == 8 ? blob[p] : (p % 2 == 0 ? blob[p / 2] & 15 : blob[p / 2] >> 4);
    double z = shape.bits == 8 ? 128 : 8;
    if (kind == ZpKind::kFloat) z = float_zp[n * kb + j];
    if (kind == ZpKind::kPacked) {
      const uint8_t byte = zp[n * shape.zero_point_row_bytes() + (shape.bits == 8 ? j : j / 2)];
      z = shape.bits == 8 ? byte : (j % 2 == 0 ? byte & 15 : byte >> 4);
    }
    return (code - z) * static_cast<double>(scales[n * kb + j]);
  }
};

RandomWeights random_weights(const MatMulNBitsShape& s, ZpKind kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  RandomWeights w;
  w.shape = s;
  w.kind = kind;
  w.b.resize(static_cast<size_t>(s.n * s.k_blocks() * s.blob_size()));
  for (uint8_t& v : w.b) v = static_cast<uint8_t>(byte(rng));
  w.scales.resize(static_cast<size_t>(s.n * s.k_blocks()));
  for (float& v : w.scales) v = 0.01f + 0.1f * unit(rng);
  w.zp.resize(static_cast<size_t>(s.n * s.zero_point_row_bytes()));
  for (uint8_t& v : w.zp) v = static_cast<uint8_t>(byte(rng));
  w.float_zp.resize(w.scales.size());
  for (float& v : w.float_zp) v = (s.bits == 8 ? 255.0f : 15.0f) * unit(rng);
  w.bias.resize(static_cast<size_t>(s.n));
  for (float& v : w.bias) v = 2.0f * unit(rng) - 1.0f;
  return w;
}

TEST(MatMulNBits, VariantsMatchOracle) {
  const std::vector<MatMulNBitsVariant> variants = available_variants();
  uint32_t seed = 1;
  int checked = 0;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128}) {
      for (int64_t k : {64, 96, 320}) {
        for (int64_t n : {17, 64}) {
          for (ZpKind kind : {ZpKind::kNone, ZpKind::kPacked, ZpKind::kFloat}) {
            const MatMulNBitsShape s{k, n, bits, block};
            const RandomWeights w = random_weights(s, kind, ++seed);
            std::vector<double> wt(static_cast<size_t>(n * k));  // [N, K]
            for (int64_t c = 0; c < n; ++c) {
              for (int64_t kk = 0; kk < k; ++kk) wt[c * k + kk] = w.weight(c, kk);
            }
            for (int64_t m : {1, 3, 40}) {
              const Tensor a = random_f32({m, k}, ++seed);
              const float* pa = a.data<float>();
              for (bool with_bias : {false, true}) {
                // Oracle in double and the scale of each output's rounding error.
                std::vector<double> want(static_cast<size_t>(m * n)), mag(want.size());
                for (int64_t r = 0; r < m; ++r) {
                  for (int64_t c = 0; c < n; ++c) {
                    double sum = with_bias ? w.bias[c] : 0.0, abs_sum = with_bias ? std::abs(w.bias[c]) : 0.0;
                    for (int64_t kk = 0; kk < k; ++kk) {
                      const double term = pa[r * k + kk] * wt[c * k + kk];
                      sum += term;
                      abs_sum += std::abs(term);
                    }
                    want[r * n + c] = sum;
                    mag[r * n + c] = abs_sum;
                  }
                }
                for (MatMulNBitsVariant v : variants) {
                  // Two threads with the bias only: each parallel region costs milliseconds on a
                  // loaded 2-core host, and the bias is added independently of the split.
                  const std::vector<int> thread_counts = with_bias ? std::vector<int>{1, 2} : std::vector<int>{1};
                  for (int threads : thread_counts) {
                    std::vector<float> y(want.size(), NAN);
                    kernels::matmul_nbits(v, s, w.view(with_bias), pa, m, y.data(), threads);
                    for (size_t i = 0; i < y.size(); ++i) {
                      ASSERT_NEAR(y[i], want[i], 1e-5 * mag[i] + 1e-6)
                          << kernels::matmul_nbits_variant_name(v) << " bits " << bits << " block " << block << " K "
                          << k << " N " << n << " M " << m << " zp " << static_cast<int>(kind) << " bias " << with_bias
                          << " threads " << threads << " element " << i;
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
  }
  EXPECT_GT(checked, 0);
}

TEST(MatMulNBits, VariantsMatchReferenceKernelOverShapes) {
  // Every variant against the plain reference kernel on the row counts where the fast paths
  // change strategy (AVX-512: register tiles of 1-4 rows up to 16 rows, float32 panels above),
  // an odd N (a partial 32-column panel and column tails of the 4- and 8-column tiles), K not a
  // multiple of the block and long enough for 16+ blocks (zero points and scales transposed in
  // groups of 16 blocks), every zero-point kind and block size. Row 0 of A holds +Inf and row 1
  // a NaN: the products must be NaN or infinite exactly where the reference's are (NaN where the
  // code equals the zero point, the weight being exactly 0).
  const std::vector<MatMulNBitsVariant> variants = available_variants();
  uint32_t seed = 500;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128}) {
      const int64_t k = block == 128 ? 2100 : 600, n = 33;
      for (ZpKind kind : {ZpKind::kNone, ZpKind::kPacked, ZpKind::kFloat}) {
        const MatMulNBitsShape s{k, n, bits, block};
        const RandomWeights w = random_weights(s, kind, ++seed);
        for (int64_t m : {1, 2, 3, 7, 8, 17, 64}) {
          if (bits == 8 && m > 17) continue;  // the 8-bit paths do not change with M above 4
          Tensor a = random_f32({m, k}, ++seed);
          float* pa = a.data<float>();
          pa[5] = INFINITY;
          if (m > 1) pa[k + 7] = NAN;
          std::vector<float> want(static_cast<size_t>(m * n)), mag(want.size());
          kernels::matmul_nbits(MatMulNBitsVariant::kReference, s, w.view(true), pa, m, want.data(), 1);
          for (int64_t r = 0; r < m; ++r) {
            for (int64_t c = 0; c < n; ++c) {
              double abs_sum = std::abs(w.bias[c]);
              for (int64_t kk = 0; kk < k; ++kk) abs_sum += std::abs(pa[r * k + kk] * w.weight(c, kk));
              mag[r * n + c] = static_cast<float>(abs_sum);
            }
          }
          for (MatMulNBitsVariant v : variants) {
            for (int threads : {1, 2}) {
              if (threads == 2 && m != 17) continue;
              std::vector<float> y(want.size(), -12345.0f);
              kernels::matmul_nbits(v, s, w.view(true), pa, m, y.data(), threads);
              for (size_t i = 0; i < y.size(); ++i) {
                const std::string where = std::string(kernels::matmul_nbits_variant_name(v)) + " bits " +
                                          std::to_string(bits) + " block " + std::to_string(block) + " zp " +
                                          std::to_string(static_cast<int>(kind)) + " M " + std::to_string(m) +
                                          " threads " + std::to_string(threads) + " element " + std::to_string(i);
                if (std::isnan(want[i])) {
                  ASSERT_TRUE(std::isnan(y[i])) << where << ": " << y[i];
                } else if (std::isinf(want[i])) {
                  ASSERT_EQ(y[i], want[i]) << where;
                } else {
                  ASSERT_NEAR(y[i], want[i], 1e-5 * mag[i] + 1e-6) << where;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(MatMulNBits, NodeMatchesReferenceOnRandomInputs) {
  // Through the runtime (shape handling, input views) on a padded K, 2-D zero points and bias.
  const MatMulNBitsShape s{96, 17, 4, 64};
  const RandomWeights w = random_weights(s, ZpKind::kPacked, 99);
  ir::Node node = nbits_node(96, 17, 4, 64, kAllInputs);
  const std::vector<Tensor> inputs = {random_f32({2, 5, 96}, 100),
                                      u8({17, 2, 32}, w.b),
                                      f32({17, 2}, w.scales),
                                      u8({17, 1}, w.zp),
                                      Tensor(),
                                      f32({17}, w.bias)};
  const std::vector<Tensor> ys = run_both(node, inputs);
  ASSERT_EQ(ys.size(), 2u);
  EXPECT_EQ(shape_to_string(ys[0].shape()), "[2,5,17]");
  const Diff d = diff(ys[0], ys[1]);
  EXPECT_LE(d.max_abs, 1e-5 * std::max(1.0, d.max_ref));
}

TEST(MatMulNBits, MatchesOnnxRuntimeFixtures) {
  const std::string dir = std::string(edgemm::testing::source_dir()) + "/tests/fixtures/matmul_nbits/nbits_";
  // 1-6: float32 compute; 7-11: accuracy_level 4 (A quantized to int8 per block, in ONNX
  // Runtime as in edgemm).
  for (int i = 1; i <= 11; ++i) {
    const std::string stem = dir + std::to_string(i);
    auto a = read_npy(stem + "_a.npy");
    auto want = read_npy(stem + "_y.npy");
    ASSERT_TRUE(a.has_value() && want.has_value()) << stem;
    double max_want = 0;
    for (float v : values<float>(*want)) max_want = std::max(max_want, static_cast<double>(std::abs(v)));
    for (bool reference : {false, true}) {
      kernels::onednn::ScopedEnabled onednn(!reference);
      InferencerConfig config;
      config.model_path = stem + ".onnx";
      config.threads = 1;
      auto inferencer = Inferencer::create(config);
      ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
      auto y = (*inferencer)->run({{"A", *a}});
      ASSERT_TRUE(y.has_value()) << y.status().to_string();
      ASSERT_EQ(y->size(), 1u);
      const Diff d = diff((*y)[0], *want);
      EXPECT_LE(d.max_abs, 1e-6 * std::max(1.0, max_want)) << stem << (reference ? " reference" : " best");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Packing

TEST(MatMulNBitsPack, LayoutOfHandMadeWeight) {
  // K = 40, N = 2, block 16 -> k_blocks 3 (odd), blob 8 bytes, zero points ceil(3 / 2) = 2 bytes a column.
  // Column 0: block 0 w = k - 5 (k < 16): range [-5, 10], scale 1, zero point 5, codes k;
  //           block 1 w = (k - 16) / 2: range [0, 7.5], scale 0.5, zero point 0, codes k - 16;
  //           block 2 (k = 32..39, 8 rows of K) w = -1: range [-1, 0], scale 1/15, zero point 15,
  //           codes round(-15) + 15 = 0; the 8 padding codes are the zero point 15.
  // Column 1: all zeros: every block has range 0 -> scale 1, zero point 0, codes 0.
  std::vector<float> w(40 * 2, 0.0f);
  for (int k = 0; k < 40; ++k) w[k * 2] = k < 16 ? static_cast<float>(k - 5) : (k < 32 ? (k - 16) * 0.5f : -1.0f);
  auto p = kernels::pack_matmul_nbits(w.data(), 40, 2, 16);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(p->shape.k_blocks(), 3);
  std::vector<uint8_t> ramp = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};  // codes 0..15, low nibble first
  std::vector<uint8_t> want_b = concat({ramp, ramp, {0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}});
  want_b.resize(48, 0);  // column 1: 3 blocks of zero codes
  EXPECT_EQ(p->b, want_b);
  ASSERT_EQ(p->scales.size(), 6u);
  EXPECT_FLOAT_EQ(p->scales[0], 1.0f);
  EXPECT_FLOAT_EQ(p->scales[1], 0.5f);
  EXPECT_FLOAT_EQ(p->scales[2], 1.0f / 15.0f);
  for (int j = 3; j < 6; ++j) EXPECT_FLOAT_EQ(p->scales[j], 1.0f);
  // Column 0: byte 0 = 5 (block 0, low) | 0 << 4 (block 1); byte 1 = 15 (block 2), high nibble unused.
  EXPECT_EQ(p->zero_points, (std::vector<uint8_t>{0x05, 0x0F, 0x00, 0x00}));
}

TEST(MatMulNBitsPack, RejectsBadArguments) {
  const std::vector<float> w(64, 1.0f);
  expect_error(kernels::pack_matmul_nbits(w.data(), 32, 2, 24), StatusCode::kInvalidArgument, {"block_size 24"});
  expect_error(kernels::pack_matmul_nbits(w.data(), 32, 2, 8), StatusCode::kInvalidArgument, {"block_size 8"});
  expect_error(kernels::pack_matmul_nbits(w.data(), 0, 2, 16), StatusCode::kInvalidArgument, {"[0, 2]"});
}

TEST(MatMulNBitsPack, RoundTripWithinQuantizationError) {
  for (int64_t block : {16, 32, 128}) {
    for (int64_t k : {64, 96}) {
      const int64_t n = 17;
      const Tensor wt = random_f32({k, n}, static_cast<uint32_t>(block + k));
      const float* pw = wt.data<float>();
      auto p = kernels::pack_matmul_nbits(pw, k, n, block);
      ASSERT_TRUE(p.has_value()) << p.status().to_string();
      // Dequantized weights through the kernel: A = identity [K, K] gives Y[k, n] = weight(n, k);
      // each is within scale / 2 of the float weight.
      std::vector<float> eye(static_cast<size_t>(k * k), 0.0f);
      for (int64_t i = 0; i < k; ++i) eye[i * k + i] = 1.0f;
      MatMulNBitsWeights view;
      view.b = p->b.data();
      view.scales = p->scales.data();
      view.zero_points = p->zero_points.data();
      for (MatMulNBitsVariant v : available_variants()) {
        std::vector<float> deq(static_cast<size_t>(k * n));
        kernels::matmul_nbits(v, p->shape, view, eye.data(), k, deq.data(), 1);
        for (int64_t kk = 0; kk < k; ++kk) {
          for (int64_t c = 0; c < n; ++c) {
            const float scale = p->scales[c * p->shape.k_blocks() + kk / block];
            ASSERT_LE(std::abs(deq[kk * n + c] - pw[kk * n + c]), 0.5f * scale * (1 + 1e-4f))
                << "block " << block << " K " << k << " k " << kk << " n " << c;
          }
        }
      }
      // A product against fp32: |y - A W| <= sum_k |a_k| * scale(k) / 2.
      const int64_t m = 3;
      const Tensor a = random_f32({m, k}, 5);
      const float* pa = a.data<float>();
      std::vector<float> y(static_cast<size_t>(m * n));
      kernels::matmul_nbits(kernels::matmul_nbits_best_variant(), p->shape, view, pa, m, y.data(), 2);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          double exact = 0, bound = 1e-5;
          for (int64_t kk = 0; kk < k; ++kk) {
            exact += static_cast<double>(pa[r * k + kk]) * pw[kk * n + c];
            bound += std::abs(pa[r * k + kk]) * 0.5 * p->scales[c * p->shape.k_blocks() + kk / block];
          }
          EXPECT_LE(std::abs(y[r * n + c] - exact), bound) << "block " << block << " K " << k;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(MatMulNBits, Errors) {
  const std::vector<Tensor> good = {hand_a(), hand_b(), f32({4}, {0.5f, 2, 3, 1})};
  const std::vector<std::string> three = {"A", "B", "scales"};
  // bits 3: unsupported, naming the value.
  expect_error(run_direct(nbits_node(32, 2, 3, 16, three), good), StatusCode::kUnsupported,
               {"MatMulNBits 'n_MatMulNBits'", "bits = 3"});
  // block_size not a power of two >= 16.
  expect_error(run_direct(nbits_node(32, 2, 4, 24, three), good), StatusCode::kInvalidModel, {"block_size = 24"});
  // A's last dimension is not K.
  expect_error(
      run_direct(nbits_node(32, 2, 4, 16, three), {f32({1, 30}, std::vector<float>(30, 1.0f)), good[1], good[2]}),
      StatusCode::kInvalidArgument, {"input 0 'A' has shape [1,30]", "K = 32"});
  // B of the wrong shape (block 32 expects [2, 1, 16]) and of the wrong dtype.
  expect_error(run_direct(nbits_node(32, 2, 4, 32, three), good), StatusCode::kInvalidArgument,
               {"input 1 'B' has shape [2,2,8]", "[2,1,16]", "block_size = 32"});
  expect_error(run_direct(nbits_node(32, 2, 4, 16, three), {good[0], f32({2, 2, 8}, std::vector<float>(32)), good[2]}),
               StatusCode::kInvalidModel, {"input 1 'B' has dtype float32"});
  // scales of the wrong length.
  expect_error(run_direct(nbits_node(32, 2, 4, 16, three), {good[0], good[1], f32({3}, {1, 1, 1})}),
               StatusCode::kInvalidArgument, {"input 2 'scales' has shape [3] (3 elements)", "N * k_blocks = 4"});
  // Packed zero points of the wrong length (N * ceil(2 * 4 / 8) = 2 bytes).
  ir::Node with_zp = nbits_node(32, 2, 4, 16, {"A", "B", "scales", "zero_points"});
  expect_error(run_direct(with_zp, {good[0], good[1], good[2], u8({4}, {8, 8, 8, 8})}), StatusCode::kInvalidArgument,
               {"input 3 'zero_points'", "4 elements", "= 2 elements"});
  // The deprecated g_idx.
  ir::Node with_g = nbits_node(32, 2, 4, 16, {"A", "B", "scales", "", "g_idx"});
  expect_error(run_direct(with_g, {good[0], good[1], good[2], Tensor(), testutil::i32({32}, std::vector<int32_t>(32))}),
               StatusCode::kUnsupported, {"input 4 'g_idx'", "deprecated"});
  // Bias of the wrong length.
  ir::Node with_bias = nbits_node(32, 2, 4, 16, kAllInputs);
  expect_error(run_direct(with_bias, {good[0], good[1], good[2], Tensor(), Tensor(), f32({3}, {1, 2, 3})}),
               StatusCode::kInvalidArgument, {"input 5 'bias'", "N = 2"});
  // A missing required attribute.
  ir::Node no_k = nbits_node(32, 2, 4, 16, three);
  no_k.attributes.erase("K");
  expect_error(run_direct(no_k, good), StatusCode::kInvalidModel, {"'K' is missing"});
}

}  // namespace kernels_matmul_nbits_test
}  // namespace edgemm
