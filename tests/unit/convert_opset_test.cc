// `edgemm convert --opset`: each down-conversion rewrite (convert/downgrade_rewrites.h) happens,
// the result passes the ONNX checker and strict shape inference at the target opset, and edgemm
// computes the same outputs as for the original (1e-5); up-conversion through libonnx; errors.
#include <gtest/gtest.h>

#include "convert_test_util.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"

namespace edgemm {
namespace convert_opset_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::convert_file;
using testutil::max_output_diff;
using testutil::op_count;
using testutil::seeded_f32;
using testutil::seeded_values;

convert::ConvertOptions to_opset(int64_t opset) {
  convert::ConvertOptions options;
  options.target_opset = opset;
  return options;
}

/// Converts, checks the opset and the checker, and compares outputs on `x`.
void expect_equivalent(const std::string& path, int64_t opset, const Tensor& x, testutil::Converted* out = nullptr) {
  auto c = convert_file(path, to_opset(opset));
  ASSERT_TRUE(c.status.is_ok()) << c.status.message();
  EXPECT_EQ(c.model.opset(""), opset);
  EXPECT_TRUE(convert::check_strict(c.model).is_ok());
  EXPECT_LE(max_output_diff(path, c.path, {{"x", x}}), 1e-5);
  if (out != nullptr) *out = std::move(c);
}

std::string layer_norm_model(const std::filesystem::path& dir, int64_t axis, bool bias, bool mean_output) {
  ModelBuilder b(17);
  b.input("x", kFloat, {2, 3, 8}).output("y", kFloat, {2, 3, 8});
  if (mean_output) b.output("mean", kFloat, {2, 1, 1});
  const int64_t count = axis == -1 ? 8 : 24;
  const std::vector<int64_t> dims = axis == -1 ? std::vector<int64_t>{8} : std::vector<int64_t>{3, 8};
  b.initializer_floats("gamma", dims, seeded_values(static_cast<size_t>(count), 3, 0.5f, 1.5f));
  std::vector<std::string> inputs = {"x", "gamma"};
  if (bias) {
    b.initializer_floats("beta", dims, seeded_values(static_cast<size_t>(count), 4));
    inputs.push_back("beta");
  }
  auto* ln = b.node("LayerNormalization", inputs,
                    mean_output ? std::vector<std::string>{"y", "mean"} : std::vector<std::string>{"y"});
  testing::set_int(ln, "axis", axis);
  testing::set_float(ln, "epsilon", 1e-3f);
  return b.save(dir / "layer_norm.onnx");
}

TEST(ConvertOpset, LayerNormalizationDecomposedBelow17) {
  const auto dir = testing::temp_dir("convert_ln");
  testutil::Converted c;
  expect_equivalent(layer_norm_model(dir, -1, true, false), 11, seeded_f32({2, 3, 8}, 1, -3, 3), &c);
  EXPECT_EQ(op_count(c.model, "LayerNormalization"), 0);
  EXPECT_EQ(op_count(c.model, "ReduceMean"), 2);
  EXPECT_EQ(op_count(c.model, "Sqrt"), 1);
  EXPECT_EQ(c.report.rewrites["LayerNormalization-17 decomposed"], 1);
}

TEST(ConvertOpset, LayerNormalizationOverTwoAxesWithMeanOutputToOpset9) {
  const auto dir = testing::temp_dir("convert_ln2");
  expect_equivalent(layer_norm_model(dir, 1, false, true), 9, seeded_f32({2, 3, 8}, 2, -2, 2));
}

TEST(ConvertOpset, AxesInputsBecomeAttributes) {
  const auto dir = testing::temp_dir("convert_axes");
  ModelBuilder b(13);
  b.input("x", kFloat, {2, 6, 1}).output("a", kFloat, {2, 2}).output("b", kFloat, {1, 2, 4, 1});
  b.output("s", kFloat, {2, 1, 1});
  b.initializer_int64s("split", {2}, {2, 4});
  b.initializer_int64s("squeeze_axes", {1}, {-1});
  b.initializer_int64s("unsqueeze_axes", {1}, {0});
  b.initializer_int64s("sum_axes", {1}, {-2});
  b.node("Split", {"x", "split"}, {"p", "q"});
  testing::set_int(b.model.mutable_graph()->mutable_node(0), "axis", 1);
  b.node("Squeeze", {"p", "squeeze_axes"}, {"a"});
  b.node("Unsqueeze", {"q", "unsqueeze_axes"}, {"b"});
  b.node("ReduceSum", {"x", "sum_axes"}, {"s"});
  const std::string path = b.save(dir / "axes.onnx");
  testutil::Converted c;
  expect_equivalent(path, 9, seeded_f32({2, 6, 1}, 3), &c);
  for (const auto& node : c.model.graph.nodes) {
    EXPECT_EQ(node.inputs.size(), 1u) << node.op_type;
    const char* key = node.op_type == "Split" ? "split" : "axes";
    ASSERT_TRUE(node.has_attr(key)) << node.op_type;
    for (int64_t axis : node.attributes.at(key).ints) EXPECT_GE(axis, 0) << node.op_type;  // opset 9: no negative axes
  }
  EXPECT_EQ(c.report.rewrites["Split axes input to attribute"], 1);
}

TEST(ConvertOpset, NegativeUnsqueezeAxesCountInTheOutputsRank) {
  // Unsqueeze-11 axes index the output: on x [2, 3], -1 is axis 2 and [0, -1] is [0, 3].
  const auto dir = testing::temp_dir("convert_unsqueeze_axes");
  ModelBuilder b(11);
  b.input("x", kFloat, {2, 3}).output("y", kFloat, {2, 3, 1}).output("z", kFloat, {1, 2, 3, 1});
  b.output("m", kFloat, {2, 1});
  testing::set_ints(b.node("Unsqueeze", {"x"}, {"y"}), "axes", {-1});
  testing::set_ints(b.node("Unsqueeze", {"x"}, {"z"}), "axes", {0, -1});
  auto* max = b.node("ReduceMax", {"x"}, {"m"});
  testing::set_ints(max, "axes", {-1});
  const std::string path = b.save(dir / "unsqueeze.onnx");
  testutil::Converted c;
  expect_equivalent(path, 10, seeded_f32({2, 3}, 5), &c);
  std::map<std::string, std::vector<int64_t>> axes;
  for (const auto& node : c.model.graph.nodes) axes[node.outputs[0]] = node.attributes.at("axes").ints;
  EXPECT_EQ(axes["y"], (std::vector<int64_t>{2}));
  EXPECT_EQ(axes["z"], (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(axes["m"], (std::vector<int64_t>{1}));
}

TEST(ConvertOpset, ReduceSumWithoutAxesAndNoopBecomesIdentity) {
  const auto dir = testing::temp_dir("convert_noop");
  ModelBuilder b(13);
  b.input("x", kFloat, {2, 3}).output("y", kFloat, {2, 3});
  testing::set_int(b.node("ReduceSum", {"x"}, {"y"}), "noop_with_empty_axes", 1);
  testutil::Converted c;
  expect_equivalent(b.save(dir / "noop.onnx"), 11, seeded_f32({2, 3}, 4), &c);
  EXPECT_EQ(op_count(c.model, "Identity"), 1);
}

// Opset 18: a reduction with noop_with_empty_axes and no axes still applies its per-element part
// (ONNX's reference: |x| for L1, x² for SumSquare, log x for LogSum).
TEST(ConvertOpset, Opset18NoopReductionsBecomeTheirElementwiseOp) {
  const auto dir = testing::temp_dir("convert_noop18");
  const std::pair<std::string, std::string> cases[] = {
      {"ReduceL1", "Abs"}, {"ReduceSumSquare", "Mul"}, {"ReduceLogSum", "Log"}, {"ReduceMax", "Identity"}};
  for (const auto& [op, elementwise] : cases) {
    ModelBuilder b(18);
    b.input("x", kFloat, {2, 3}).output("y", kFloat, {2, 3});
    testing::set_int(b.node(op, {"x"}, {"y"}), "noop_with_empty_axes", 1);
    testutil::Converted c;
    expect_equivalent(b.save(dir / (op + ".onnx")), 17, seeded_f32({2, 3}, 4, 0.5f, 3.0f), &c);
    EXPECT_EQ(op_count(c.model, elementwise), 1) << op;
  }
}

// Split-18 num_outputs on an axis of unknown size: the sizes are computed at run time, so an
// uneven extent (7 into 3: 3, 3, 1) still splits as Split-18 does.
TEST(ConvertOpset, Split18OnASymbolicAxisComputesItsSizes) {
  const auto dir = testing::temp_dir("convert_split18");
  ModelBuilder b(18);
  b.input("x", kFloat, {2, -1}).output("a", kFloat, {}).output("b", kFloat, {}).output("c", kFloat, {});
  for (auto& output : *b.model.mutable_graph()->mutable_output()) {
    output.mutable_type()->mutable_tensor_type()->clear_shape();  // sizes known only at run time
  }
  auto* split = b.node("Split", {"x"}, {"a", "b", "c"});
  testing::set_int(split, "axis", 1);
  testing::set_int(split, "num_outputs", 3);
  testutil::Converted c;
  expect_equivalent(b.save(dir / "split.onnx"), 17, seeded_f32({2, 7}, 6), &c);
  EXPECT_EQ(op_count(c.model, "Shape"), 1);
  auto refused = convert_file((dir / "split.onnx").string(), to_opset(11));
  EXPECT_EQ(refused.status.code(), StatusCode::kUnsupported);
}

std::string softmax_model(const std::filesystem::path& dir, const std::string& op, int64_t axis) {
  ModelBuilder b(13);
  b.input("x", kFloat, {2, 3, 5}).output("y", kFloat, {2, 3, 5});
  testing::set_int(b.node(op, {"x"}, {"y"}), "axis", axis);
  return b.save(dir / (op + ".onnx"));
}

TEST(ConvertOpset, SoftmaxOnMiddleAxisGoesThroughTranspose) {
  const auto dir = testing::temp_dir("convert_softmax");
  for (const std::string op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    testutil::Converted c;
    expect_equivalent(softmax_model(dir, op, 1), 11, seeded_f32({2, 3, 5}, 5, -4, 4), &c);
    EXPECT_EQ(op_count(c.model, "Transpose"), 2) << op;
    EXPECT_EQ(c.report.rewrites[op + " axis moved last by Transpose"], 1) << op;
  }
}

TEST(ConvertOpset, SoftmaxOnLastAxisIsRelabelled) {
  const auto dir = testing::temp_dir("convert_softmax_last");
  testutil::Converted c;
  expect_equivalent(softmax_model(dir, "Softmax", -1), 7, seeded_f32({2, 3, 5}, 6, -4, 4), &c);
  EXPECT_EQ(op_count(c.model, "Transpose"), 0);
  EXPECT_EQ(c.model.graph.nodes[0].attributes.at("axis").i, 2);  // no negative axes before 11
}

TEST(ConvertOpset, ClipBoundsBecomeAttributesBelow11) {
  const auto dir = testing::temp_dir("convert_clip");
  ModelBuilder b(13);
  b.input("x", kFloat, {4, 4}).output("y", kFloat, {4, 4});
  b.initializer_floats("lo", {}, {-0.25f});
  b.initializer_floats("hi", {}, {0.5f});
  b.node("Clip", {"x", "lo", "hi"}, {"y"});
  testutil::Converted c;
  expect_equivalent(b.save(dir / "clip.onnx"), 9, seeded_f32({4, 4}, 7), &c);
  const ir::Node& clip = c.model.graph.nodes[0];
  EXPECT_EQ(clip.inputs.size(), 1u);
  EXPECT_FLOAT_EQ(clip.attributes.at("min").f, -0.25f);
  EXPECT_FLOAT_EQ(clip.attributes.at("max").f, 0.5f);
}

TEST(ConvertOpset, SliceInputsBecomeAttributesBelow10) {
  const auto dir = testing::temp_dir("convert_slice");
  ModelBuilder b(13);
  b.input("x", kFloat, {4, 6}).output("y", kFloat, {3, 4});
  b.initializer_int64s("starts", {2}, {1, 1});
  b.initializer_int64s("ends", {2}, {4, -1});
  b.initializer_int64s("axes", {2}, {0, -1});
  b.initializer_int64s("steps", {2}, {1, 1});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  testutil::Converted c;
  expect_equivalent(b.save(dir / "slice.onnx"), 9, seeded_f32({4, 6}, 10), &c);
  const ir::Node& slice = c.model.graph.nodes[0];
  EXPECT_EQ(slice.inputs.size(), 1u);
  EXPECT_EQ(slice.attributes.at("axes").ints, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(slice.attributes.at("ends").ints, (std::vector<int64_t>{4, -1}));
  EXPECT_TRUE(c.model.graph.initializers.empty());  // the inputs that became attributes are gone
}

TEST(ConvertOpset, UnchangedAndTypeOnlyOpsAreRelabelled) {
  const auto dir = testing::temp_dir("convert_relabel");
  ModelBuilder b(17);
  b.input("x", kFloat, {2, 4}).output("y", kFloat, {8});
  b.initializer_int64s("shape", {1}, {8});
  b.node("Relu", {"x"}, {"r"});
  b.node("Add", {"r", "x"}, {"a"});
  b.node("Reshape", {"a", "shape"}, {"y"});
  testutil::Converted c;
  expect_equivalent(b.save(dir / "relabel.onnx"), 11, seeded_f32({2, 4}, 8), &c);
  EXPECT_EQ(c.report.rewrites["relabelled"], 3);
}

TEST(ConvertOpset, UpThroughLibonnxVersionConverter) {
  const auto dir = testing::temp_dir("convert_up");
  ModelBuilder b(9);
  b.input("x", kFloat, {2, 3, 5}).output("y", kFloat, {2, 3, 5});
  auto* clip = b.node("Clip", {"x"}, {"c"});
  testing::set_float(clip, "min", -0.5f);
  testing::set_float(clip, "max", 0.5f);
  testing::set_int(b.node("Softmax", {"c"}, {"y"}), "axis", 2);
  testutil::Converted c;
  expect_equivalent(b.save(dir / "up.onnx"), 13, seeded_f32({2, 3, 5}, 9), &c);
  auto clip_node = std::find_if(c.model.graph.nodes.begin(), c.model.graph.nodes.end(),
                                [](const ir::Node& n) { return n.op_type == "Clip"; });
  ASSERT_NE(clip_node, c.model.graph.nodes.end());
  EXPECT_EQ(clip_node->inputs.size(), 3u);  // Clip-11: bounds as inputs
}

TEST(ConvertOpset, ErrorsNameTheNodeOpAndTarget) {
  const auto dir = testing::temp_dir("convert_errors");
  ModelBuilder b(14);
  b.input("x", kFloat, {2, 4}).output("y", kFloat, {2, 4});
  b.node("HardSwish", {"x"}, {"y"}, "hs");
  const std::string path = b.save(dir / "hardswish.onnx");
  auto c = convert_file(path, to_opset(13));
  EXPECT_EQ(c.status.code(), StatusCode::kUnsupported);
  EXPECT_NE(c.status.message().find("HardSwish 'hs'"), std::string::npos) << c.status.message();
  EXPECT_NE(c.status.message().find("opset 13"), std::string::npos) << c.status.message();
  for (int64_t opset : {5, 99}) {
    auto out_of_range = convert_file(path, to_opset(opset));
    EXPECT_EQ(out_of_range.status.code(), StatusCode::kUnsupported);
    EXPECT_NE(out_of_range.status.message().find(std::to_string(opset)), std::string::npos);
  }
}

TEST(ConvertOpset, AxesComputedAtRunTimeCannotGoBelow13) {
  const auto dir = testing::temp_dir("convert_dynamic_axes");
  ModelBuilder b(13);
  b.input("x", kFloat, {2, 1}).input("axes", onnx::TensorProto::INT64, {1}).output("y", kFloat, {2});
  b.node("Squeeze", {"x", "axes"}, {"y"}, "sq");
  auto c = convert_file(b.save(dir / "dynamic.onnx"), to_opset(12));
  EXPECT_EQ(c.status.code(), StatusCode::kUnsupported);
  EXPECT_NE(c.status.message().find("Squeeze 'sq'"), std::string::npos) << c.status.message();
  EXPECT_NE(c.status.message().find("run time"), std::string::npos) << c.status.message();
}

}  // namespace convert_opset_test
}  // namespace edgemm
