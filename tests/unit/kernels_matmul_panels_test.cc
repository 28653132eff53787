// The panel-packed float32 matmul (src/kernels/cpu/matmul_panels.{h,cc}) and its use by MatMul
// and com.edgemm FusedMatMul with constant weights.
// (1) matmul_panels() against a double-precision product written here, on seeded inputs over
//     row counts around the 12-row tiles, K around the 256-step passes, N around the 32-column
//     panels (partial last panel), with and without bias, a row stride larger than K, and 1 and
//     2 threads.
// (2) The MatMul and FusedMatMul kernels against the reference kernels (oneDNN off) for A with
//     up to kPanelMaxRows rows (panels) and more (oneDNN), with a swish epilogue step.
//     Row groups (packed A past kGroupBytes) against the same product; one kernel run at 100,
//     300 and 100 rows keeps one packed copy of B (oneDNN's, made from the panels) after the run
//     past kPanelMaxRows.
// (3) round_to_bfloat16 on hand-worked values (ties to even, infinities, NaN).
// (4) The bfloat16 panels against a double-precision product of the bfloat16-rounded A and B
//     (products of two bfloat16 values are exact in float32, so only the float32 sums differ),
//     over the shapes of (1), odd K included; and the kernels of bf16_matmul_kernels() against
//     the float32 reference within bfloat16 rounding (2^-8 relative per factor), past
//     kPanelMaxRows rows too, with a row's result independent of its batch.
// Skipped where the CPU has no AVX-512F (bfloat16: no AVX512_BF16).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/matmul_panels.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_matmul_panels_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

std::vector<float> seeded(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(MatMulPanels, MatchesDoubleProduct) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  uint32_t seed = 1;
  int checked = 0;
  for (int64_t m : {1, 5, 12, 13, 25, 50}) {
    for (int64_t k : {1, 7, 256, 300, 768}) {
      for (int64_t n : {1, 31, 32, 33, 100}) {
        for (bool with_bias : {false, true}) {
          const int64_t lda = k + 3;
          const std::vector<float> a = seeded(m * lda, seed++), b = seeded(k * n, seed++), bias = seeded(n, seed++);
          const kernels::PackedPanels packed(b.data(), k, n);
          for (int threads : {1, 2}) {
            SCOPED_TRACE("m " + std::to_string(m) + " k " + std::to_string(k) + " n " + std::to_string(n) +
                         (with_bias ? " bias" : "") + " threads " + std::to_string(threads));
            std::vector<float> y(m * n, NAN);
            kernels::matmul_panels(packed, a.data(), lda, m, with_bias ? bias.data() : nullptr, y.data(), threads);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                double want = with_bias ? bias[j] : 0.0;
                for (int64_t kk = 0; kk < k; ++kk) want += double(a[i * lda + kk]) * b[kk * n + j];
                ASSERT_NEAR(y[i * n + j], want, 2e-6 * std::sqrt(double(k)) + 1e-6) << "row " << i << " column " << j;
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

// Past kGroupBytes of packed A the row blocks go in groups that each sweep all panels.
TEST(MatMulPanels, RowGroupsMatchDoubleProduct) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  uint32_t seed = 500;
  for (int64_t m : {150, 301}) {
    for (int64_t k : {768, 2000}) {
      const int64_t n = 70;
      const std::vector<float> a = seeded(m * k, seed++), b = seeded(k * n, seed++), bias = seeded(n, seed++);
      const kernels::PackedPanels packed(b.data(), k, n);
      for (int threads : {1, 2}) {
        SCOPED_TRACE("m " + std::to_string(m) + " k " + std::to_string(k) + " threads " + std::to_string(threads));
        std::vector<float> y(m * n, NAN);
        kernels::matmul_panels(packed, a.data(), k, m, bias.data(), y.data(), threads);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = bias[j], magnitude = std::abs(bias[j]);
            for (int64_t kk = 0; kk < k; ++kk) {
              want += double(a[i * k + kk]) * b[kk * n + j];
              magnitude += std::abs(double(a[i * k + kk]) * b[kk * n + j]);
            }
            // float32 sums: rounding grows with √K and the magnitude of the terms.
            ASSERT_NEAR(y[i * n + j], want, 1e-7 * std::sqrt(double(k)) * magnitude + 1e-6)
                << "row " << i << " column " << j;
          }
        }
      }
    }
  }
}

// The first run past kPanelMaxRows rows makes oneDNN's layout from the panels and drops them:
// afterwards the kernel holds one packed copy, and every row count still matches the reference.
TEST(MatMulPanels, KernelKeepsOnePackedCopyAfterALargeRun) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  const ir::Node node = make_node("MatMul", {"A", "B"});
  const Tensor b = random_f32({96, 200}, 41);
  auto kernel = make_kernel(node, {nullptr, &b});
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
  const int64_t panel_bytes = 7 * 96 * 128;  // ceil(200 / 32) panels of 96 steps of 128 bytes
  EXPECT_EQ((*kernel)->packed_bytes(), panel_bytes);
  const Tensor freed_b = Tensor::borrow(b.dtype(), b.shape(), nullptr);  // as the runtime binds it
  uint32_t seed = 42;
  for (int64_t rows : {100, 300, 100}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    const Tensor a = random_f32({rows, 96}, seed++);
    auto ref = run_reference(node, {a, b});
    ASSERT_TRUE(ref.has_value());
    DirectContext ctx(node, {a, freed_b}, 2);
    ASSERT_TRUE((*kernel)->run(ctx).is_ok());
    const Diff d = diff(ctx.output(0), *ref);
    EXPECT_LE(d.max_abs, 2e-6 * std::sqrt(96.0) * std::max(1.0, d.max_ref));
    if (rows > kernels::kPanelMaxRows) {
      EXPECT_GT((*kernel)->packed_bytes(), 0);
      // oneDNN's layout only (blocked, padded): with the panels it would be past panel_bytes + 96 * 200 * 4.
      EXPECT_LT((*kernel)->packed_bytes(), panel_bytes + 96 * 200 * 4);
    }
  }
}

// Runs from several threads while the first run past kPanelMaxRows swaps the panels for oneDNN's
// layout: every run still matches the reference.
TEST(MatMulPanels, ConcurrentRunsWhileThePanelsAreDropped) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  const ir::Node node = make_node("MatMul", {"A", "B"});
  const Tensor b = random_f32({96, 200}, 51);
  auto kernel = make_kernel(node, {nullptr, &b});
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
  const Tensor freed_b = Tensor::borrow(b.dtype(), b.shape(), nullptr);
  const Tensor small = random_f32({100, 96}, 52), large = random_f32({300, 96}, 53);
  const Tensor want_small = run_reference(node, {small, b}).value(),
               want_large = run_reference(node, {large, b}).value();
  std::vector<std::thread> threads;
  std::vector<double> worst(4, 0.0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const bool big = (i + t) % 2 == 0;
        DirectContext ctx(node, {big ? large : small, freed_b}, 1);
        if (!(*kernel)->run(ctx).is_ok()) {
          worst[t] = 1e9;
          return;
        }
        const Diff d = diff(ctx.output(0), big ? want_large : want_small);
        worst[t] = std::max(worst[t], d.max_abs / std::max(1.0, d.max_ref));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (double w : worst) EXPECT_LE(w, 2e-6 * std::sqrt(96.0));
}

TEST(MatMulPanels, RoundToBfloat16TiesToEven) {
  EXPECT_EQ(kernels::round_to_bfloat16(1.0f), 1.0f);
  EXPECT_EQ(kernels::round_to_bfloat16(-2.5f), -2.5f);
  // bfloat16 keeps 7 fraction bits: the step above 1 is 2^-7.
  EXPECT_EQ(kernels::round_to_bfloat16(1.0f + 0x1p-8f), 1.0f);                       // half a step: to even (1)
  EXPECT_EQ(kernels::round_to_bfloat16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);         // 1.5 steps: to even (2)
  EXPECT_EQ(kernels::round_to_bfloat16(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);  // past half: up
  EXPECT_EQ(kernels::round_to_bfloat16(3.14159265f), 3.140625f);
  EXPECT_EQ(kernels::round_to_bfloat16(INFINITY), INFINITY);
  EXPECT_EQ(kernels::round_to_bfloat16(-INFINITY), -INFINITY);
  EXPECT_TRUE(std::isnan(kernels::round_to_bfloat16(NAN)));
  EXPECT_EQ(kernels::round_to_bfloat16(3.4e38f), INFINITY);  // above bfloat16's largest finite, 3.39e38
}

TEST(MatMulPanels, Bfloat16MatchesDoubleProductOfRoundedValues) {
  if (!kernels::matmul_panels_available(kernels::PanelFormat::kBfloat16)) GTEST_SKIP() << "no AVX512_BF16 here";
  uint32_t seed = 7;
  int checked = 0;
  for (int64_t m : {1, 13, 50}) {
    for (int64_t k : {1, 7, 256, 513, 768}) {
      for (int64_t n : {1, 33, 100}) {
        const int64_t lda = k + 3;
        const std::vector<float> a = seeded(m * lda, seed++), b = seeded(k * n, seed++), bias = seeded(n, seed++);
        const kernels::PackedPanels packed(b.data(), k, n, kernels::PanelFormat::kBfloat16);
        for (int threads : {1, 2}) {
          SCOPED_TRACE("m " + std::to_string(m) + " k " + std::to_string(k) + " n " + std::to_string(n) + " threads " +
                       std::to_string(threads));
          std::vector<float> y(m * n, NAN);
          kernels::matmul_panels(packed, a.data(), lda, m, bias.data(), y.data(), threads);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double want = bias[j];
              for (int64_t kk = 0; kk < k; ++kk) {
                want += double(kernels::round_to_bfloat16(a[i * lda + kk])) * kernels::round_to_bfloat16(b[kk * n + j]);
              }
              ASSERT_NEAR(y[i * n + j], want, 2e-6 * std::sqrt(double(k)) + 1e-6) << "row " << i << " column " << j;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 50000);
}

TEST(MatMulPanels, Bfloat16KernelsStayWithinBfloat16RoundingOfReference) {
  if (!kernels::matmul_panels_available(kernels::PanelFormat::kBfloat16)) GTEST_SKIP() << "no AVX512_BF16 here";
  const std::unique_ptr<kernels::KernelRegistry> bf16 = kernels::bf16_matmul_kernels();
  ir::Node matmul = make_node("MatMul", {"A", "B"});
  ir::Node fused = make_node("FusedMatMul", {"A", "B", "bias"});
  fused.domain = "com.edgemm";
  uint32_t seed = 200;
  for (const Shape& a_shape : {Shape{1, 50, 768}, Shape{300, 768}}) {
    const Tensor a = random_f32(a_shape, seed++), b = random_f32({768, 64}, seed++), bias = random_f32({64}, seed++);
    for (const ir::Node* node : {&matmul, &fused}) {
      SCOPED_TRACE(node->op_type + " A " + shape_to_string(a_shape));
      std::vector<Tensor> inputs = {a, b};
      if (node == &fused) inputs.push_back(bias);
      auto ref = run_reference(*node, inputs);
      ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
      auto kernel = make_kernel(*node, {nullptr, &b, node == &fused ? &bias : nullptr}, 17, *bf16);
      ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
      EXPECT_STREQ((*kernel)->name(),
                   node == &fused ? "bf16_fused_matmul__avx512_panels" : "bf16_matmul__avx512_panels");
      DirectContext ctx(*node, inputs, 2);
      ASSERT_TRUE((*kernel)->run(ctx).is_ok());
      const Diff d = diff(ctx.output(0), *ref);
      // Two 2^-9 roundings per product, past kPanelMaxRows rows too (no float32 fallback).
      EXPECT_LE(d.max_abs, 2 * 0x1p-9 * std::sqrt(768.0) * std::max(1.0, d.max_ref));
      EXPECT_GT(d.max_abs, 1e-5) << "bfloat16 rounding should show";
    }
  }
  // A row's result does not depend on the batch: row 7 of the [300, 768] run equals row 7 alone.
  const Tensor a = random_f32({300, 768}, 300), b = random_f32({768, 64}, 301);
  auto kernel = make_kernel(matmul, {nullptr, &b}, 17, *bf16);
  ASSERT_TRUE(kernel.has_value());
  Tensor row = random_f32({1, 768}, 0);
  std::copy(a.data<float>() + 7 * 768, a.data<float>() + 8 * 768, row.data<float>());
  DirectContext all(matmul, {a, b}, 2), one(matmul, {row, b}, 1);
  ASSERT_TRUE((*kernel)->run(all).is_ok());
  ASSERT_TRUE((*kernel)->run(one).is_ok());
  for (int64_t j = 0; j < 64; ++j) EXPECT_EQ(all.output(0).data<float>()[7 * 64 + j], one.output(0).data<float>()[j]);
}

TEST(MatMulPanels, KernelsWithConstantWeightsMatchReference) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  expect_constant_weight_matmuls_match_reference(100, false, [](const std::string&, const std::string& name) {
    return name.find("avx512_panels") != std::string::npos;
  });
}

}  // namespace kernels_matmul_panels_test
}  // namespace edgemm
