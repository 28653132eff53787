// fuse_gelu: Erf-based GELU in its exported forms becomes one com.edgemm ElementwiseChain with
// a "gelu" step, the tanh form (x³ as two Muls, as SigLIP's export writes it, or as Pow) one with
// a "gelu_tanh" step; outputs match the unfused graph and the formula, -Inf included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "edgemm/inferencer.h"
#include "ir/elementwise_steps.h"
#include "model_builder.h"
#include "pass_test_util.h"
#include "passes/graph_view.h"

namespace edgemm {
namespace passes_gelu_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;

/// Where the 0.5 goes in the product x · (1 + erf) · 0.5.
enum class Half { kAfter, kOnErfTerm, kOnX };

struct GeluSpec {
  bool divide = true;  // Div by √2, else Mul by 1/√2
  Half half = Half::kAfter;
  bool swap_operands = false;  // constants and x as the first Mul/Add input
  float sqrt2 = 1.4142135381698608f;
  bool expose_erf = false;  // erf(x/√2) is also a graph output
};

std::string gelu_model(const std::string& name, const GeluSpec& spec) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 16}).output("y", kFloat, {2, 3, 16});
  if (spec.expose_erf) b.output("erf", kFloat, {2, 3, 16});
  b.initializer_floats("one", {}, {1.0f});
  b.initializer_floats("half", {}, {0.5f});
  auto pair = [&](const std::string& a, const std::string& c) {
    return spec.swap_operands ? std::vector<std::string>{c, a} : std::vector<std::string>{a, c};
  };
  if (spec.divide) {
    b.initializer_floats("c", {}, {spec.sqrt2});
    b.node("Div", {"x", "c"}, {"e"});
  } else {
    b.initializer_floats("c", {}, {1.0f / spec.sqrt2});
    b.node("Mul", pair("x", "c"), {"e"});
  }
  b.node("Erf", {"e"}, {"erf"});
  b.node("Add", pair("erf", "one"), {"p"});
  switch (spec.half) {
    case Half::kAfter:
      b.node("Mul", pair("p", "x"), {"xp"});
      b.node("Mul", pair("xp", "half"), {"y"});
      break;
    case Half::kOnErfTerm:
      b.node("Mul", pair("p", "half"), {"ph"});
      b.node("Mul", pair("ph", "x"), {"y"});
      break;
    case Half::kOnX:
      b.node("Mul", pair("x", "half"), {"xh"});
      b.node("Mul", pair("p", "xh"), {"y"});
      break;
  }
  return b.save(testing::temp_dir("gelu_" + name) / "model.onnx");
}

std::vector<std::pair<std::string, Tensor>> gelu_inputs() { return {{"x", seeded_f32({2, 3, 16}, 9, -4.0f, 4.0f)}}; }

/// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), x³ as Pow(x, 3) or Mul(x, Mul(x, x)).
std::string gelu_tanh_model(const std::string& name, bool pow) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 16}).output("y", kFloat, {2, 3, 16});
  b.initializer_floats("one", {}, {1.0f});
  b.initializer_floats("half", {}, {0.5f});
  b.initializer_floats("three", {}, {3.0f});
  b.initializer_floats("c", {}, {0.044715f});
  b.initializer_floats("s", {}, {0.7978845834732056f});
  if (pow) {
    b.node("Pow", {"x", "three"}, {"x3"});
  } else {
    b.node("Mul", {"x", "x"}, {"x2"});
    b.node("Mul", {"x", "x2"}, {"x3"});
  }
  b.node("Mul", {"c", "x3"}, {"cx3"});
  b.node("Add", {"x", "cx3"}, {"inner"});
  b.node("Mul", {"s", "inner"}, {"arg"});
  b.node("Tanh", {"arg"}, {"t"});
  b.node("Add", {"one", "t"}, {"p"});
  b.node("Mul", {"x", "p"}, {"xp"});
  b.node("Mul", {"half", "xp"}, {"y"});
  return b.save(testing::temp_dir("gelu_tanh_" + name) / "model.onnx");
}

void expect_gelu_fused(const std::string& path, ir::StepKind kind = ir::StepKind::kGelu) {
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  const ir::Node& chain = model.graph.nodes[0];
  EXPECT_EQ(chain.op_type, "ElementwiseChain");
  EXPECT_EQ(chain.domain, passes::kEdgemmDomain);
  EXPECT_EQ(chain.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(chain.outputs, std::vector<std::string>{"y"});
  auto steps = ir::read_steps(chain);
  ASSERT_TRUE(steps.has_value()) << steps.status().message();
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].kind, kind);
  EXPECT_EQ(report.patterns["Gelu"], 1);
  EXPECT_LE(optimized_vs_original(path, gelu_inputs()), 1e-5);
}

TEST(GeluFusion, TanhFormWithMulsOrPow) {
  expect_gelu_fused(gelu_tanh_model("muls", false), ir::StepKind::kGeluTanh);
  expect_gelu_fused(gelu_tanh_model("pow", true), ir::StepKind::kGeluTanh);
}

TEST(GeluFusion, TanhFormKeepsTheUnfusedNonFiniteValues) {
  // -Inf: 0.5 · -Inf · (1 + tanh(-Inf)) = -Inf · 0 = NaN; +Inf stays +Inf; NaN stays NaN.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values(2 * 3 * 16, 0.5f);
  values[0] = -inf;
  values[1] = inf;
  values[2] = std::nanf("");
  values[3] = -30.0f;
  InferencerConfig config;
  config.model_path = gelu_tanh_model("nonfinite", false);
  auto inf_run = Inferencer::create(config);
  ASSERT_TRUE(inf_run.has_value()) << inf_run.status().to_string();
  auto out = (*inf_run)->run({{"x", Tensor::from_floats({2, 3, 16}, values)}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], inf);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_NEAR(y[3], 0.0f, 1e-30);
}

TEST(GeluFusion, DivAndHalfAfter) { expect_gelu_fused(gelu_model("div_after", {})); }

TEST(GeluFusion, MulBySqrtHalfWithSwappedOperands) {
  GeluSpec spec;
  spec.divide = false;
  spec.swap_operands = true;
  expect_gelu_fused(gelu_model("mul_swapped", spec));
}

TEST(GeluFusion, HalfOnTheErfTerm) {
  GeluSpec spec;
  spec.half = Half::kOnErfTerm;
  expect_gelu_fused(gelu_model("half_erf", spec));
}

TEST(GeluFusion, HalfOnX) {
  GeluSpec spec;
  spec.half = Half::kOnX;
  spec.divide = false;
  expect_gelu_fused(gelu_model("half_x", spec));
}

TEST(GeluFusion, FusedMatchesTheFormula) {
  InferencerConfig config;
  config.model_path = gelu_model("formula", {});
  config.threads = 1;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().message();
  const auto inputs = gelu_inputs();
  auto out = (*inferencer)->run(inputs);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const Tensor& x = inputs[0].second;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const double v = x.data<float>()[i];
    EXPECT_NEAR((*out)[0].data<float>()[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-5) << i;
  }
}

TEST(GeluFusion, NotWithAnotherScale) {
  GeluSpec spec;
  spec.sqrt2 = 1.7f;
  const std::string path = gelu_model("other_scale", spec);
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "Erf"), 1);
  EXPECT_EQ(report.patterns.count("Gelu"), 0u);
  EXPECT_LE(optimized_vs_original(path, gelu_inputs()), 1e-5);
}

TEST(GeluFusion, NotWhenErfIsAlsoAnOutput) {
  GeluSpec spec;
  spec.expose_erf = true;
  const std::string path = gelu_model("exposed", spec);
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "Erf"), 1);
  EXPECT_EQ(report.patterns.count("Gelu"), 0u);  // the ops after Erf may still form a chain
  EXPECT_LE(optimized_vs_original(path, gelu_inputs()), 1e-5);
}

}  // namespace passes_gelu_test
}  // namespace edgemm
