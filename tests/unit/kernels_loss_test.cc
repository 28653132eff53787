// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (src/kernels/cpu/loss.cc) run through
// runtime::run_node. Expected values are computed by hand in the comments next to each case
// (the spec's examples among them), never from an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_loss_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers

/// A loss node named "my_<op>" with `inputs` inputs and `outputs` outputs.
ir::Node loss_node(const std::string& op, const std::string& reduction, int inputs, int outputs = 1) {
  ir::Node node;
  node.op_type = op;
  node.name = "my_" + op;
  for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
  for (int i = 0; i < outputs; ++i) node.outputs.push_back("y" + std::to_string(i));
  nntest::set_string(node, "reduction", reduction);
  return node;
}
void set_ignore_index(ir::Node& n, int64_t v) { nntest::set_int(n, "ignore_index", v); }

std::vector<Tensor> run_all(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 13,
                            int threads = 1) {
  auto out = runtime::run_node(node, inputs, opset, threads);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : std::vector<Tensor>(node.outputs.size());
}
Status run_error(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 13) {
  auto out = runtime::run_node(node, inputs, opset, 1);
  EXPECT_FALSE(out.has_value());
  return out.has_value() ? Status::ok() : out.status();
}

void expect_f32(const Tensor& got, const Shape& shape, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(shape));
  ASSERT_EQ(got.dtype(), DataType::kFloat32);
  const auto v = values<float>(got);
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << "element " << i;
}

// The spec's NegativeLogLikelihoodLoss examples: N, C, d1 = 2, 3, 2,
//   input  = [[[1, 2], [2, 2], [3, 2]],
//             [[0, 1], [2, 2], [1, 2]]]
//   target = [[2, 1], [0, 2]]
// picks input[0][2][0] = 3, input[0][1][1] = 2, input[1][0][0] = 0, input[1][2][1] = 2.
Tensor spec_input() { return f32({2, 3, 2}, {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2}); }
Tensor spec_target() { return i64({2, 2}, {2, 1, 0, 2}); }
Tensor spec_weight() { return f32({3}, {0.2f, 0.3f, 0.1f}); }

TEST(LossTest, NllSpecExampleNone) {
  // loss = -picked = [[-3, -2], [-0, -2]].
  auto y = run_all(loss_node("NegativeLogLikelihoodLoss", "none", 2), {spec_input(), spec_target()});
  expect_f32(y[0], {2, 2}, {-3, -2, 0, -2});
}

TEST(LossTest, NllSpecExampleWeightedSumAndMean) {
  // Weights of the picked classes: w[2], w[1], w[0], w[2] = 0.1, 0.3, 0.2, 0.1 (sum 0.7).
  // sum = -(3·0.1 + 2·0.3 + 0·0.2 + 2·0.1) = -1.1; mean = -1.1 / 0.7 = -1.5714286.
  auto sum = run_all(loss_node("NegativeLogLikelihoodLoss", "sum", 3), {spec_input(), spec_target(), spec_weight()});
  expect_f32(sum[0], {}, {-1.1f});
  auto mean = run_all(loss_node("NegativeLogLikelihoodLoss", "mean", 3), {spec_input(), spec_target(), spec_weight()});
  expect_f32(mean[0], {}, {-1.1f / 0.7f});
  // Without weights, mean = -(3 + 2 + 0 + 2) / 4 = -1.75.
  auto plain = run_all(loss_node("NegativeLogLikelihoodLoss", "mean", 2), {spec_input(), spec_target()});
  expect_f32(plain[0], {}, {-1.75f});
}

TEST(LossTest, NllTwoByThreeInt32LabelsOpset12) {
  // input = [[-1, -2, -3], [-0.5, -1.5, -2.5]], target = [2, 0] (int32):
  // none = [3, 0.5]; sum = 3.5; mean = 1.75.
  const Tensor x = f32({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f});
  const Tensor t = i32({2}, {2, 0});
  expect_f32(run_all(loss_node("NegativeLogLikelihoodLoss", "none", 2), {x, t}, 12)[0], {2}, {3, 0.5f});
  expect_f32(run_all(loss_node("NegativeLogLikelihoodLoss", "sum", 2), {x, t}, 12)[0], {}, {3.5f});
  expect_f32(run_all(loss_node("NegativeLogLikelihoodLoss", "mean", 2), {x, t}, 12)[0], {}, {1.75f});
}

TEST(LossTest, NllIgnoreIndex) {
  // input = [[-1, -2, -3], [-0.5, -1.5, -2.5], [-4, -5, -6]], target = [2, -1, 1], ignore_index = -1,
  // weight = [1, 2, 4]. Row 1 is ignored (loss 0, weight 0; its label -1 is never read).
  // none = [3·4, 0, 5·2] = [12, 0, 10]; sum = 22; mean = 22 / (4 + 2) = 11/3.
  // Without weights: none = [3, 0, 5]; mean = 8 / 2 = 4.
  const Tensor x = f32({3, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f, -4, -5, -6});
  const Tensor t = i64({3}, {2, -1, 1});
  const Tensor w = f32({3}, {1, 2, 4});
  for (const char* reduction : {"none", "sum", "mean"}) {
    ir::Node weighted = loss_node("NegativeLogLikelihoodLoss", reduction, 3);
    ir::Node plain = loss_node("NegativeLogLikelihoodLoss", reduction, 2);
    set_ignore_index(weighted, -1);
    set_ignore_index(plain, -1);
    const Tensor yw = run_all(weighted, {x, t, w})[0];
    const Tensor yp = run_all(plain, {x, t})[0];
    if (std::string(reduction) == "none") {
      expect_f32(yw, {3}, {12, 0, 10});
      expect_f32(yp, {3}, {3, 0, 5});
    } else if (std::string(reduction) == "sum") {
      expect_f32(yw, {}, {22});
      expect_f32(yp, {}, {8});
    } else {
      expect_f32(yw, {}, {22.0f / 6.0f});
      expect_f32(yp, {}, {4});
    }
  }
}

TEST(LossTest, NllIgnoreIndexInsideClassRangeAndAllIgnored) {
  // ignore_index = 0 is a valid class: target [0, 2] ignores row 0, mean = 3 / 1 = 3.
  const Tensor x = f32({2, 3}, {-1, -2, -3, -1, -2, -3});
  ir::Node node = loss_node("NegativeLogLikelihoodLoss", "mean", 2);
  set_ignore_index(node, 0);
  expect_f32(run_all(node, {x, i64({2}, {0, 2})})[0], {}, {3});
  // Every label ignored: the spec's mean is sum / sum of applied weights = 0 / 0 = NaN; sum is 0.
  const Tensor all_ignored = run_all(node, {x, i64({2}, {0, 0})})[0];
  EXPECT_TRUE(std::isnan(values<float>(all_ignored)[0]));
  ir::Node sum = loss_node("NegativeLogLikelihoodLoss", "sum", 2);
  set_ignore_index(sum, 0);
  expect_f32(run_all(sum, {x, i64({2}, {0, 0})})[0], {}, {0});
}

TEST(LossTest, NllBadLabelNamesNodeLabelAndIndex) {
  // C = 3: label 3 at target[1][0] is out of range.
  Status s = run_error(loss_node("NegativeLogLikelihoodLoss", "none", 2), {spec_input(), i64({2, 2}, {2, 1, 3, 0})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const std::string m = s.to_string();
  EXPECT_NE(m.find("NegativeLogLikelihoodLoss 'my_NegativeLogLikelihoodLoss'"), std::string::npos) << m;
  EXPECT_NE(m.find("label 3"), std::string::npos) << m;
  EXPECT_NE(m.find("[1, 0]"), std::string::npos) << m;
  EXPECT_NE(m.find("[0, 3)"), std::string::npos) << m;
  // A negative label that is not ignore_index, with ignore_index set.
  ir::Node node = loss_node("NegativeLogLikelihoodLoss", "mean", 2);
  set_ignore_index(node, -100);
  s = run_error(node, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i32({2}, {1, -1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("label -1 at index [1]"), std::string::npos) << s.to_string();
  EXPECT_NE(s.to_string().find("-100"), std::string::npos) << s.to_string();
  // A huge label never indexes memory.
  s = run_error(loss_node("SoftmaxCrossEntropyLoss", "sum", 2), {f32({1, 3}, {1, 2, 3}), i64({1}, {int64_t{1} << 60})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("SoftmaxCrossEntropyLoss 'my_SoftmaxCrossEntropyLoss'"), std::string::npos);
}

TEST(LossTest, BadShapesAndAttributes) {
  // target shape must be input's without axis 1.
  Status s =
      run_error(loss_node("NegativeLogLikelihoodLoss", "none", 2), {spec_input(), i64({2, 3}, {0, 0, 0, 0, 0, 0})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // weight must have C elements.
  s = run_error(loss_node("NegativeLogLikelihoodLoss", "none", 3), {spec_input(), spec_target(), f32({2}, {1, 1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // rank-1 input.
  s = run_error(loss_node("SoftmaxCrossEntropyLoss", "none", 2), {f32({3}, {1, 2, 3}), i64({}, {0})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Unknown reduction.
  s = run_error(loss_node("SoftmaxCrossEntropyLoss", "max", 2), {f32({1, 3}, {1, 2, 3}), i64({1}, {0})});
  EXPECT_NE(s.to_string().find("reduction"), std::string::npos) << s.to_string();
  // float labels.
  s = run_error(loss_node("SoftmaxCrossEntropyLoss", "none", 2), {f32({1, 3}, {1, 2, 3}), f32({1}, {0})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(LossTest, SoftmaxCrossEntropyTwoByThreeWithLogProb) {
  // scores = [[1, 2, 3], [1, 1, 1]], labels = [2, 0].
  // Row 0: log Σ exp = 3 + log(1 + e^-1 + e^-2) = 3 + 0.4076060 = 3.4076060,
  //        log_prob = [-2.4076060, -1.4076060, -0.4076060], loss = 0.4076060.
  // Row 1: log_prob = -log 3 = -1.0986123 each, loss = 1.0986123.
  // mean = (0.4076060 + 1.0986123) / 2 = 0.7531091; sum = 1.5062183.
  const Tensor x = f32({2, 3}, {1, 2, 3, 1, 1, 1});
  const Tensor t = i64({2}, {2, 0});
  const std::vector<float> log_prob = {-2.4076060f, -1.4076060f, -0.4076060f, -1.0986123f, -1.0986123f, -1.0986123f};
  auto none = run_all(loss_node("SoftmaxCrossEntropyLoss", "none", 2, 2), {x, t});
  expect_f32(none[0], {2}, {0.4076060f, 1.0986123f});
  expect_f32(none[1], {2, 3}, log_prob);
  auto mean = run_all(loss_node("SoftmaxCrossEntropyLoss", "mean", 2), {x, t}, 12);
  ASSERT_EQ(mean.size(), 1u);
  expect_f32(mean[0], {}, {0.7531091f});
  expect_f32(run_all(loss_node("SoftmaxCrossEntropyLoss", "sum", 2), {x, t})[0], {}, {1.5062183f});
  // Weights [1, 1, 3]: losses 0.4076060·3 and 1.0986123·1, mean = 2.3214303 / 4 = 0.5803576.
  expect_f32(run_all(loss_node("SoftmaxCrossEntropyLoss", "mean", 3), {x, t, f32({3}, {1, 1, 3})})[0], {},
             {0.5803576f});
}

TEST(LossTest, SoftmaxCrossEntropyNCdFloat64IgnoreIndex) {
  // scores [N=1, C=2, d=3] as float64: column d holds (s0, s1).
  // d0: (0, 0)        -> log_prob (-log 2, -log 2); label 1 -> loss log 2 = 0.6931472
  // d1: (0, log 3)    -> softmax (1/4, 3/4), log_prob (-log 4, log 0.75); label 0 -> loss log 4 = 1.3862944
  // d2: (5, 7)        -> label 9 = ignore_index: loss 0
  // mean = (0.6931472 + 1.3862944) / 2 = 1.0397208.
  const double l3 = std::log(3.0);
  const Tensor x = f64({1, 2, 3}, {0, 0, 5, 0, l3, 7});
  const Tensor t = i64({1, 3}, {1, 0, 9});
  ir::Node node = loss_node("SoftmaxCrossEntropyLoss", "none", 2, 2);
  set_ignore_index(node, 9);
  auto y = run_all(node, {x, t});
  ASSERT_EQ(y[0].dtype(), DataType::kFloat64);
  const auto loss = values<double>(y[0]);
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_NEAR(loss[0], std::log(2.0), 1e-12);
  EXPECT_NEAR(loss[1], std::log(4.0), 1e-12);
  EXPECT_EQ(loss[2], 0.0);
  const auto lp = values<double>(y[1]);
  ASSERT_EQ(lp.size(), 6u);
  EXPECT_NEAR(lp[1], -std::log(4.0), 1e-12);  // [0, 0, 1]
  EXPECT_NEAR(lp[4], std::log(0.75), 1e-12);  // [0, 1, 1]
  ir::Node mean = loss_node("SoftmaxCrossEntropyLoss", "mean", 2);
  set_ignore_index(mean, 9);
  EXPECT_NEAR(values<double>(run_all(mean, {x, t})[0])[0], (std::log(2.0) + std::log(4.0)) / 2, 1e-12);
}

TEST(LossTest, Float16Scores) {
  // The 2x3 NLL case in float16: input [[-1, -2, -3], [-0.5, -1.5, -2.5]], target [2, 0],
  // weight [1, 1, 0.5]: none = [1.5, 0.5], mean = 2 / 1.5 = 1.3330078 after rounding to half.
  auto h = [](std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float f : v) bits.push_back(float_to_half(f));
    return bits;
  };
  const Tensor x = f16({2, 3}, h({-1, -2, -3, -0.5f, -1.5f, -2.5f}));
  const Tensor w = f16({3}, h({1, 1, 0.5f}));
  const Tensor t = i64({2}, {2, 0});
  auto none = run_all(loss_node("NegativeLogLikelihoodLoss", "none", 3), {x, t, w})[0];
  ASSERT_EQ(none.dtype(), DataType::kFloat16);
  EXPECT_EQ(values<uint16_t>(none), h({1.5f, 0.5f}));
  auto mean = run_all(loss_node("NegativeLogLikelihoodLoss", "mean", 3), {x, t, w})[0];
  EXPECT_NEAR(half_to_float(values<uint16_t>(mean)[0]), 4.0f / 3.0f, 1e-3f);
}

TEST(LossTest, ThreadCountDoesNotChangeResults) {
  // [64, 32, 8, 16] scores: big enough for parallel_for to split the batch.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::uniform_int_distribution<int64_t> label(-1, 31);
  std::vector<float> xv(64 * 32 * 8 * 16);
  for (float& v : xv) v = dist(rng);
  std::vector<int64_t> tv(64 * 8 * 16);
  for (int64_t& v : tv) v = label(rng);
  std::vector<float> wv(32);
  for (float& v : wv) v = dist(rng) + 4.f;
  const Tensor x = f32({64, 32, 8, 16}, xv), t = i64({64, 8, 16}, tv), w = f32({32}, wv);
  for (const char* reduction : {"none", "mean"}) {
    ir::Node node = loss_node("SoftmaxCrossEntropyLoss", reduction, 3, 2);
    set_ignore_index(node, -1);
    auto one = run_all(node, {x, t, w}, 13, 1);
    auto two = run_all(node, {x, t, w}, 13, 2);
    EXPECT_EQ(values<float>(one[0]), values<float>(two[0])) << reduction;
    EXPECT_EQ(values<float>(one[1]), values<float>(two[1])) << reduction;
  }
}

}  // namespace kernels_loss_test
}  // namespace edgemm
