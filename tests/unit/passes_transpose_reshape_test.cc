// simplify_transpose_reshape: Transpose pairs, Reshape chains, same-shape reshapes, Identity
// and Dropout disappear or merge; graph outputs keep their names; outputs match the original.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"

namespace edgemm {
namespace passes_transpose_reshape_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;

std::string save_transpose_model(const ModelBuilder& b, const std::string& name) {
  return b.save(testing::temp_dir("tr_" + name) / "model.onnx");
}

/// x [2, 3, 4, 5] → Transpose(p1) → Transpose(p2) → Relu → y (Relu keeps y off the pair,
/// unless `pair_is_output`).
std::string transpose_pair_model(const std::string& name, const std::vector<int64_t>& p1,
                                 const std::vector<int64_t>& p2, const std::vector<int64_t>& y_dims,
                                 bool pair_is_output = false, bool share_first = false) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 4, 5}).output("y", kFloat, y_dims);
  testing::set_ints(b.node("Transpose", {"x"}, {"t1"}), "perm", p1);
  testing::set_ints(b.node("Transpose", {"t1"}, {pair_is_output ? "y" : "t2"}), "perm", p2);
  if (!pair_is_output) b.node("Relu", {"t2"}, {"y"});
  if (share_first) {
    std::vector<int64_t> t1_dims(4);
    const int64_t x_dims[4] = {2, 3, 4, 5};
    for (int i = 0; i < 4; ++i) t1_dims[i] = x_dims[p1[i]];
    b.output("t1_copy", kFloat, t1_dims);
    b.node("Neg", {"t1"}, {"t1_copy"});
  }
  return save_transpose_model(b, name);
}

std::vector<std::pair<std::string, Tensor>> x_input() { return {{"x", seeded_f32({2, 3, 4, 5}, 3)}}; }

TEST(TransposeReshape, InverseTransposesDisappear) {
  const std::string path = transpose_pair_model("inverse", {0, 2, 3, 1}, {0, 3, 1, 2}, {2, 3, 4, 5});
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "Transpose"), 0);
  EXPECT_EQ(report.patterns["Transpose pair"], 1);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].inputs[0], "x");
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, OtherTransposesMerge) {
  // x[a,b,c,d] → p1 = [2,0,3,1] gives [c,a,d,b]; p2 = [0,2,1,3] gives [c,d,a,b] = x perm [2,3,0,1].
  const std::string path = transpose_pair_model("merge", {2, 0, 3, 1}, {0, 2, 1, 3}, {4, 5, 2, 3});
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  ASSERT_EQ(count_ops(model.graph, "Transpose"), 1);
  for (const auto& n : model.graph.nodes) {
    if (n.op_type == "Transpose") {
      EXPECT_EQ(*n.attr_ints("perm"), (std::vector<int64_t>{2, 3, 0, 1}));
    }
  }
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, IdentityPairProducingAGraphOutputKeepsTheName) {
  const std::string path = transpose_pair_model("as_output", {0, 2, 1, 3}, {0, 2, 1, 3}, {2, 3, 4, 5}, true);
  ir::Model model = optimized_model(path);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].outputs[0], "y");
  EXPECT_EQ(model.graph.nodes[0].inputs[0], "x");
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, SharedFirstTransposeStays) {
  const std::string path =
      transpose_pair_model("shared", {0, 2, 3, 1}, {0, 3, 1, 2}, {2, 3, 4, 5}, false, /*share_first=*/true);
  ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Transpose"), 1);  // t1 still feeds Neg; the pair is gone
  for (const auto& n : model.graph.nodes) {
    if (n.op_type == "Relu") {
      EXPECT_EQ(n.inputs[0], "x");
    }
  }
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

/// x [2, 3, 4, 5] → first(x) → Reshape(shape) → Relu → y.
std::string reshape_chain_model(const std::string& name, const std::string& first, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& y_dims) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 4, 5}).output("y", kFloat, y_dims);
  if (first == "Reshape") {
    b.initializer_int64s("s1", {3}, {6, 4, 5});
    b.node("Reshape", {"x", "s1"}, {"r1"});
  } else if (first == "Flatten") {
    testing::set_int(b.node("Flatten", {"x"}, {"r1"}), "axis", 2);
  } else {
    testing::set_ints(b.node("Unsqueeze", {"x"}, {"r1"}), "axes", {0});
    b.model.mutable_opset_import(0)->set_version(11);
  }
  b.initializer_int64s("s2", {static_cast<int64_t>(shape.size())}, shape);
  b.node("Reshape", {"r1", "s2"}, {"r2"});
  b.node("Relu", {"r2"}, {"y"});
  return save_transpose_model(b, name);
}

TEST(TransposeReshape, ReshapeOfReshapeReadsTheInput) {
  const std::string path = reshape_chain_model("rr", "Reshape", {2, -1, 10}, {2, 6, 10});
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "Reshape"), 1);
  EXPECT_EQ(report.patterns["Reshape pair"], 1);
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, ReshapeOfFlattenAndOfUnsqueeze) {
  for (const std::string first : {"Flatten", "Unsqueeze"}) {
    const std::string path = reshape_chain_model("r_" + first, first, {4, 30}, {4, 30});
    ir::Model model = optimized_model(path);
    EXPECT_EQ(count_ops(model.graph, first), 0) << first;
    EXPECT_EQ(count_ops(model.graph, "Reshape"), 1) << first;
    EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0) << first;
  }
}

TEST(TransposeReshape, NotWhenTheSecondShapeCopiesAnExtent) {
  // 0 copies r1's axis 0 (6), which is not x's axis 0 (2).
  const std::string path = reshape_chain_model("zero", "Reshape", {0, 20}, {6, 20});
  ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Reshape"), 2);
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, ReshapeToTheSameShapeDisappears) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 4, 5}).output("y", kFloat, {2, 3, 4, 5});
  b.initializer_int64s("s", {4}, {2, 3, -1, 5});
  b.node("Reshape", {"x", "s"}, {"r"});
  b.node("Squeeze", {"r"}, {"q"});  // no axes: drops size-1 axes, of which x has none
  b.node("Relu", {"q"}, {"y"});
  const std::string path = save_transpose_model(b, "same_shape");
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].inputs[0], "x");
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, IdentityAndDropoutDisappearButNotBeforeAnOutput) {
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 4, 5}).output("y", kFloat, {2, 3, 4, 5});
  b.node("Identity", {"x"}, {"i1"});
  b.node("Dropout", {"i1"}, {"d1"});
  b.node("Relu", {"d1"}, {"r"});
  b.node("Identity", {"r"}, {"y"});
  const std::string path = save_transpose_model(b, "identity");
  passes::PassReport report;
  ir::Model model = optimized_model(path, &report);
  EXPECT_EQ(count_ops(model.graph, "Dropout"), 0);
  EXPECT_EQ(count_ops(model.graph, "Identity"), 1);  // the one producing graph output y
  EXPECT_EQ(report.patterns["Identity"], 1);
  EXPECT_EQ(report.patterns["Dropout"], 1);
  EXPECT_EQ(optimized_vs_original(path, x_input()), 0.0);
}

TEST(TransposeReshape, DropoutWithAUsedMaskStays) {
  ModelBuilder b(11);
  b.input("x", kFloat, {2, 3, 4, 5})
      .output("y", kFloat, {2, 3, 4, 5})
      .output("mask", onnx::TensorProto::BOOL, {2, 3, 4, 5});
  b.node("Dropout", {"x"}, {"d", "mask"});
  b.node("Relu", {"d"}, {"y"});
  ir::Model model = optimized_model(save_transpose_model(b, "mask"));
  EXPECT_EQ(count_ops(model.graph, "Dropout"), 1);
}

}  // namespace passes_transpose_reshape_test
}  // namespace edgemm
