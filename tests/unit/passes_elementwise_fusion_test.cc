// fuse_elementwise_chains (src/passes/elementwise_fusion.cc) on small ModelBuilder graphs: which
// nodes become one com.edgemm ElementwiseChain and with which steps (written out by hand from
// the graph), and that every optimized model computes what the unfused one does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "model_builder.h"
#include "pass_test_util.h"

namespace edgemm {
namespace passes_elementwise_fusion_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;

using testing::kFloat;

void set_float(onnx::NodeProto* node, const std::string& name, float v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

/// Adds a com.edgemm ElementwiseChain node carrying `steps` (the node attribute encoding).
void chain_node(ModelBuilder& b, const std::vector<std::string>& inputs, const std::string& output,
                const std::vector<ir::Step>& steps) {
  auto* n = b.node("ElementwiseChain", inputs, {output});
  n->set_domain("com.edgemm");
  auto* names = n->add_attribute();
  names->set_name("steps");
  names->set_type(onnx::AttributeProto::STRINGS);
  auto* alphas = n->add_attribute();
  alphas->set_name("alphas");
  alphas->set_type(onnx::AttributeProto::FLOATS);
  auto* betas = n->add_attribute();
  betas->set_name("betas");
  betas->set_type(onnx::AttributeProto::FLOATS);
  auto* operands = n->add_attribute();
  operands->set_name("operands");
  operands->set_type(onnx::AttributeProto::INTS);
  for (const ir::Step& s : steps) {
    names->add_strings(ir::step_name(s.kind));
    alphas->add_floats(s.alpha);
    betas->add_floats(s.beta);
    operands->add_ints(s.operand);
  }
}

/// The only ElementwiseChain node of `graph` (the test fails when there is not exactly one).
const ir::Node* only_chain(const ir::Graph& graph) {
  const ir::Node* found = nullptr;
  int count = 0;
  for (const ir::Node& n : graph.nodes) {
    if (n.op_type == "ElementwiseChain" && n.domain == "com.edgemm") {
      found = &n;
      ++count;
    }
  }
  EXPECT_EQ(count, 1);
  return count == 1 ? found : nullptr;
}

std::string steps_of(const ir::Node& node) {
  auto steps = ir::read_steps(node);
  EXPECT_TRUE(steps.has_value()) << steps.status().message();
  return steps ? ir::describe_steps(*steps) : "";
}

TEST(ElementwiseFusion, ChainBecomesOneNodeWithItsSteps) {
  ModelBuilder b;
  b.input("x", kFloat, {1, 4, 5, 6}).input("t", kFloat, {1, 4, 5, 6}).output("y", kFloat, {1, 4, 5, 6});
  b.initializer_floats("c", {1, 4, 1, 1}, {0.5f, -1.f, 2.f, 1.5f});
  b.initializer_floats("bias", {1, 4, 1, 1}, {0.1f, 0.2f, -0.3f, 0.f});
  b.initializer_floats("two", {}, {2.f});
  b.initializer_floats("one", {1}, {1.f});
  b.initializer_floats("lo", {}, {-0.5f});
  b.initializer_floats("hi", {}, {3.f});
  b.initializer_floats("floor", {}, {0.125f});
  b.node("Mul", {"x", "c"}, {"a"});
  b.node("Add", {"a", "bias"}, {"ab"});
  auto* hs = b.node("HardSigmoid", {"ab"}, {"h"});
  set_float(hs, "alpha", 0.25f);
  set_float(hs, "beta", 0.375f);
  b.node("Mul", {"h", "two"}, {"m"});
  b.node("Sub", {"one", "m"}, {"s"});
  b.node("Div", {"t", "s"}, {"d"});
  b.node("Clip", {"d", "lo", "hi"}, {"cl"});
  b.node("Max", {"cl", "floor"}, {"mx"});
  b.node("Sigmoid", {"mx"}, {"sg"});
  b.node("Div", {"sg", "two"}, {"half"});
  b.node("Relu", {"half"}, {"y"}, "last");
  const std::string path = b.save(testing::temp_dir("ew_fuse_chain") / "m.onnx");

  passes::PassReport report;
  const ir::Model model = optimized_model(path, &report);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  const ir::Node* chain = only_chain(model.graph);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(steps_of(*chain),
            "mul(input 1), add(input 2), hardsigmoid(0.25, 0.375), linear(2, 0), linear(-1, 1), rdiv(input 3), "
            "clip(-0.5, 3), clip(0.125, inf), sigmoid, linear(0.5, 0), relu");
  EXPECT_EQ(chain->inputs, (std::vector<std::string>{"x", "c", "bias", "t"}));
  EXPECT_EQ(chain->outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(chain->name, "last");
  EXPECT_EQ(report.patterns["elementwise chain"], 1);
  EXPECT_EQ(report.patterns["elementwise chain (nodes fused)"], 11);
  EXPECT_LE(optimized_vs_original(
                path, {{"x", seeded_f32({1, 4, 5, 6}, 1, -4.f, 4.f)}, {"t", seeded_f32({1, 4, 5, 6}, 2, -1.f, 1.f)}}),
            1e-5);
}

TEST(ElementwiseFusion, ValueWithTwoUsesEndsAChainAndMayStartTheNext) {
  // a feeds Relu and Add: the Mul producing it stays, the chain starts from a and reads it again.
  ModelBuilder b;
  b.input("x", kFloat, {2, 3, 8}).output("y", kFloat, {2, 3, 8}).output("z", kFloat, {2, 3, 8});
  b.initializer_floats("c", {8}, {1.f, 2.f, 3.f, 4.f, -1.f, -2.f, -3.f, -4.f});
  b.node("Mul", {"x", "c"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Add", {"r", "a"}, {"s"});
  b.node("Neg", {"s"}, {"y"});
  b.node("Tanh", {"a"}, {"z"});
  const std::string path = b.save(testing::temp_dir("ew_fuse_two_uses") / "m.onnx");

  const ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Mul"), 1);
  EXPECT_EQ(count_ops(model.graph, "Tanh"), 1);
  const ir::Node* chain = only_chain(model.graph);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(steps_of(*chain), "relu, add(input 0), neg");
  EXPECT_EQ(chain->inputs, (std::vector<std::string>{"a"}));
  EXPECT_LE(optimized_vs_original(path, {{"x", seeded_f32({2, 3, 8}, 3)}}), 1e-5);
}

TEST(ElementwiseFusion, NodeWithTwoReadersIsNotFusedIntoEither) {
  ModelBuilder b;
  b.input("x", kFloat, {3, 16}).output("y1", kFloat, {3, 16}).output("y2", kFloat, {3, 16});
  b.initializer_floats("c", {}, {0.5f});
  b.node("Add", {"x", "c"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Sigmoid", {"r"}, {"y1"});
  b.node("Tanh", {"a"}, {"y2"});
  const std::string path = b.save(testing::temp_dir("ew_fuse_readers") / "m.onnx");

  const ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Add"), 1);
  EXPECT_EQ(count_ops(model.graph, "Tanh"), 1);
  const ir::Node* chain = only_chain(model.graph);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(steps_of(*chain), "relu, sigmoid");
  EXPECT_EQ(chain->inputs, (std::vector<std::string>{"a"}));
  EXPECT_LE(optimized_vs_original(path, {{"x", seeded_f32({3, 16}, 4)}}), 1e-5);
}

TEST(ElementwiseFusion, GraphOutputIntermediateIsNotFused) {
  ModelBuilder b;
  b.input("x", kFloat, {3, 16}).output("a", kFloat, {3, 16}).output("y", kFloat, {3, 16});
  b.initializer_floats("c", {16}, std::vector<float>(16, 0.25f));
  b.node("Add", {"x", "c"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Exp", {"r"}, {"y"});
  const std::string path = b.save(testing::temp_dir("ew_fuse_output") / "m.onnx");

  const ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Add"), 1);
  const ir::Node* chain = only_chain(model.graph);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(steps_of(*chain), "relu, exp");
  EXPECT_EQ(chain->inputs, (std::vector<std::string>{"a"}));
  EXPECT_LE(optimized_vs_original(path, {{"x", seeded_f32({3, 16}, 5)}}), 1e-5);
}

TEST(ElementwiseFusion, OperandThatWouldEnlargeTheValueStartsANewChain) {
  // [4,1] + [1,5] grows the value: the Relu before it stays; the Add may start a chain.
  ModelBuilder b;
  b.input("x", kFloat, {4, 1}).input("w", kFloat, {1, 5}).output("y", kFloat, {4, 5});
  b.node("Relu", {"x"}, {"a"});
  b.node("Add", {"a", "w"}, {"s"});
  b.node("Sigmoid", {"s"}, {"y"});
  const std::string path = b.save(testing::temp_dir("ew_fuse_grow") / "m.onnx");
  const ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Relu"), 1);
  const ir::Node* chain = only_chain(model.graph);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(steps_of(*chain), "add(input 1), sigmoid");
  EXPECT_EQ(chain->inputs, (std::vector<std::string>{"a", "w"}));
  EXPECT_LE(optimized_vs_original(path, {{"x", seeded_f32({4, 1}, 6)}, {"w", seeded_f32({1, 5}, 7)}}), 1e-5);

  // A one-element constant of higher rank also grows it, so it stays an operand, not a linear step.
  ModelBuilder r;
  r.input("x", kFloat, {4, 5}).output("y", kFloat, {1, 4, 5});
  r.initializer_floats("k", {1, 1, 1}, {2.f});
  r.node("Relu", {"x"}, {"a"});
  r.node("Mul", {"a", "k"}, {"m"});
  r.node("Neg", {"m"}, {"y"});
  const std::string rank_path = r.save(testing::temp_dir("ew_fuse_rank") / "m.onnx");
  const ir::Model ranked = optimized_model(rank_path);
  EXPECT_EQ(count_ops(ranked.graph, "Relu"), 1);
  const ir::Node* rank_chain = only_chain(ranked.graph);
  ASSERT_NE(rank_chain, nullptr);
  EXPECT_EQ(steps_of(*rank_chain), "mul(input 1), neg");
  EXPECT_LE(optimized_vs_original(rank_path, {{"x", seeded_f32({4, 5}, 8)}}), 1e-5);
}

TEST(ElementwiseFusion, ExistingChainNodesAreMergedWithOperandsReindexed) {
  ModelBuilder b;
  b.model.add_opset_import()->set_domain("com.edgemm");
  b.model.mutable_opset_import(1)->set_version(1);
  b.input("x", kFloat, {1, 3, 4, 4}).input("v", kFloat, {4}).input("x2", kFloat, {2, 5});
  b.output("y", kFloat, {1, 3, 4, 4}).output("y2", kFloat, {2, 5});
  b.initializer_floats("w", {1, 3, 1, 1}, {0.5f, 1.f, -2.f});
  b.node("Relu", {"x"}, {"r"});
  chain_node(b, {"r", "w", "v"}, "e", {{ir::StepKind::kAdd, 0, 0, 1}, {ir::StepKind::kMul, 0, 0, 2}});
  ModelBuilder::declare(b.model.mutable_graph()->add_value_info(), "e", kFloat, {1, 3, 4, 4});
  b.node("Sigmoid", {"e"}, {"y"});
  // A chain node reading its input 0 as an operand cannot continue a chain (that value would
  // exist only inside the fused node).
  b.node("Abs", {"x2"}, {"r2"});
  chain_node(b, {"r2"}, "y2", {{ir::StepKind::kMul, 0, 0, 0}});
  const std::string path = b.save(testing::temp_dir("ew_fuse_merge") / "m.onnx");

  const ir::Model model = optimized_model(path);
  EXPECT_EQ(count_ops(model.graph, "Abs"), 1);
  EXPECT_EQ(count_ops(model.graph, "ElementwiseChain", "com.edgemm"), 2);
  for (const ir::Node& n : model.graph.nodes) {
    if (n.outputs[0] == "y") {
      EXPECT_EQ(steps_of(n), "relu, add(input 1), mul(input 2), sigmoid");
      EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "w", "v"}));
    }
  }
  EXPECT_LE(optimized_vs_original(
                path, {{"x", seeded_f32({1, 3, 4, 4}, 9)}, {"v", seeded_f32({4}, 10)}, {"x2", seeded_f32({2, 5}, 11)}}),
            1e-5);
}

}  // namespace passes_elementwise_fusion_test
}  // namespace edgemm
