// MatMul and Gemm (src/kernels/cpu/matmul.cc).
// (1) Hand-computed products (written out in the comments), integer dtypes, 1-D operands,
//     batch broadcasting checked against loops written in this test.
// (2) The oneDNN path against the reference kernel on seeded random inputs: MatMul with
//     constant 2-D weights (PP-OCRv4 rec shapes), batched and broadcast operands, computed
//     weights; Gemm with every transA/transB/alpha/beta/C-shape combination, constant or not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/xnnpack.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_matmul_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

TEST(MatMul, Hand2x3Times3x2) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
  ir::Node node = make_node("MatMul", {"A", "B"});
  auto y = run(node, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2, 2}, {58, 64, 139, 154});
}

TEST(MatMul, OneDimensionalOperandsDropTheirAxis) {
  ir::Node node = make_node("MatMul", {"A", "B"});
  const Tensor m = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // [K] x [K, N]: [1,1] x [[1,2,3],[4,5,6]] = [5,7,9].
  auto a = run(node, {f32({2}, {1, 1}), m});
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  expect_near(*a, {3}, {5, 7, 9});
  // [M, K] x [K]: [[1,2,3],[4,5,6]] x [1,0,-1] = [-2,-2].
  auto b = run(node, {m, f32({3}, {1, 0, -1})});
  ASSERT_TRUE(b.has_value());
  expect_near(*b, {2}, {-2, -2});
  // [K] x [K] is a scalar: 1*4 + 2*5 + 3*6 = 32.
  auto c = run(node, {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  ASSERT_TRUE(c.has_value());
  expect_near(*c, {}, {32});
  // [K] x [B, K, N] broadcasts the vector: [2, 1] -> [2, N].
  auto d = run(node, {f32({2}, {1, 1}), f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_TRUE(d.has_value());
  expect_near(*d, {2, 2}, {4, 6, 12, 14});
}

TEST(MatMul, IntegerDtypes) {
  ir::Node node = make_node("MatMul", {"A", "B"});
  auto y = run(
      node, {make<int64_t>(DataType::kInt64, {2, 2}, {1, -2, 3, 4}), make<int64_t>(DataType::kInt64, {2, 1}, {5, 6})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{-7, 39}));
  auto z = run(
      node, {make<int32_t>(DataType::kInt32, {1, 2}, {3, 4}), make<int32_t>(DataType::kInt32, {2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  EXPECT_EQ(values<int32_t>(*z), (std::vector<int32_t>{15, 22}));
}

// Plain loops of numpy.matmul broadcasting written here, independent of the kernel.
std::vector<float> naive_batched(const Tensor& a, const Tensor& b, int64_t ab0, int64_t bb1) {
  // a: [A0, 1, M, K], b: [B1, K, N] -> [A0, B1, M, N]
  const int64_t m = a.dim(-2), k = a.dim(-1), n = b.dim(-1);
  std::vector<float> out;
  for (int64_t i = 0; i < ab0; ++i) {
    for (int64_t j = 0; j < bb1; ++j) {
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          double s = 0;
          for (int64_t t = 0; t < k; ++t) {
            s += double(a.data<float>()[(i * m + r) * k + t]) * double(b.data<float>()[(j * k + t) * n + c]);
          }
          out.push_back(static_cast<float>(s));
        }
      }
    }
  }
  return out;
}

TEST(MatMul, BatchBroadcastMatchesLoops) {
  ir::Node node = make_node("MatMul", {"A", "B"});
  const Tensor a = random_f32({2, 1, 3, 5}, 1), b = random_f32({4, 5, 6}, 2);
  const std::vector<float> want = naive_batched(a, b, 2, 4);
  for (bool onednn : {false, true}) {
    kernels::onednn::ScopedEnabled mode(onednn);
    auto y = run(node, {a, b});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {2, 4, 3, 6}, want, 1e-5f);
  }
}

TEST(MatMul, MismatchedInnerDimensionsIsAnError) {
  ir::Node node = make_node("MatMul", {"A", "B"});
  node.name = "mm";
  auto kernel = make_kernel(node, {nullptr, nullptr});
  ASSERT_TRUE(kernel.has_value());
  DirectContext ctx(node, {random_f32({2, 3}, 1), random_f32({4, 5}, 2)});
  Status s = (*kernel)->run(ctx);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("MatMul 'mm': input 'A' [2,3] and input 'B' [4,5]"), std::string::npos) << s.message();
  auto bad_batch = run(node, {random_f32({2, 2, 3}, 1), random_f32({3, 3, 4}, 2)});
  EXPECT_FALSE(bad_batch.has_value());
  auto f16 = run(node, {make<uint16_t>(DataType::kFloat16, {1, 1}, {0x3C00}),
                        make<uint16_t>(DataType::kFloat16, {1, 1}, {0x3C00})});
  ASSERT_FALSE(f16.has_value());
  EXPECT_EQ(f16.status().code(), StatusCode::kUnsupported);
}

struct MatMulCase {
  Shape a, b;
  bool b_constant;
};

TEST(MatMul, OnednnMatchesReference) {
  const std::vector<MatMulCase> cases = {
      // PP-OCRv4 rec (SVTR) projections and head, cls head.
      {{1, 40, 120}, {120, 360}, true},
      {{1, 40, 120}, {120, 6625}, true},
      {{6, 40, 240}, {240, 120}, true},
      {{1, 200}, {200, 2}, true},
      // attention q k^T and scores v (computed operands)
      {{1, 8, 40, 15}, {1, 8, 15, 40}, false},
      {{1, 8, 40, 40}, {1, 8, 40, 15}, false},
      // broadcasting
      {{3, 1, 5, 7}, {4, 7, 6}, false},
      {{5, 7}, {3, 7, 6}, false},
      {{2, 3, 5, 7}, {1, 3, 7, 6}, true},
      {{1, 1, 7}, {1, 7, 9}, true},
      {{1, 64}, {64, 1}, true},
      {{17, 33}, {33, 65}, false},
      // CLIP ViT attention at 65 tokens; K past one depth block (256) with a tail of 3; 1-3 tail
      // columns and rows
      {{1, 4, 65, 16}, {1, 4, 16, 65}, false},
      {{1, 4, 65, 65}, {1, 4, 65, 16}, false},
      {{2, 6, 259}, {259, 30}, false},
      {{3, 9, 514}, {3, 514, 7}, false},
      {{2, 5, 3}, {2, 3, 2}, true},
      {{7}, {7, 5}, true},
      {{4, 7}, {7}, false},
  };
  uint32_t seed = 10;
  for (const MatMulCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.a) + " x " + shape_to_string(c.b));
    ir::Node node = make_node("MatMul", {"A", "B"});
    const Tensor a = random_f32(c.a, seed++), b = random_f32(c.b, seed++);
    auto ref = run_reference(node, {a, b});
    ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
    auto kernel = make_kernel(node, {nullptr, c.b_constant ? &b : nullptr});
    ASSERT_TRUE(kernel.has_value());
    // On aarch64 without SVE constant 2-D weights run on XNNPACK and the rest on NEON
    // (matmul_neon.h); elsewhere constant 2-D weights run on the panel kernel where the CPU has
    // AVX-512F (kernels_matmul_panels_test.cc), the rest on oneDNN.
    const bool packed = c.b_constant && b.element_count() == c.b[c.b.size() - 1] * c.b[c.b.size() - 2];
    EXPECT_STREQ((*kernel)->name(), kernels::xnnpack::enabled() ? (packed ? "f32_matmul__xnnpack" : "f32_matmul__neon")
                                    : packed && kernels::matmul_panels_available() ? "f32_matmul__avx512_panels"
                                                                                   : "f32_matmul__onednn");
    if (!c.b_constant) {
      EXPECT_TRUE((*kernel)->reads_constant_input(1));
    }
    if (packed && (kernels::xnnpack::enabled() || kernels::matmul_panels_available())) {
      EXPECT_FALSE((*kernel)->reads_constant_input(1));
    }
    // A B that the kernel keeps packed is freed by the runtime: run it with no data.
    const Tensor run_b = (*kernel)->reads_constant_input(1) ? b : Tensor::borrow(b.dtype(), b.shape(), nullptr);
    for (int threads : {1, 2}) {
      DirectContext ctx(node, {a, run_b}, threads);
      ASSERT_TRUE((*kernel)->run(ctx).is_ok());
      const Diff d = diff(ctx.output(0), *ref);
      EXPECT_LE(d.max_abs, 2e-6 * std::sqrt(double(c.a.back())) * std::max(1.0, d.max_ref));
    }
  }
}

// Constant weights reordered by oneDNN: once a reordered copy exists the tensor can be dropped,
// and every later layout, and the weights themselves, are read back from that copy exactly.
TEST(MatMul, OnednnPackedWeightsOutliveTheirTensor) {
  const Tensor b = random_f32({96, 200}, 7);
  const dnnl::memory::desc plain({96, 200}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  const dnnl::memory::desc transposed({96, 200}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ba);
  const ir::Node node = make_node("MatMul", {"A", "B"});
  kernels::onednn::PackedWeights weights(b);
  EXPECT_TRUE(weights.holds_tensor());
  EXPECT_FALSE(weights.release_tensor());  // no other copy yet
  ASSERT_TRUE(weights.get(node, transposed, plain));
  ASSERT_TRUE(weights.release_tensor());
  EXPECT_FALSE(weights.holds_tensor());
  auto back = weights.materialize(node);
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  EXPECT_EQ(std::memcmp(back->raw_data(), b.raw_data(), b.byte_size()), 0);
  // The plain layout is now a copy of its own, made from the transposed one.
  dnnl::memory copy = weights.get(node, plain, plain);
  ASSERT_TRUE(copy);
  EXPECT_EQ(weights.packed_count(), 2u);
  EXPECT_EQ(std::memcmp(copy.get_data_handle(), b.raw_data(), b.byte_size()), 0);
}

// ---------------------------------------------------------------------------------------------
// Gemm

TEST(Gemm, HandComputedAttributes) {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]]: A B = [[19,22],[43,50]].
  const Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  {
    ir::Node node = make_node("Gemm", {"A", "B"});
    auto y = run(node, {a, b});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {2, 2}, {19, 22, 43, 50});
  }
  {
    // transA: A^T B = [[1,3],[2,4]] B = [[26,30],[38,44]]; alpha 0.5, C = [1, 2] * beta 2.
    ir::Node node = make_node("Gemm", {"A", "B", "C"});
    set_int(node, "transA", 1);
    set_float(node, "alpha", 0.5f);
    set_float(node, "beta", 2.0f);
    auto y = run(node, {a, b, f32({2}, {1, 2})});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {2, 2}, {15, 19, 21, 26});
  }
  {
    // transB: A B^T = [[17,23],[39,53]]; C = [[10],[20]] (column) broadcast along N.
    ir::Node node = make_node("Gemm", {"A", "B", "C"});
    set_int(node, "transB", 1);
    auto y = run(node, {a, b, f32({2, 1}, {10, 20})});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {2, 2}, {27, 33, 59, 73});
  }
  {
    // Scalar C and beta 0.5: [[19,22],[43,50]] + 0.5 * 4.
    ir::Node node = make_node("Gemm", {"A", "B", "C"});
    set_float(node, "beta", 0.5f);
    auto y = run(node, {a, b, f32({}, {4})});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {2, 2}, {21, 24, 45, 52});
  }
}

TEST(Gemm, BadCShapeIsAnError) {
  ir::Node node = make_node("Gemm", {"A", "B", "C"});
  auto y = run(node, {random_f32({2, 3}, 1), random_f32({3, 4}, 2), random_f32({3}, 3)});
  ASSERT_FALSE(y.has_value());
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);
  auto k = run(node, {random_f32({2, 3}, 1), random_f32({4, 4}, 2), random_f32({4}, 3)});
  EXPECT_FALSE(k.has_value());
  auto r = run(node, {random_f32({2, 3, 1}, 1), random_f32({3, 4}, 2), random_f32({4}, 3)});
  EXPECT_FALSE(r.has_value());
}

TEST(Gemm, OnednnMatchesReference) {
  const int64_t m = 13, k = 37, n = 29;
  const std::vector<Shape> c_shapes = {{}, {n}, {1, n}, {m, 1}, {m, n}, {1}, {1, 1}};
  uint32_t seed = 1000;
  int checked = 0;
  for (int trans_a = 0; trans_a < 2; ++trans_a) {
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
      for (float alpha : {1.0f, 0.25f}) {
        for (float beta : {1.0f, -2.0f, 0.0f}) {
          for (int ci = -1; ci < static_cast<int>(c_shapes.size()); ++ci) {
            for (bool b_constant : {true, false}) {
              const bool has_c = ci >= 0;
              ir::Node node = make_node(
                  "Gemm", has_c ? std::vector<std::string>{"A", "B", "C"} : std::vector<std::string>{"A", "B"});
              set_int(node, "transA", trans_a);
              set_int(node, "transB", trans_b);
              set_float(node, "alpha", alpha);
              set_float(node, "beta", beta);
              std::vector<Tensor> in = {random_f32(trans_a ? Shape{k, m} : Shape{m, k}, seed++),
                                        random_f32(trans_b ? Shape{n, k} : Shape{k, n}, seed++)};
              if (has_c) in.push_back(random_f32(c_shapes[ci], seed++));
              SCOPED_TRACE("transA " + std::to_string(trans_a) + " transB " + std::to_string(trans_b) + " alpha " +
                           std::to_string(alpha) + " beta " + std::to_string(beta) + " C " +
                           (has_c ? shape_to_string(c_shapes[ci]) : "none") + (b_constant ? " B constant" : ""));
              auto ref = run_reference(node, in);
              ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
              // With B constant, C is constant too (on XNNPACK a row C becomes the operator's bias).
              auto kernel = make_kernel(node, {nullptr, b_constant ? &in[1] : nullptr,
                                               b_constant && has_c ? &in[2] : nullptr});
              ASSERT_TRUE(kernel.has_value());
              // aarch64 without SVE: constant B with A not transposed runs XNNPACK (matmul.cc).
              EXPECT_STREQ((*kernel)->name(), kernels::xnnpack::enabled() && b_constant && !trans_a
                                                  ? "f32_gemm__xnnpack"
                                                  : "f32_gemm__onednn");
              DirectContext ctx(node, in, 2);
              ASSERT_TRUE((*kernel)->run(ctx).is_ok());
              const Diff d = diff(ctx.output(0), *ref);
              EXPECT_LE(d.max_abs, 2e-6 * std::sqrt(double(k)) * std::max(1.0, d.max_ref));
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 2 * 3 * 8 * 2);
}

TEST(Gemm, LinearLayerConcurrentRuns) {
  // torch.nn.Linear export: transB = 1, constant [N, K] weights and [N] bias; one kernel, 4
  // threads, batch sizes 1 and 7 interleaved.
  ir::Node node = make_node("Gemm", {"A", "B", "C"});
  set_int(node, "transB", 1);
  const Tensor w = random_f32({48, 96}, 1), bias = random_f32({48}, 2);
  const Tensor x1 = random_f32({1, 96}, 3), x7 = random_f32({7, 96}, 4);
  auto r1 = run_reference(node, {x1, w, bias});
  auto r7 = run_reference(node, {x7, w, bias});
  ASSERT_TRUE(r1.has_value() && r7.has_value());
  auto kernel = make_kernel(node, {nullptr, &w, &bias});
  ASSERT_TRUE(kernel.has_value());
  std::vector<int> failures(4, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const bool one = (i + t) % 2 == 0;
        DirectContext ctx(node, {one ? x1 : x7, w, bias});
        if (!(*kernel)->run(ctx).is_ok() || diff(ctx.output(0), one ? *r1 : *r7).max_abs > 1e-4) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace kernels_matmul_test
}  // namespace edgemm

namespace edgemm {
namespace kernels_matmul_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

// MatMul and FusedMatMul (Swish epilogue) with constant weights on XNNPACK's fully connected
// operator (aarch64 without SVE): against the reference kernels, bias constant (packed into the
// operator) and computed at run time (added after), 1 and 2 threads.
TEST(MatMulXnnpack, KernelsWithConstantWeightsMatchReference) {
  if (!kernels::xnnpack::enabled()) GTEST_SKIP() << "XNNPACK runs on aarch64 without SVE only";
  expect_constant_weight_matmuls_match_reference(200, true, [](const std::string& op, const std::string& name) {
    return name == (op == "FusedMatMul" ? "f32_fused_matmul__xnnpack" : "f32_matmul__xnnpack");
  });
}

// At precision fp16 (Arm with FP16 arithmetic) the same MatMuls run XNNPACK's half-precision fully
// connected operator: B, A and the sums in IEEE half (11 significant bits), within 5e-4 · √K of
// the float32 reference (relative to max(1, max |y|); measured errors are printed).
TEST(MatMulXnnpack, HalfPrecisionStaysNearReference) {
  if (!kernels::fp16_available()) GTEST_SKIP() << "fp16 runs on Arm CPUs with FP16 arithmetic only";
  const auto fp16 = kernels::fp16_kernels();
  expect_constant_weight_matmuls_match_reference(
      300, true,
      [](const std::string& op, const std::string& name) {
        return name == (op == "FusedMatMul" ? "f16_fused_matmul__xnnpack" : "f16_matmul__xnnpack");
      },
      *fp16, 5e-4);
}

}  // namespace kernels_matmul_test
}  // namespace edgemm
