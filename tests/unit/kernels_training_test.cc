// The ai.onnx.preview.training optimizers Adagrad, Adam and Momentum
// (src/kernels/cpu/training_optimizers.cc) run through runtime::run_node, errors through the
// kernel directly (nntest::run_direct) so that messages name the node. Expected values are
// worked out by hand in the comments next to each case.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_training_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::run_direct;
using nntest::set_float;
using nntest::set_string;

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

ir::Node optimizer_node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  ir::Node node = nntest::make_node(op, std::move(inputs), std::move(outputs));
  node.domain = kTrainingDomain;
  return node;
}

/// Runs `node` (domain opset 1) and returns all its outputs.
std::vector<Tensor> optimizer_run(const ir::Node& node, const std::vector<Tensor>& inputs) {
  auto out = runtime::run_node(node, inputs, 1);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : std::vector<Tensor>(node.outputs.size());
}

Tensor scalar_f32(float v) { return f32({}, {v}); }
Tensor scalar_i64(int64_t v) { return i64({}, {v}); }

TEST(TrainingOptimizers, AdagradDecaysTheRate) {
  // r = 0.1 / (1 + 1 · 0.5) = 1/15; H' = H + G² = [9, 25];
  // X' = X − r · G / √H' = [1 − (1/15)·3/3, 2 − (1/15)·4/5] = [0.933333, 1.946667].
  ir::Node node = optimizer_node("Adagrad", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"});
  set_float(node, "decay_factor", 0.5f);
  set_float(node, "epsilon", 0.0f);
  const auto out =
      optimizer_run(node, {scalar_f32(0.1f), scalar_i64(1), f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {0, 9})});
  expect_near(out[0], Shape{2}, {0.933333f, 1.946667f});
  expect_near(out[1], Shape{2}, {9, 25});
}

TEST(TrainingOptimizers, AdagradRegularizesTheGradient) {
  // norm_coefficient 0.5: G' = 0.5·2 + 1 = 2; H' = 0 + 4; X' = 2 − 0.1·2/(2 + 0) = 1.9.
  ir::Node node = optimizer_node("Adagrad", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"});
  set_float(node, "norm_coefficient", 0.5f);
  set_float(node, "epsilon", 0.0f);
  const auto out = optimizer_run(node, {scalar_f32(0.1f), scalar_i64(0), f32({1}, {2}), f32({1}, {1}), f32({1}, {0})});
  expect_near(out[0], Shape{1}, {1.9f});
  expect_near(out[1], Shape{1}, {4});
}

TEST(TrainingOptimizers, AdamTwoTensorsWithBiasCorrection) {
  // alpha 0.5, beta 0.75, T = 2: r = 0.1 · √(1 − 0.75²) / (1 − 0.5²) = 0.0881917.
  // Tensor 1: X 1, G 2, V 0, H 0 → V' = 0.5·2 = 1, H' = 0.25·4 = 1, X' = 1 − r = 0.911808.
  // Tensor 2: X [2, 3], G [0, −4], V [1, 1], H [4, 0] → V' = [0.5, −1.5], H' = [3, 4],
  //   X' = [2 − r·0.5/√3, 3 + r·1.5/2] = [1.974541, 3.066144].
  ir::Node node = optimizer_node("Adam", {"R", "T", "X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2"},
                                 {"X1_new", "X2_new", "V1_new", "V2_new", "H1_new", "H2_new"});
  set_float(node, "alpha", 0.5f);
  set_float(node, "beta", 0.75f);
  set_float(node, "epsilon", 0.0f);
  const auto out =
      optimizer_run(node, {scalar_f32(0.1f), scalar_i64(2), f32({1}, {1}), f32({2}, {2, 3}), f32({1}, {2}),
                           f32({2}, {0, -4}), f32({1}, {0}), f32({2}, {1, 1}), f32({1}, {0}), f32({2}, {4, 0})});
  ASSERT_EQ(out.size(), 6u);
  expect_near(out[0], Shape{1}, {0.911808f});
  expect_near(out[1], Shape{2}, {1.974541f, 3.066144f});
  expect_near(out[2], Shape{1}, {1});
  expect_near(out[3], Shape{2}, {0.5f, -1.5f});
  expect_near(out[4], Shape{1}, {1});
  expect_near(out[5], Shape{2}, {3, 4});
}

TEST(TrainingOptimizers, AdamPostRegularizationAndNoCorrectionAtZero) {
  // T = 0: r = R = 0.1. X 1, G 2, V 0, H 0 (alpha 0.5, beta 0.75): V' = 1, H' = 1,
  // X' = 1 − 0.1 = 0.9, then (1 − 0.1) · 0.9 = 0.81 with norm_coefficient_post 0.1.
  ir::Node node = optimizer_node("Adam", {"R", "T", "X", "G", "V", "H"}, {"X_new", "V_new", "H_new"});
  set_float(node, "alpha", 0.5f);
  set_float(node, "beta", 0.75f);
  set_float(node, "epsilon", 0.0f);
  set_float(node, "norm_coefficient_post", 0.1f);
  const auto out = optimizer_run(
      node, {scalar_f32(0.1f), scalar_i64(0), f32({1}, {1}), f32({1}, {2}), f32({1}, {0}), f32({1}, {0})});
  expect_near(out[0], Shape{1}, {0.81f});
}

ir::Node momentum_node(const std::string& mode, float norm = 0.0f) {
  ir::Node node = optimizer_node("Momentum", {"R", "T", "X", "G", "V"}, {"X_new", "V_new"});
  set_float(node, "alpha", 0.9f);
  set_float(node, "beta", 0.5f);
  set_float(node, "norm_coefficient", norm);
  set_string(node, "mode", mode);
  return node;
}

TEST(TrainingOptimizers, MomentumStandardAndNesterov) {
  // R 0.1, alpha 0.9, beta 0.5, X 1, G 2, V 1.
  const std::vector<Tensor> at0 = {scalar_f32(0.1f), scalar_i64(0), f32({1}, {1}), f32({1}, {2}), f32({1}, {1})};
  std::vector<Tensor> at3 = at0;
  at3[1] = scalar_i64(3);
  // T = 0 (beta taken as 1): V' = 0.9 + 2 = 2.9, X' = 1 − 0.29 = 0.71.
  auto out = optimizer_run(momentum_node("standard"), at0);
  expect_near(out[0], Shape{1}, {0.71f});
  expect_near(out[1], Shape{1}, {2.9f});
  // T = 3: V' = 0.9 + 0.5·2 = 1.9, X' = 1 − 0.19 = 0.81.
  out = optimizer_run(momentum_node("standard"), at3);
  expect_near(out[0], Shape{1}, {0.81f});
  expect_near(out[1], Shape{1}, {1.9f});
  // Nesterov, T = 3: V' = 1.9, X' = 1 − 0.1·(2 + 0.9·1.9) = 0.629.
  out = optimizer_run(momentum_node("nesterov"), at3);
  expect_near(out[0], Shape{1}, {0.629f});
  expect_near(out[1], Shape{1}, {1.9f});
  // norm_coefficient 0.5, T = 3: G' = 0.5 + 2 = 2.5, V' = 0.9 + 1.25 = 2.15, X' = 0.785.
  out = optimizer_run(momentum_node("standard", 0.5f), at3);
  expect_near(out[0], Shape{1}, {0.785f});
  expect_near(out[1], Shape{1}, {2.15f});
}

TEST(TrainingOptimizers, MomentumFloat64) {
  // As the T = 3 standard case above, in float64 with a float64 R (alpha and beta are float32
  // attributes, 0.9f and 0.5f: within 1e-7 of 0.81 and 1.9).
  const auto out = optimizer_run(momentum_node("standard"),
                                 {f64({}, {0.1}), scalar_i64(3), f64({2}, {1, 1}), f64({2}, {2, 2}), f64({2}, {1, 1})});
  ASSERT_EQ(out[0].dtype(), DataType::kFloat64);
  for (double v : values<double>(out[0])) EXPECT_NEAR(v, 0.81, 1e-7);
  for (double v : values<double>(out[1])) EXPECT_NEAR(v, 1.9, 1e-7);
}

TEST(TrainingOptimizers, BadNodesAndInputsAreErrors) {
  const std::vector<Tensor> ok = {scalar_f32(0.1f), scalar_i64(0), f32({2}, {1, 2}), f32({2}, {1, 2}),
                                  f32({2}, {1, 2})};
  expect_error(run_direct(momentum_node("heavy_ball"), ok, 1), StatusCode::kInvalidModel,
               {"Momentum", "mode", "heavy_ball"});
  ir::Node no_alpha = momentum_node("standard");
  no_alpha.attributes.erase("alpha");
  expect_error(run_direct(no_alpha, ok, 1), StatusCode::kInvalidModel, {"'alpha' is required"});
  // Adam needs 2 + 4n inputs and 3n outputs.
  const ir::Node adam5 = optimizer_node("Adam", {"R", "T", "X", "G", "V"}, {"X_new", "V_new"});
  expect_error(run_direct(adam5, ok, 1), StatusCode::kInvalidModel, {"Adam", "5 inputs"});
  const ir::Node adagrad1 = optimizer_node("Adagrad", {"R", "T", "X", "G", "H"}, {"X_new"});
  expect_error(run_direct(adagrad1, ok, 1), StatusCode::kInvalidModel, {"1 outputs"});

  const ir::Node adagrad = optimizer_node("Adagrad", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"});
  std::vector<Tensor> bad = ok;
  bad[3] = f32({3}, {1, 2, 3});
  expect_error(run_direct(adagrad, bad, 1), StatusCode::kInvalidArgument, {"'G'", "gradient", "[2]", "[3]"});
  bad = ok;
  bad[4] = f64({2}, {1, 2});
  expect_error(run_direct(adagrad, bad, 1), StatusCode::kInvalidArgument, {"'H'", "accumulated squared gradient"});
  bad = ok;
  bad[1] = scalar_i64(-1);
  expect_error(run_direct(adagrad, bad, 1), StatusCode::kInvalidArgument, {"'T'", "-1"});
  bad = ok;
  bad[0] = f32({2}, {0.1f, 0.2f});
  expect_error(run_direct(adagrad, bad, 1), StatusCode::kInvalidArgument, {"'R'", "one element"});
  bad = ok;
  bad[2] = i32({2}, {1, 2});
  const auto r = run_direct(adagrad, bad, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("int32"), std::string::npos) << r.status().to_string();
}

}  // namespace kernels_training_test
}  // namespace edgemm
