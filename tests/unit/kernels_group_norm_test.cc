// GroupNormalization-18/-21 (src/kernels/cpu/group_norm.cc) and LRN-1 (src/kernels/cpu/lrn.cc)
// run through runtime::run_node; error cases through run_direct so that messages name the
// node's own values. Expected values are worked out by hand in the comments, never taken from
// an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_group_norm_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;
using nntest::set_float;
using nntest::set_int;

ir::Node group_norm_node(int64_t groups, float epsilon) {
  ir::Node node = make_node("GroupNormalization", {"X", "scale", "bias"});
  set_int(node, "num_groups", groups);
  set_float(node, "epsilon", epsilon);
  return node;
}

// X [1, 4, 2], two groups of two channels:
//   group 0 = channels {1, 2}, {3, 4}: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
//     normalized (x - 2.5) / √1.25 = {-1.3416408, -0.4472136, 0.4472136, 1.3416408};
//   group 1 = channels {10, 10}, {10, 14}: mean 11, variance (1 + 1 + 1 + 9) / 4 = 3,
//     normalized (x - 11) / √3 = {-0.5773503, -0.5773503, -0.5773503, 1.7320508}.
const std::vector<float> kX = {1, 2, 3, 4, 10, 10, 10, 14};
constexpr float kA = 1.3416408f, kB = 0.4472136f, kC = 0.5773503f, kD = 1.7320508f;

TEST(KernelsGroupNorm, Opset18ScaleAndBiasPerGroup) {
  // scale {2, -1}, bias {1, 0}: group 0 → 2·n + 1, group 1 → -n.
  auto y = run(group_norm_node(2, 0.0f), {f32({1, 4, 2}, kX), f32({2}, {2, -1}), f32({2}, {1, 0})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 4, 2}, {-2 * kA + 1, -2 * kB + 1, 2 * kB + 1, 2 * kA + 1, kC, kC, kC, -kD}, 1e-5f);
}

TEST(KernelsGroupNorm, Opset21ScaleAndBiasPerChannel) {
  // scale {1, 2, 0.5, -1}, bias {0, 1, 0, 10} per channel.
  auto y = run(group_norm_node(2, 0.0f), {f32({1, 4, 2}, kX), f32({4}, {1, 2, 0.5f, -1}), f32({4}, {0, 1, 0, 10})}, 21);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 4, 2}, {-kA, -kB, 2 * kB + 1, 2 * kA + 1, -0.5f * kC, -0.5f * kC, kC + 10, -kD + 10}, 1e-5f);
}

TEST(KernelsGroupNorm, EpsilonDefaultsAndRank2) {
  // X [2, 2] (no spatial axes), one channel a group. Each group is one value: variance 0, so
  // y = 0 / √epsilon · scale + bias = bias.
  auto y = run(group_norm_node(2, 1e-5f), {f32({2, 2}, {5, -7, 1, 2}), f32({2}, {3, 3}), f32({2}, {0.5f, -1})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2, 2}, {0.5f, -1, 0.5f, -1});
  // X [1, 1, 2] = {0, 2}: mean 1, variance 1; epsilon 3 → 1 / √(1 + 3) = 0.5 → {-0.5, 0.5}.
  auto e = run(group_norm_node(1, 3.0f), {f32({1, 1, 2}, {0, 2}), f32({1}, {1}), f32({1}, {0})}, 21);
  ASSERT_TRUE(e.has_value()) << e.status().to_string();
  expect_near(*e, {1, 1, 2}, {-0.5f, 0.5f});
  // Absent epsilon is 1e-5: {0, 2} → ±1 / √(1 + 1e-5) = ±0.999995.
  ir::Node no_eps = make_node("GroupNormalization", {"X", "scale", "bias"});
  set_int(no_eps, "num_groups", 1);
  auto d = run(no_eps, {f32({1, 1, 2}, {0, 2}), f32({1}, {1}), f32({1}, {0})}, 21);
  ASSERT_TRUE(d.has_value()) << d.status().to_string();
  expect_near(*d, {1, 1, 2}, {-0.999995f, 0.999995f}, 2e-7f);
}

TEST(KernelsGroupNorm, Float64StashAndFloat16) {
  auto y = run(group_norm_node(2, 0.0f),
               {f64({1, 4, 2}, {1, 2, 3, 4, 10, 10, 10, 14}), f64({2}, {1, 1}), f64({2}, {0, 0})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  const std::vector<double> v = values<double>(*y);
  EXPECT_NEAR(v[0], -1.5 / std::sqrt(1.25), 1e-12);
  EXPECT_NEAR(v[7], 3 / std::sqrt(3.0), 1e-12);
  // stash_type 11 at opset 21: float32 X normalized in float64 (same result within float32).
  ir::Node stash = group_norm_node(2, 0.0f);
  set_int(stash, "stash_type", 11);
  auto s = run(stash, {f32({1, 4, 2}, kX), f32({4}, {1, 1, 1, 1}), f32({4}, {0, 0, 0, 0})}, 21);
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  expect_near(*s, {1, 4, 2}, {-kA, -kB, kB, kA, -kC, -kC, -kC, kD}, 1e-6f);
  // float16 X {0, 2} per group of one channel, scale 2, bias 1: {-1, 1} · 2 + 1 = {-1, 3} (exact).
  auto h = run(group_norm_node(1, 0.0f),
               {f16({1, 1, 2}, {float_to_half(0), float_to_half(2)}), f16({1}, {float_to_half(2)}),
                f16({1}, {float_to_half(1)})},
               18);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  ASSERT_EQ(h->dtype(), DataType::kFloat16);
  EXPECT_EQ(half_to_float(values<uint16_t>(*h)[0]), -1.0f);
  EXPECT_EQ(half_to_float(values<uint16_t>(*h)[1]), 3.0f);
}

TEST(KernelsGroupNorm, Errors) {
  const Tensor x = f32({1, 4, 2}, kX);
  // num_groups must divide C.
  expect_error(run_direct(group_norm_node(3, 0), {x, f32({3}, {1, 1, 1}), f32({3}, {0, 0, 0})}, 18),
               StatusCode::kInvalidArgument, {"GroupNormalization", "num_groups 3", "4 channels"});
  // Opset 21 wants [C], opset 18 [num_groups].
  expect_error(run_direct(group_norm_node(2, 0), {x, f32({2}, {1, 1}), f32({4}, {0, 0, 0, 0})}, 21),
               StatusCode::kInvalidArgument, {"GroupNormalization", "scale 'scale'", "[C]", "[4]", "got [2]"});
  expect_error(run_direct(group_norm_node(2, 0), {x, f32({2}, {1, 1}), f32({4}, {0, 0, 0, 0})}, 18),
               StatusCode::kInvalidArgument, {"bias 'bias'", "[num_groups]", "[2]", "got [4]"});
  expect_error(run_direct(group_norm_node(2, 0), {x, f64({2}, {1, 1}), f32({2}, {0, 0})}, 18),
               StatusCode::kInvalidArgument, {"scale 'scale'", "float64"});
  expect_error(run_direct(group_norm_node(1, 0), {f32({4}, {1, 2, 3, 4}), f32({1}, {1}), f32({1}, {0})}, 18),
               StatusCode::kInvalidArgument, {"rank >= 2", "[4]"});
  expect_error(run_direct(group_norm_node(1, 0), {i32({1, 1}, {1}), i32({1}, {1}), i32({1}, {0})}, 18),
               StatusCode::kUnsupported, {"'X'", "int32"});
  // Attributes.
  expect_error(run_direct(group_norm_node(0, 0), {x, f32({0}, {}), f32({0}, {})}, 18), StatusCode::kInvalidModel,
               {"num_groups must be > 0, got 0"});
  ir::Node none = make_node("GroupNormalization", {"X", "scale", "bias"});
  expect_error(run_direct(none, {x, f32({2}, {1, 1}), f32({2}, {0, 0})}, 18), StatusCode::kInvalidModel,
               {"num_groups is required"});
  ir::Node half_stash = group_norm_node(2, 0);
  set_int(half_stash, "stash_type", 10);
  expect_error(run_direct(half_stash, {x, f32({4}, {1, 1, 1, 1}), f32({4}, {0, 0, 0, 0})}, 21),
               StatusCode::kUnsupported, {"stash_type 10"});
  // No GroupNormalization before opset 18.
  expect_error(run(group_norm_node(2, 0), {x, f32({2}, {1, 1}), f32({2}, {0, 0})}, 17), StatusCode::kUnsupported, {});
}

// ---- LRN ---------------------------------------------------------------------------------

ir::Node lrn_node(int64_t size, float alpha, float beta, float bias) {
  ir::Node node = make_node("LRN", {"X"});
  set_int(node, "size", size);
  set_float(node, "alpha", alpha);
  set_float(node, "beta", beta);
  set_float(node, "bias", bias);
  return node;
}

TEST(KernelsLrn, OddWindow) {
  // X [1, 3, 1, 1] = {1, 2, 3}, size 3 (window c-1..c+1), alpha 3 (alpha / size = 1), beta 1,
  // bias 1: c0: 1 + (1 + 4) = 6 → 1/6; c1: 1 + 14 = 15 → 2/15; c2: 1 + (4 + 9) = 14 → 3/14.
  auto y = run(lrn_node(3, 3, 1, 1), {f32({1, 3, 1, 1}, {1, 2, 3})}, 13);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 3, 1, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14}, 1e-6f);
}

TEST(KernelsLrn, EvenWindowLeansForward) {
  // size 2: window [c - floor(1/2), c + ceil(1/2)] = [c, c + 1]; alpha 2 (alpha / size = 1),
  // beta 0.5, bias 0, over X [1, 3, 2] with two spatial positions {1, 2, 3} and {-1, 0, 2}:
  //   position 0: 1/√(1 + 4), 2/√(4 + 9), 3/√9 = 0.4472136, 0.5547002, 1;
  //   position 1: -1/√(1 + 0) = -1, 0/√4 = 0, 2/√4 = 1.
  auto y = run(lrn_node(2, 2, 0.5f, 0), {f32({1, 3, 2}, {1, -1, 2, 0, 3, 2})}, 1);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 3, 2}, {0.4472136f, -1, 0.5547002f, 0, 1, 1}, 1e-6f);
}

TEST(KernelsLrn, DefaultAttributes) {
  // alpha 1e-4, beta 0.75, bias 1 and size 1: y = x / (1 + 1e-4 · x²)^0.75:
  // 10 → 10 / 1.01^0.75 = 9.9256503; -3 → -3 / 1.0009^0.75 = -2.9979766.
  ir::Node node = make_node("LRN", {"X"});
  set_int(node, "size", 1);
  auto y = run(node, {f32({1, 2}, {10, -3})}, 13);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 2}, {9.9256503f, -2.9979766f}, 1e-5f);
  // float64: alpha is a float32 attribute, 1e-4 → 9.999999747378752e-05, so
  // 10 / (1 + 100 · 9.999999747378752e-05)^0.75 = 9.925650292102757.
  auto y64 = run(node, {f64({1, 1}, {10})}, 1);
  ASSERT_TRUE(y64.has_value()) << y64.status().to_string();
  EXPECT_NEAR(values<double>(*y64)[0], 9.925650292102757, 1e-12);
}

TEST(KernelsLrn, Errors) {
  expect_error(run_direct(make_node("LRN", {"X"}), {f32({1, 1}, {1})}, 13), StatusCode::kInvalidModel,
               {"LRN", "size is required"});
  expect_error(run_direct(lrn_node(0, 1, 1, 1), {f32({1, 1}, {1})}, 13), StatusCode::kInvalidModel,
               {"size must be > 0, got 0"});
  expect_error(run_direct(lrn_node(3, 1, 1, 1), {f32({3}, {1, 2, 3})}, 13), StatusCode::kInvalidArgument,
               {"'X'", "rank >= 2", "[3]"});
  expect_error(run_direct(lrn_node(3, 1, 1, 1), {i32({1, 1}, {1})}, 13), StatusCode::kUnsupported, {"'X'", "int32"});
  // bfloat16 is LRN-13 only.
  expect_error(run_direct(lrn_node(1, 1, 1, 1), {bf16({1, 1}, {0})}, 12), StatusCode::kUnsupported, {"bfloat16"});
}

}  // namespace kernels_group_norm_test
}  // namespace edgemm
