// fuse_matmul_add: MatMul by constant weights followed by a constant bias Add becomes Gemm
// (2-D A) or com.edgemm FusedMatMul; outputs match the unfused graph on seeded inputs.
#include <gtest/gtest.h>

#include "kernels/cpu/onednn.h"
#include "model_builder.h"
#include "pass_test_util.h"
#include "passes/graph_view.h"

namespace edgemm {
namespace passes_matmul_add_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;
using testutil::seeded_values;
constexpr int64_t kK = 16, kN = 12;

/// y = MatMul(a, w [K, N]) + bias (bias dims as given; `bias_first` puts it as Add's input 0).
/// With `weights_input` w is a graph input instead of a constant; with `expose_product` the
/// MatMul result is also a graph output.
struct MatMulAddSpec {
  std::vector<int64_t> a_dims = {2, 5, kK};
  std::vector<int64_t> bias_dims = {kN};
  bool bias_first = false;
  bool weights_input = false;
  bool expose_product = false;
};

std::string matmul_add_model(const std::string& name, const MatMulAddSpec& spec) {
  ModelBuilder b;
  std::vector<int64_t> y_dims = spec.a_dims;
  y_dims.back() = kN;
  while (y_dims.size() < spec.bias_dims.size()) y_dims.insert(y_dims.begin(), 1);
  b.input("a", kFloat, spec.a_dims);
  if (spec.weights_input) {
    b.input("w", kFloat, {kK, kN});
  } else {
    b.initializer_floats("w", {kK, kN}, seeded_values(kK * kN, 11));
  }
  b.output("y", kFloat, y_dims);
  if (spec.expose_product) b.output("p", kFloat, y_dims);
  int64_t bias_count = 1;
  for (int64_t d : spec.bias_dims) bias_count *= d;
  b.initializer_floats("bias", spec.bias_dims, seeded_values(bias_count, 12));
  b.node("MatMul", {"a", "w"}, {"p"});
  b.node("Add", spec.bias_first ? std::vector<std::string>{"bias", "p"} : std::vector<std::string>{"p", "bias"}, {"y"});
  return b.save(testing::temp_dir("mma_" + name) / "model.onnx");
}

std::vector<std::pair<std::string, Tensor>> inputs_for(const MatMulAddSpec& spec) {
  std::vector<std::pair<std::string, Tensor>> in = {{"a", seeded_f32(spec.a_dims, 5)}};
  if (spec.weights_input) in.emplace_back("w", seeded_f32({kK, kN}, 6));
  return in;
}

/// Asserts the rewrite into `op` (domain `domain`) under `pattern` and the outputs.
void expect_rewritten(const MatMulAddSpec& spec, const std::string& name, const std::string& op,
                      const std::string& domain, const std::string& pattern) {
  const std::string path = matmul_add_model(name, spec);
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, op, domain), 1);
  EXPECT_EQ(count_ops(model.graph, "MatMul"), 0);
  EXPECT_EQ(count_ops(model.graph, "Add"), 0);
  EXPECT_EQ(report.patterns[pattern], 1);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].outputs[0], "y");
  EXPECT_LE(optimized_vs_original(path, inputs_for(spec)), 1e-5);
}

void expect_kept(const MatMulAddSpec& spec, const std::string& name) {
  const std::string path = matmul_add_model(name, spec);
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "MatMul"), 1);
  EXPECT_EQ(count_ops(model.graph, "Add"), 1);
  EXPECT_TRUE(report.patterns.empty());
  EXPECT_LE(optimized_vs_original(path, inputs_for(spec)), 1e-5);
}

TEST(MatMulAddFusion, ThreeDimensionalInputBecomesFusedMatMul) {
  expect_rewritten({}, "3d", "FusedMatMul", passes::kEdgemmDomain, "MatMul+Add→FusedMatMul");
}

TEST(MatMulAddFusion, BiasFirstAndRankTwoBias) {
  MatMulAddSpec spec;
  spec.bias_first = true;
  spec.bias_dims = {1, kN};
  expect_rewritten(spec, "bias_first", "FusedMatMul", passes::kEdgemmDomain, "MatMul+Add→FusedMatMul");
}

TEST(MatMulAddFusion, ScalarBiasIsExpanded) {
  MatMulAddSpec spec;
  spec.a_dims = {3, 2, 4, kK};
  spec.bias_dims = {1};
  expect_rewritten(spec, "scalar_bias", "FusedMatMul", passes::kEdgemmDomain, "MatMul+Add→FusedMatMul");
}

TEST(MatMulAddFusion, TwoDimensionalInputBecomesGemm) {
  MatMulAddSpec spec;
  spec.a_dims = {7, kK};
  expect_rewritten(spec, "2d", "Gemm", "", "MatMul+Add→Gemm");
}

TEST(MatMulAddFusion, ReferenceKernelMatchesToo) {
  kernels::onednn::ScopedEnabled off(false);
  expect_rewritten({}, "reference", "FusedMatMul", passes::kEdgemmDomain, "MatMul+Add→FusedMatMul");
}

TEST(MatMulAddFusion, NotWhenTheBiasVariesAlongRows) {
  MatMulAddSpec spec;
  spec.bias_dims = {5, kN};
  expect_kept(spec, "row_bias");
}

TEST(MatMulAddFusion, NotWithNonConstantWeights) {
  MatMulAddSpec spec;
  spec.weights_input = true;
  expect_kept(spec, "weights_input");
}

TEST(MatMulAddFusion, NotWhenTheProductIsAlsoAnOutput) {
  MatMulAddSpec spec;
  spec.expose_product = true;
  expect_kept(spec, "exposed");
}

TEST(MatMulAddFusion, NotWhenTheBiasWouldRaiseTheRank) {
  MatMulAddSpec spec;
  spec.a_dims = {7, kK};
  spec.bias_dims = {1, 1, kN};
  expect_kept(spec, "rank_raise");
}

TEST(MatMulEpilogue, SwishAndScalarArithmeticAfterFusedMatMulBecomeItsEpilogue) {
  // y = swish(MatMul(a, w) + bias) · 0.5 (Swish written x·Sigmoid(1.7x), as PP-OCRv4 rec's MLP):
  // one FusedMatMul with steps swish(1.7), linear(0.5, 0). A residual Add stays outside.
  ModelBuilder b;
  b.input("a", kFloat, {2, 5, kK}).input("r", kFloat, {2, 5, kN}).output("y", kFloat, {2, 5, kN});
  b.initializer_floats("w", {kK, kN}, seeded_values(kK * kN, 11));
  b.initializer_floats("bias", {kN}, seeded_values(kN, 12));
  b.initializer_floats("beta", {}, {1.7f});
  b.initializer_floats("half", {}, {0.5f});
  b.node("MatMul", {"a", "w"}, {"p"});
  b.node("Add", {"p", "bias"}, {"q"});
  b.node("Mul", {"q", "beta"}, {"qb"});
  b.node("Sigmoid", {"qb"}, {"g"});
  b.node("Mul", {"q", "g"}, {"s"});
  b.node("Mul", {"s", "half"}, {"h"});
  b.node("Add", {"h", "r"}, {"y"});
  const std::string path = b.save(testing::temp_dir("mma_epilogue") / "model.onnx");
  passes::PassReport report;
  const ir::Model model = optimized_model(path, &report);
  ASSERT_EQ(count_ops(model.graph, "FusedMatMul", passes::kEdgemmDomain), 1);
  const ir::Node* fused = nullptr;
  for (const auto& n : model.graph.nodes) fused = n.op_type == "FusedMatMul" ? &n : fused;
  EXPECT_EQ(fused->attributes.at("steps").strings, (std::vector<std::string>{"swish", "linear"}));
  EXPECT_EQ(report.patterns["FusedMatMul epilogue"], 1);
  EXPECT_EQ(model.graph.nodes.size(), 2u);  // the residual Add is not an epilogue of a MatMul
  const std::vector<std::pair<std::string, Tensor>> inputs = {{"a", seeded_f32({2, 5, kK}, 5)},
                                                              {"r", seeded_f32({2, 5, kN}, 6)}};
  EXPECT_LE(optimized_vs_original(path, inputs), 1e-5);
  EXPECT_LE(optimized_vs_original(path, inputs, 2), 1e-5);
  kernels::onednn::ScopedEnabled off(false);  // the reference path runs the steps in loops
  EXPECT_LE(optimized_vs_original(path, inputs), 1e-5);
}

}  // namespace passes_matmul_add_test
}  // namespace edgemm
