// `edgemm convert --simplify` beyond passes::simplify (convert/simplify_extra.h): HardSwish as
// x·HardSigmoid(x), Clip with constant bounds as Relu / HardSigmoid forms, Mul/Div constants
// broadcast to full shape, scalar scales of a computed MatMul moved onto its first operand. Each rewrite happens, the
// result passes the ONNX checker and strict shape inference, and edgemm computes the original's outputs within 1e-5.
#include <gtest/gtest.h>

#include <cfloat>

#include "convert_test_util.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"

namespace edgemm {
namespace convert_simplify_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::convert_file;
using testutil::max_output_diff;
using testutil::op_count;
using testutil::seeded_f32;

testutil::Converted simplified(const std::string& path, const Tensor& x) {
  convert::ConvertOptions options;
  options.simplify = true;
  auto c = convert_file(path, options);
  EXPECT_TRUE(c.status.is_ok()) << c.status.message();
  if (!c.status.is_ok()) return c;
  EXPECT_TRUE(convert::check_strict(c.model).is_ok());
  EXPECT_LE(max_output_diff(path, c.path, {{"x", x}}), 1e-5);
  return c;
}

TEST(ConvertSimplify, HardSwishBecomesMulOfHardSigmoid) {
  const auto dir = testing::temp_dir("convert_hardswish");
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 4, 5, 5}).output("y", kFloat, {1, 4, 5, 5});
  b.initializer_floats("three", {}, {3.f});
  b.initializer_floats("zero", {}, {0.f});
  b.initializer_floats("six", {}, {6.f});
  b.node("Add", {"x", "three"}, {"a"});
  b.node("Clip", {"a", "zero", "six"}, {"c"});
  b.node("Mul", {"x", "c"}, {"m"});
  b.node("Div", {"m", "six"}, {"y"});
  auto c = simplified(b.save(dir / "hardswish.onnx"), seeded_f32({1, 4, 5, 5}, 1, -5, 5));
  EXPECT_EQ(op_count(c.model, "Clip"), 0);
  EXPECT_EQ(op_count(c.model, "HardSigmoid"), 1);
  EXPECT_EQ(op_count(c.model, "Mul"), 1);
  EXPECT_EQ(c.model.graph.nodes.size(), 2u);
  EXPECT_EQ(c.report.rewrites["HardSwish → x·HardSigmoid(x)"], 1);
}

/// y = Clip(x, lo, hi) at opset 11 with the given bound inputs ("" for none).
std::string clip_model(const std::filesystem::path& dir, const std::string& name, std::optional<float> lo,
                       std::optional<float> hi) {
  ModelBuilder b(11);
  b.input("x", kFloat, {3, 7}).output("y", kFloat, {3, 7});
  std::vector<std::string> inputs = {"x", "", ""};
  if (lo) inputs[1] = b.initializer_floats("lo", {}, {*lo})->name();
  if (hi) inputs[2] = b.initializer_floats("hi", {}, {*hi})->name();
  if (!hi) inputs.pop_back();
  b.node("Clip", inputs, {"y"});
  return b.save(dir / (name + ".onnx"));
}

TEST(ConvertSimplify, ClipWithConstantBoundsLeavesNoBoundInputs) {
  const auto dir = testing::temp_dir("convert_clip_forms");
  const Tensor x = seeded_f32({3, 7}, 2, -6, 6);
  struct Case {
    const char* name;
    std::optional<float> lo, hi;
    const char* op;  // the op that must appear
  };
  for (const Case& k : {Case{"relu", 0.f, std::nullopt, "Relu"}, Case{"both", -4.f, 4.f, "HardSigmoid"},
                        Case{"relu6", 0.f, 6.f, "HardSigmoid"}, Case{"lower", -1.5f, std::nullopt, "Relu"},
                        Case{"upper", std::nullopt, 2.5f, "Relu"}}) {
    auto c = simplified(clip_model(dir, k.name, k.lo, k.hi), x);
    EXPECT_EQ(op_count(c.model, "Clip"), 0) << k.name;
    EXPECT_EQ(op_count(c.model, k.op), 1) << k.name;
  }
}

TEST(ConvertSimplify, ClipBoundAttributesAreKeptBelowOpset11) {
  const auto dir = testing::temp_dir("convert_clip6");
  ModelBuilder b(9);
  b.input("x", kFloat, {3, 7}).output("y", kFloat, {3, 7});
  auto* clip = b.node("Clip", {"x"}, {"y"});
  testing::set_float(clip, "min", -1.f);
  testing::set_float(clip, "max", 1.f);
  auto c = simplified(b.save(dir / "clip6.onnx"), seeded_f32({3, 7}, 3, -3, 3));
  EXPECT_EQ(op_count(c.model, "Clip"), 1);
}

TEST(ConvertSimplify, LastAxisMulConstantIsBroadcastToFullShape) {
  const auto dir = testing::temp_dir("convert_expand");
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 6, 8}).output("y", kFloat, {1, 6, 8});
  b.initializer_floats("gamma", {8}, testutil::seeded_values(8, 4));
  b.initializer_floats("channel", {6, 1}, testutil::seeded_values(6, 5));
  b.node("Relu", {"x"}, {"r"});
  b.node("Mul", {"r", "gamma"}, {"m"});    // varies along the last axis: expanded
  b.node("Div", {"m", "channel"}, {"y"});  // varies along axis 1 only: kept
  auto c = simplified(b.save(dir / "expand.onnx"), seeded_f32({1, 6, 8}, 6));
  EXPECT_EQ(c.report.rewrites["Mul/Div constant expanded"], 1);
  for (const auto& node : c.model.graph.nodes) {
    if (node.op_type != "Mul") continue;
    EXPECT_EQ(c.model.graph.initializers.at(node.inputs[1]).shape(), (Shape{1, 6, 8}));
  }
}

TEST(ConvertSimplify, ScalarScaleOfComputedMatMulMovesToItsFirstOperand) {
  const auto dir = testing::temp_dir("convert_scale_matmul");
  ModelBuilder b(13);
  b.input("x", kFloat, {2, 3, 4}).output("y", kFloat, {2, 3, 3}).output("z", kFloat, {2, 3, 3});
  b.output("w", kFloat, {2, 3, 5});
  b.initializer_floats("root", {}, {2.f});
  b.initializer_floats("half", {1}, {0.5f});
  b.initializer_floats("weight", {4, 5}, testutil::seeded_values(20, 8));
  b.node("Relu", {"x"}, {"a"});
  testing::set_ints(b.node("Transpose", {"x"}, {"t"}), "perm", {0, 2, 1});
  b.node("MatMul", {"a", "t"}, {"p"});
  b.node("Div", {"p", "root"}, {"y"});  // moved: Div(a, root)
  b.node("MatMul", {"x", "t"}, {"q"});
  b.node("Mul", {"half", "q"}, {"z"});  // moved: Mul(half, x)
  b.node("MatMul", {"a", "weight"}, {"r"});
  b.node("Div", {"r", "root"}, {"w"});  // constant weight: kept
  auto c = simplified(b.save(dir / "scale.onnx"), seeded_f32({2, 3, 4}, 9, -2, 2));
  EXPECT_EQ(c.report.rewrites["scalar Mul/Div moved before MatMul"], 2);
  for (const auto& node : c.model.graph.nodes) {
    if (node.op_type == "MatMul" && node.inputs[1] == "t") {
      EXPECT_TRUE(node.outputs[0] == "y" || node.outputs[0] == "z") << node.outputs[0];
    }
    if (node.op_type == "Div" && node.outputs[0] != "w") {
      EXPECT_EQ(node.inputs[0], "a");
    }
  }
}

TEST(ConvertOpsetResize, AbsentRoiAndScalesBecomeEmptyConstantsAtOpset11) {
  const auto dir = testing::temp_dir("convert_resize");
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 2, 3, 3}).output("y", kFloat, {1, 2, 6, 6});
  b.initializer_int64s("sizes", {4}, {1, 2, 6, 6});
  testing::set_string(b.node("Resize", {"x", "", "", "sizes"}, {"y"}), "mode", "nearest");
  const std::string path = b.save(dir / "resize.onnx");
  convert::ConvertOptions options;
  options.target_opset = 11;
  auto c = convert_file(path, options);
  ASSERT_TRUE(c.status.is_ok()) << c.status.message();
  EXPECT_TRUE(convert::check_strict(c.model).is_ok());
  const ir::Node& resize = c.model.graph.nodes.front();
  ASSERT_EQ(resize.inputs.size(), 4u);
  EXPECT_EQ(c.model.graph.initializers.at(resize.inputs[1]).element_count(), 0);
  EXPECT_EQ(c.model.graph.initializers.at(resize.inputs[2]).element_count(), 0);
  EXPECT_LE(max_output_diff(path, c.path, {{"x", seeded_f32({1, 2, 3, 3}, 7)}}), 1e-6);
  options.target_opset = 10;
  auto refused = convert_file(path, options);
  EXPECT_EQ(refused.status.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status.message().find("opset 10"), std::string::npos) << refused.status.message();
}

}  // namespace convert_simplify_test
}  // namespace edgemm
