// The panel-packed float32 matmul (src/kernels/cpu/matmul_panels.{h,cc}) and its use by MatMul
// and com.edgemm FusedMatMul with constant weights.
// (1) matmul_panels() against a double-precision product written here, on seeded inputs over
//     row counts around the 12-row tiles, K around the 256-step passes, N around the 32-column
//     panels (partial last panel), with and without bias, a row stride larger than K, and 1 and
//     2 threads.
// (2) The MatMul and FusedMatMul kernels against the reference kernels (oneDNN off) for A with
//     up to kPanelMaxRows rows (panels) and more (oneDNN), with a swish epilogue step.
// Skipped where the CPU has no AVX-512F.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/matmul_panels.h"
#include "nn_test_util.h"

namespace edgemm {
namespace {

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

TEST(MatMulPanels, KernelsWithConstantWeightsMatchReference) {
  if (!kernels::matmul_panels_available()) GTEST_SKIP() << "no AVX-512F here";
  ir::Node matmul = make_node("MatMul", {"A", "B"});
  ir::Node fused = make_node("FusedMatMul", {"A", "B", "bias"});
  fused.domain = "com.edgemm";
  ir::Step swish;
  swish.kind = ir::StepKind::kSwish;
  swish.alpha = 1.702f;
  ir::write_steps(fused, {swish});
  uint32_t seed = 100;
  // [1, 50, 96] x [96, 200]: a ViT block's shape at small size; 300 rows: past kPanelMaxRows.
  for (const Shape& a_shape : {Shape{1, 50, 96}, Shape{2, 7, 96}, Shape{96}, Shape{300, 96}}) {
    const Tensor a = random_f32(a_shape, seed++), b = random_f32({96, 200}, seed++), bias = random_f32({200}, seed++);
    for (const ir::Node* node : {&matmul, &fused}) {
      SCOPED_TRACE(node->op_type + " A " + shape_to_string(a_shape));
      std::vector<Tensor> inputs = {a, b};
      if (node == &fused) inputs.push_back(bias);
      auto ref = run_reference(*node, inputs);
      ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
      auto kernel = make_kernel(*node, {nullptr, &b, node == &fused ? &bias : nullptr});
      ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
      EXPECT_NE(std::string((*kernel)->name()).find("avx512_panels"), std::string::npos) << (*kernel)->name();
      for (int threads : {1, 2}) {
        DirectContext ctx(*node, inputs, threads);
        ASSERT_TRUE((*kernel)->run(ctx).is_ok());
        ASSERT_EQ(ctx.output(0).shape(), ref->shape());
        const Diff d = diff(ctx.output(0), *ref);
        EXPECT_LE(d.max_abs, 2e-6 * std::sqrt(96.0) * std::max(1.0, d.max_ref));
      }
    }
  }
}

}  // namespace
}  // namespace edgemm
