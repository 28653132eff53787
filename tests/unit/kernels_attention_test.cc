// com.edgemm Attention (src/kernels/cpu/attention.{h,cc}) and passes::fuse_attention.
// (1) The kernel against the graph it replaces, run op by op on the reference kernels (oneDNN
//     off): MatMul(Q, Kt) · scale + mask → Softmax(last axis) → MatMul(·, V), on seeded inputs
//     over S and T around the 14-row tiles and 64-row blocks, D 16 and 64, masks of every
//     broadcast form, leading axes that broadcast, 1 and 2 threads; a fully masked row gives NaN
//     as Softmax does.
// (2) Bad operands are errors naming the input; FLOPs counted by hand.
// (3) The pass turns an exported attention (Mul by the scale, Add of a mask) into one node and
//     the model's output stays that of the unfused model (runtime with optimize off).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "ir/flops.h"
#include "kernels/cpu/matmul_panels.h"
#include "model_builder.h"
#include "nn_test_util.h"
#include "onnx_attr_util.h"

namespace edgemm {
namespace kernels_attention_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

ir::Node attention_node(float scale, bool with_mask) {
  ir::Node node = make_node("Attention", {"Q", "Kt", "V", with_mask ? "mask" : ""});
  node.domain = "com.edgemm";
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = scale;
  node.attributes["scale"] = a;
  return node;
}

/// The unfused graph on the reference kernels.
Tensor unfused(const Tensor& q, const Tensor& kt, const Tensor& v, const Tensor* mask, float scale) {
  Tensor s = run_reference(make_node("MatMul", {"A", "B"}), {q, kt}).value();
  s = run_reference(make_node("Mul", {"A", "B"}), {s, Tensor::from_floats({}, {scale})}).value();
  if (mask != nullptr) s = run_reference(make_node("Add", {"A", "B"}), {s, *mask}).value();
  ir::Node softmax = make_node("Softmax", {"X"});
  set_int(softmax, "axis", -1);
  s = run_reference(softmax, {s}).value();
  return run_reference(make_node("MatMul", {"A", "B"}), {s, v}).value();
}

struct Case {
  Shape q, kt, v, mask;  // empty mask: none
};

TEST(Attention, MatchesTheUnfusedGraph) {
  std::vector<Case> cases;
  for (int64_t s : {1, 13, 14, 50, 70, 130}) {
    for (int64_t t : {1, 15, 50, 77}) {
      cases.push_back({{2, 3, s, 16}, {2, 3, 16, t}, {2, 3, t, 16}, {2, 1, 1, t}});
    }
  }
  cases.push_back({{1, 12, 197, 64}, {1, 12, 64, 197}, {1, 12, 197, 64}, {}});             // ViT-B/16
  cases.push_back({{1, 4, 300, 64}, {1, 4, 64, 300}, {1, 4, 300, 64}, {1, 4, 300, 300}});  // full mask
  cases.push_back({{2, 3, 20, 16}, {1, 3, 16, 30}, {2, 1, 30, 16}, {30}});                 // broadcast K, V
  cases.push_back({{3, 20, 16}, {3, 16, 30}, {3, 30, 16}, {20, 1}});                       // rank 3, mask per query
  uint32_t seed = 7;
  for (const Case& c : cases) {
    SCOPED_TRACE("Q " + shape_to_string(c.q) + " Kt " + shape_to_string(c.kt) + " V " + shape_to_string(c.v) +
                 " mask " + shape_to_string(c.mask));
    const Tensor q = random_f32(c.q, seed++), kt = random_f32(c.kt, seed++), v = random_f32(c.v, seed++);
    const Tensor mask = c.mask.empty() ? Tensor() : random_f32(c.mask, seed++);
    const float scale = 0.125f;
    const Tensor want = unfused(q, kt, v, c.mask.empty() ? nullptr : &mask, scale);
    const ir::Node node = attention_node(scale, !c.mask.empty());
    auto kernel = make_kernel(node, {nullptr, nullptr, nullptr, nullptr});
    ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
    EXPECT_STREQ((*kernel)->name(),
                 kernels::matmul_panels_available() ? "f32_attention__avx512_panels" : "attention__reference");
    for (int threads : {1, 2}) {
      DirectContext ctx(node, {q, kt, v, mask}, threads);
      ASSERT_TRUE((*kernel)->run(ctx).is_ok());
      ASSERT_EQ(ctx.output(0).shape(), want.shape());
      const Diff d = diff(ctx.output(0), want);
      EXPECT_LE(d.max_abs, 2e-6 * std::sqrt(double(c.kt.back())) * std::max(1.0, d.max_ref));
    }
  }
}

TEST(Attention, FullyMaskedRowIsNaNAsInSoftmax) {
  const Tensor q = random_f32({1, 1, 2, 4}, 1), kt = random_f32({1, 1, 4, 3}, 2), v = random_f32({1, 1, 3, 4}, 3);
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor mask = Tensor::from_floats({1, 1, 2, 3}, {0, 0, 0, -inf, -inf, -inf});
  auto y = run_direct(attention_node(1.0f, true), {q, kt, v, mask});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  const Tensor want = unfused(q, kt, v, &mask, 1.0f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y->data<float>()[i], want.data<float>()[i], 1e-6);
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(y->data<float>()[i])) << i;
}

TEST(Attention, BadOperandsNameTheInput) {
  const Tensor q = random_f32({1, 2, 5, 8}, 1), kt = random_f32({1, 2, 8, 6}, 2), v = random_f32({1, 2, 6, 8}, 3);
  expect_error(run_direct(attention_node(1.0f, false), {q, random_f32({1, 2, 7, 6}, 4), v}),
               StatusCode::kInvalidArgument, {"'Kt'", "D = 8"});
  expect_error(run_direct(attention_node(1.0f, false), {q, kt, random_f32({1, 2, 5, 8}, 5)}),
               StatusCode::kInvalidArgument, {"'V'", "T = 6"});
  expect_error(run_direct(attention_node(1.0f, false), {q, random_f32({1, 3, 8, 6}, 6), v}),
               StatusCode::kInvalidArgument, {"'Kt'", "broadcast"});
  expect_error(run_direct(attention_node(1.0f, true), {q, kt, v, random_f32({1, 1, 4, 6}, 7)}),
               StatusCode::kInvalidArgument, {"'mask'", "1 or S"});
}

TEST(Attention, FlopsAreTheTwoProductsAndTheSoftmax) {
  // L = 2 · 3, S = 5, T = 7, D = 4: 4 · L·S·T·D multiply-adds' flops, 3 per score.
  const auto flops = ir::node_flops(attention_node(1.0f, false),
                                    {Shape{2, 3, 5, 4}, Shape{2, 3, 4, 7}, Shape{2, 3, 7, 4}}, {Shape{2, 3, 5, 4}});
  ASSERT_TRUE(flops.has_value());
  EXPECT_EQ(*flops, 4 * 6 * 5 * 7 * 4 + 3 * 6 * 5 * 7);
}

TEST(AttentionFusion, ExportedAttentionBecomesOneNodeWithTheSameOutput) {
  // x [1, 2, 10, 8] as Q, K and V of 2 heads: MatMul(x, Transpose(x)) · 0.35 + mask → Softmax → · x.
  auto dir = testing::temp_dir("attention_fusion");
  testing::ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 2, 10, 8});
  b.input("mask", onnx::TensorProto::FLOAT, {1, 1, 1, 10});
  b.initializer_floats("scale", {}, {0.35f});
  auto* t = b.node("Transpose", {"x"}, {"kt"});
  testing::set_ints(t, "perm", {0, 1, 3, 2});
  b.node("MatMul", {"x", "kt"}, {"s"});
  b.node("Mul", {"s", "scale"}, {"s2"});
  b.node("Add", {"s2", "mask"}, {"s3"});
  auto* sm = b.node("Softmax", {"s3"}, {"p"});
  testing::set_int(sm, "axis", -1);
  b.node("MatMul", {"p", "x"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {1, 2, 10, 8});
  const std::string path = b.save(dir / "attention.onnx");
  const Tensor x = random_f32({1, 2, 10, 8}, 11), mask = random_f32({1, 1, 1, 10}, 12);
  std::vector<Tensor> outputs;
  for (bool optimize : {false, true}) {
    InferencerConfig config;
    config.model_path = path;
    config.optimize = optimize;
    auto inf = Inferencer::create(config);
    ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
    auto out = (*inf)->run_profiled({{"x", x}, {"mask", mask}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    bool fused = false;
    for (const auto& n : out->nodes) fused = fused || n.op_type == "Attention";
    EXPECT_EQ(fused, optimize && kernels::matmul_panels_available());
    outputs.push_back(out->outputs[0]);
  }
  const Diff d = diff(outputs[1], outputs[0]);
  EXPECT_LE(d.max_abs, 1e-5 * std::max(1.0, d.max_ref));
}

}  // namespace kernels_attention_test
}  // namespace edgemm
