// fuse_layer_norm: the decomposed layer normalization becomes one com.edgemm
// LayerNormalization; the fused graph matches the unfused one on seeded inputs.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "passes/graph_view.h"

namespace edgemm {
namespace passes_layer_norm_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;

/// How the test model writes the normalization of x [2, 3, 8] over its last axis.
struct LayerNormSpec {
  int64_t opset = 17;
  bool square_by_mul = false;             // Mul(d, d) instead of Pow(d, 2)
  std::vector<int64_t> axes = {-1};       // of both ReduceMeans
  std::vector<int64_t> scale_dims = {8};  // {} = no Mul
  bool bias = true;
  bool expose_difference = false;  // x - mean is also a graph output
};

std::string layer_norm_model(const std::string& name, const LayerNormSpec& spec) {
  ModelBuilder b(spec.opset);
  b.input("x", kFloat, {2, 3, 8}).output("y", kFloat, {2, 3, 8});
  if (spec.expose_difference) b.output("d", kFloat, {2, 3, 8});
  auto* mean = b.node("ReduceMean", {"x"}, {"mean"});
  testing::set_ints(mean, "axes", spec.axes);
  b.node("Sub", {"x", "mean"}, {"d"});
  if (spec.square_by_mul) {
    b.node("Mul", {"d", "d"}, {"q"});
  } else {
    b.initializer_floats("two", {}, {2.0f});
    b.node("Pow", {"d", "two"}, {"q"});
  }
  auto* var = b.node("ReduceMean", {"q"}, {"var"});
  testing::set_ints(var, "axes", spec.axes);
  b.initializer_floats("eps", {}, {1e-5f});
  b.node("Add", {"var", "eps"}, {"ve"});
  b.node("Sqrt", {"ve"}, {"s"});
  std::string out = "n";
  b.node("Div", {"d", "s"}, {out});
  int64_t scale_count = 1;
  for (int64_t d : spec.scale_dims) scale_count *= d;
  if (!spec.scale_dims.empty()) {
    std::vector<float> gamma(static_cast<size_t>(scale_count));
    for (size_t i = 0; i < gamma.size(); ++i) gamma[i] = 0.5f + 0.1f * static_cast<float>(i);
    b.initializer_floats("gamma", spec.scale_dims, gamma);
    b.node("Mul", {"gamma", out}, {"scaled"});
    out = "scaled";
  }
  if (spec.bias) {
    b.initializer_floats("beta", {8}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f, 0.7f, -0.8f});
    b.node("Add", {out, "beta"}, {"y"});
  } else {
    b.node("Identity", {out}, {"y"});
  }
  return b.save(testing::temp_dir("ln_" + name) / "model.onnx");
}

/// x [2, 3, 8] away from zero mean, so the normalization does real work.
std::vector<std::pair<std::string, Tensor>> ln_inputs() { return {{"x", seeded_f32({2, 3, 8}, 7, 1.0f, 4.0f)}}; }

void expect_layer_norm_fused(const std::string& path) {
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "LayerNormalization", passes::kEdgemmDomain), 1);
  EXPECT_EQ(count_ops(model.graph, "ReduceMean"), 0);
  EXPECT_EQ(count_ops(model.graph, "Div"), 0);
  EXPECT_EQ(report.patterns["LayerNormalization"], 1);
  EXPECT_EQ(model.opset(passes::kEdgemmDomain), 1);
  EXPECT_LE(optimized_vs_original(path, ln_inputs()), 1e-5);
}

void expect_not_fused(const std::string& path, int reduce_means) {
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "LayerNormalization", passes::kEdgemmDomain), 0);
  EXPECT_EQ(count_ops(model.graph, "ReduceMean"), reduce_means);
  EXPECT_EQ(report.patterns.count("LayerNormalization"), 0u);
  EXPECT_LE(optimized_vs_original(path, ln_inputs()), 1e-5);
}

TEST(LayerNormFusion, PowWithScaleAndBias) {
  const std::string path = layer_norm_model("pow_affine", {});
  expect_layer_norm_fused(path);
  ir::Model model = optimized_model(path);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  const ir::Node& ln = model.graph.nodes[0];
  EXPECT_EQ(ln.inputs.size(), 3u);
  EXPECT_EQ(ln.outputs[0], "y");
  EXPECT_FLOAT_EQ(*ln.attr_float("epsilon", 0), 1e-5f);
  EXPECT_EQ(*ln.attr_int("axis", 0), -1);
}

TEST(LayerNormFusion, MulSquareWithoutAffineAtOpset11) {
  LayerNormSpec spec;
  spec.opset = 11;
  spec.square_by_mul = true;
  spec.scale_dims = {};
  spec.bias = false;
  expect_layer_norm_fused(layer_norm_model("mul_plain", spec));
}

TEST(LayerNormFusion, ScaleOfRankThreeWithoutBias) {
  LayerNormSpec spec;
  spec.scale_dims = {1, 1, 8};
  spec.bias = false;
  expect_layer_norm_fused(layer_norm_model("scale_rank3", spec));
}

TEST(LayerNormFusion, PositiveLastAxis) {
  LayerNormSpec spec;
  spec.axes = {2};
  expect_layer_norm_fused(layer_norm_model("axis2", spec));
}

TEST(LayerNormFusion, NotOverAnotherAxis) {
  LayerNormSpec spec;
  spec.axes = {1};
  spec.scale_dims = {};
  spec.bias = false;
  expect_not_fused(layer_norm_model("axis1", spec), 2);
}

TEST(LayerNormFusion, NotWhenTheDifferenceIsAlsoAnOutput) {
  LayerNormSpec spec;
  spec.expose_difference = true;
  expect_not_fused(layer_norm_model("shared_d", spec), 2);
}

TEST(LayerNormFusion, ScaleAlongAnotherAxisStaysAMul) {
  LayerNormSpec spec;
  spec.scale_dims = {3, 1};  // varies along axis 1: not a LayerNormalization scale
  spec.bias = false;
  const std::string path = layer_norm_model("scale_axis1", spec);
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "LayerNormalization", passes::kEdgemmDomain), 1);
  EXPECT_EQ(count_ops(model.graph, "Mul"), 1);
  EXPECT_LE(optimized_vs_original(path, ln_inputs()), 1e-5);
}

TEST(LayerNormFusion, FusedMatchesTheFormula) {
  const std::string path = layer_norm_model("formula", {});
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().message();
  const auto inputs = ln_inputs();
  auto out = (*inferencer)->run(inputs);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const float* x = inputs[0].second.data<float>();
  const float* y = (*out)[0].data<float>();
  const float beta[8] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f, 0.7f, -0.8f};
  for (int r = 0; r < 6; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < 8; ++i) mean += x[r * 8 + i] / 8.0;
    for (int i = 0; i < 8; ++i) var += (x[r * 8 + i] - mean) * (x[r * 8 + i] - mean) / 8.0;
    for (int i = 0; i < 8; ++i) {
      const double want = (x[r * 8 + i] - mean) / std::sqrt(var + 1e-5) * (0.5 + 0.1 * i) + beta[i];
      EXPECT_NEAR(y[r * 8 + i], want, 1e-5) << "row " << r << " column " << i;
    }
  }
}

}  // namespace passes_layer_norm_test
}  // namespace edgemm
