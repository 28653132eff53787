// Platform profiles (src/targets): the loader's schema errors name the file and line; a
// hand-made profile applied to a hand-built model gives the verdicts, partitions, crossings
// and fixes worked out by hand below; the conversion plan and the recipe renderer.
#include "edgemm/tools/targets.h"

#include <gtest/gtest.h>

#include <fstream>

#include "ir/onnx_import.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "targets/eligibility.h"
#include "targets/plan.h"

namespace edgemm {
namespace targets_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;

const char* kTarget = R"({"kind":"target","name":"npu","title":"Test NPU","converter":"none","source":"test"})";

std::string write_profile(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  const auto path = dir / (name + ".jsonl");
  std::ofstream(path) << text;
  return path.string();
}

/// The error message of loading `body` (after a target line) as profile "npu".
std::string load_error(const std::string& body) {
  const auto dir = testing::temp_dir("targets_errors");
  auto p = targets::load_profile(write_profile(dir, "npu", std::string(kTarget) + "\n" + body + "\n"));
  EXPECT_FALSE(p.has_value()) << body;
  return p ? "" : p.status().message();
}

TEST(TargetProfile, SchemaErrorsNameTheLine) {
  const std::string m = load_error(R"({"kind":"op","op":"Convv","verdict":"supported","source":"doc"})");
  EXPECT_NE(m.find("npu.jsonl:2:"), std::string::npos) << m;
  EXPECT_NE(m.find("'Convv' is not an ONNX operator"), std::string::npos) << m;
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported"})").find(":2: missing 'source'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported","source":" "})").find("'source' is empty"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"yes","source":"d"})").find("'verdict' is 'yes'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported","source":"d","colour":1})")
                .find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"opcode","source":"d"})").find("unknown kind 'opcode'"), std::string::npos);
  EXPECT_NE(load_error("# comment\n\nnot json").find("npu.jsonl:4: not a JSON object"), std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported","source":"d",)"
                       R"("constraints":[{"attr":"group","input":1,"in":[1]}]})")
                .find("exactly one of 'attr', 'input', 'output', 'model_batch'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported","source":"d",)"
                       R"("constraints":[{"input":0,"dtype_in":["float33"]}]})")
                .find("unknown dtype 'float33'"),
            std::string::npos);
  EXPECT_NE(load_error(std::string(kTarget)).find(":2: second target line"), std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"opset","min":13,"max":11,"source":"d"})").find("'min' is above 'max'"),
            std::string::npos);

  const auto dir = testing::temp_dir("targets_first_line");
  auto p = targets::load_profile(write_profile(dir, "npu", R"({"kind":"opset","min":7,"max":9,"source":"d"})"));
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.status().message().find(":1: the first entry must be the target line"), std::string::npos);
  p = targets::load_profile(write_profile(dir, "other", kTarget));
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.status().message().find("differs from the file name 'other.jsonl'"), std::string::npos);
}

TEST(TargetProfile, UnknownTargetListsTheKnownOnes) {
  const auto dir = testing::temp_dir("targets_names");
  write_profile(dir, "npu", kTarget);
  write_profile(dir, "cpu", R"({"kind":"target","name":"cpu","title":"c","converter":"none","source":"s"})");
  auto p = targets::load_target(dir.string(), "gpu");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("unknown target 'gpu'"), std::string::npos);
  EXPECT_NE(p.status().message().find(": cpu, npu)"), std::string::npos) << p.status().message();
  EXPECT_TRUE(targets::load_target(dir.string(), "npu").has_value());
}

/// The profile of the hand-worked example: opsets 7..15, static shapes, an exhaustive op list
/// with Conv (group 1, constant weights), Relu, the LayerNormalization decomposition's ops, and
/// LayerNormalization itself unsupported.
targets::PlatformProfile example_profile() {
  const auto dir = testing::temp_dir("targets_example");
  std::string text = std::string(kTarget) + "\n" +
                     R"({"kind":"opset","min":7,"max":15,"source":"doc 1"}
{"kind":"static_shapes","required":true,"source":"doc 2"}
{"kind":"unlisted_ops","verdict":"unsupported","source":"doc 3"}
{"kind":"op","op":"Conv","verdict":"supported","constraints":[{"attr":"group","in":[1]},{"input":1,"constant":true}],"source":"doc 4"}
{"kind":"op","op":"Relu","verdict":"supported","source":"doc 5"}
{"kind":"op","op":"LayerNormalization","verdict":"unsupported","source":"doc 6"}
)";
  for (const char* op : {"ReduceMean", "Sub", "Pow", "Add", "Sqrt", "Div", "Mul"}) {
    text += std::string(R"({"kind":"op","op":")") + op + R"(","verdict":"supported","source":"doc 7"})" + "\n";
  }
  auto p = targets::load_profile(write_profile(dir, "npu", text));
  EXPECT_TRUE(p.has_value()) << p.status().message();
  return p ? *p : targets::PlatformProfile{};
}

/// x [1,3,8,8] → Conv (group 1) → a → Conv (depthwise, group 4) → b → LayerNormalization → c →
/// Relu → y; batch -1 makes x's first dim symbolic.
ir::Model example_model(int64_t batch) {
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {batch, 3, 8, 8}).output("y", onnx::TensorProto::FLOAT, {batch, 4, 8, 8});
  b.initializer_floats("w1", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.initializer_floats("w2", {4, 1, 3, 3}, std::vector<float>(36, 0.1f));
  b.initializer_floats("scale", {8}, std::vector<float>(8, 1.0f));
  b.initializer_floats("bias", {8}, std::vector<float>(8, 0.0f));
  testing::set_ints(b.node("Conv", {"x", "w1"}, {"a"}, "conv1"), "pads", {1, 1, 1, 1});
  auto* dw = b.node("Conv", {"a", "w2"}, {"b"}, "conv2");
  testing::set_ints(dw, "pads", {1, 1, 1, 1});
  testing::set_int(dw, "group", 4);
  b.node("LayerNormalization", {"b", "scale", "bias"}, {"c"}, "ln");
  b.node("Relu", {"c"}, {"y"}, "relu");
  const auto path = b.save(testing::temp_dir("targets_model") / "m.onnx");
  auto m = ir::import_onnx_file(path);
  EXPECT_TRUE(m.has_value()) << m.status().message();
  return std::move(m).value();
}

TEST(TargetCheck, HandWorkedExample) {
  const targets::PlatformProfile profile = example_profile();
  const targets::TargetReport r = targets::check_model(example_model(1), profile);
  ASSERT_EQ(r.nodes.size(), 4u);
  EXPECT_EQ(r.nodes[0].placement, targets::Placement::kNpu);
  ASSERT_EQ(r.nodes[1].placement, targets::Placement::kCpu);
  ASSERT_EQ(r.nodes[1].reasons.size(), 1u);
  EXPECT_EQ(r.nodes[1].reasons[0].kind, targets::Reason::Kind::kAttribute);
  EXPECT_NE(r.nodes[1].reasons[0].text.find("'group' = 4"), std::string::npos) << r.nodes[1].reasons[0].text;
  EXPECT_EQ(r.nodes[1].reasons[0].line, 5);
  ASSERT_EQ(r.nodes[2].placement, targets::Placement::kCpu);
  ASSERT_EQ(r.nodes[2].reasons.size(), 1u);
  EXPECT_EQ(r.nodes[2].reasons[0].kind, targets::Reason::Kind::kOp);
  EXPECT_EQ(r.nodes[2].reasons[0].source, "doc 6");
  EXPECT_EQ(r.nodes[2].reasons[0].fix, "decompose LayerNormalization (convert --opset 16)");
  EXPECT_EQ(r.nodes[3].placement, targets::Placement::kNpu);
  EXPECT_EQ(r.npu_nodes, 2);
  EXPECT_EQ(r.cpu_nodes, 2);
  EXPECT_EQ(r.unknown_nodes, 0);
  // Components: {conv1} NPU, {conv2, ln} CPU, {relu} NPU; a crosses NPU→CPU, c CPU→NPU.
  ASSERT_EQ(r.partitions.size(), 3u);
  EXPECT_EQ(r.nodes[1].partition, r.nodes[2].partition);
  EXPECT_NE(r.nodes[0].partition, r.nodes[3].partition);
  ASSERT_EQ(r.crossings.size(), 2u);
  EXPECT_EQ(r.crossings[0].tensor, "a");
  EXPECT_EQ(r.crossings[0].from, targets::Placement::kNpu);
  EXPECT_EQ(r.crossings[0].bytes.value_or(-1), 4 * 8 * 8 * 4);
  EXPECT_EQ(r.crossings[1].tensor, "c");
  EXPECT_EQ(r.crossings[1].from, targets::Placement::kCpu);
  ASSERT_EQ(r.model_issues.size(), 1u);
  EXPECT_NE(r.model_issues[0].text.find("model opset 17 is outside the converter's 7..15"), std::string::npos);
  EXPECT_EQ(r.model_issues[0].fix, "convert opset (convert --opset 15)");

  auto plan = targets::plan_conversion(example_model(1), profile, r, {});
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  EXPECT_TRUE(plan->options.simplify);
  EXPECT_EQ(plan->options.target_opset, 15);
}

TEST(TargetCheck, DynamicShapesNeedFixing) {
  const targets::PlatformProfile profile = example_profile();
  const ir::Model model = example_model(-1);
  const targets::TargetReport r = targets::check_model(model, profile);
  ASSERT_EQ(r.nodes[0].placement, targets::Placement::kCpu);
  EXPECT_EQ(r.nodes[0].reasons[0].kind, targets::Reason::Kind::kDynamicShape);
  EXPECT_EQ(r.nodes[0].reasons[0].fix, "fix shapes (convert --fix-shape)");
  auto plan = targets::plan_conversion(model, profile, r, {});
  ASSERT_FALSE(plan.has_value());
  EXPECT_NE(plan.status().message().find("input 'x' [N,3,8,8] is dynamic: pass --fix-shape x=..."), std::string::npos)
      << plan.status().message();
  plan = targets::plan_conversion(model, profile, r, {{"x", {1, 3, 8, 8}}});
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  EXPECT_EQ(plan->options.fixed_shapes.at("x"), (Shape{1, 3, 8, 8}));
}

/// A profile (unlisted ops unknown) whose Conv takes group 1 or depthwise, with weight H and W
/// at most 255 (as platforms/ascend310p.jsonl encodes CANN's Conv pages); Softmax takes a model
/// batch of 1 (as platforms/rk3588.jsonl encodes RKNN's "batchsize: 1"); Relu is listed unknown.
targets::PlatformProfile rules_profile() {
  const auto dir = testing::temp_dir("targets_rules");
  const std::string text = std::string(kTarget) + "\n" + R"({"kind":"unlisted_ops","verdict":"unknown","source":"doc 1"}
{"kind":"op","op":"Conv","verdict":"supported","constraints":[{"attr":"group","in":[1],"or_depthwise":true},{"input":1,"axis":3,"max":255}],"source":"doc 2"}
{"kind":"op","op":"Softmax","verdict":"supported","constraints":[{"model_batch":true,"max":1,"note":"batchsize: 1"}],"source":"doc 3"}
{"kind":"op","op":"Relu","verdict":"unknown","source":"doc 4"}
{"kind":"op","op":"Reshape","verdict":"supported","source":"doc 5"}
)";
  auto p = targets::load_profile(write_profile(dir, "npu", text));
  EXPECT_TRUE(p.has_value()) << p.status().message();
  return p ? *p : targets::PlatformProfile{};
}

/// x [batch,4,8,8] → Conv group 4 (depthwise, w [4,1,3,3]) → a → Conv group 2 (w [4,2,3,3]) → b
/// → Conv depthwise with a 1×256 kernel → c → Relu → d → Reshape [batch*4, 8, 8] → e → Softmax → y.
ir::Model rules_model(int64_t batch) {
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {batch, 4, 8, 8}).output("y", onnx::TensorProto::FLOAT, {batch * 4, 8, 8});
  b.initializer_floats("w_dw", {4, 1, 3, 3}, std::vector<float>(36, 0.1f));
  b.initializer_floats("w_g2", {4, 2, 3, 3}, std::vector<float>(72, 0.1f));
  b.initializer_floats("w_wide", {4, 1, 1, 256}, std::vector<float>(1024, 0.1f));
  b.initializer_int64s("shape", {3}, {batch * 4, 8, 8});
  auto* dw = b.node("Conv", {"x", "w_dw"}, {"a"}, "depthwise");
  testing::set_ints(dw, "pads", {1, 1, 1, 1});
  testing::set_int(dw, "group", 4);
  auto* g2 = b.node("Conv", {"a", "w_g2"}, {"b"}, "grouped");
  testing::set_ints(g2, "pads", {1, 1, 1, 1});
  testing::set_int(g2, "group", 2);
  auto* wide = b.node("Conv", {"b", "w_wide"}, {"c"}, "wide");
  testing::set_ints(wide, "pads", {0, 128, 0, 127});
  testing::set_int(wide, "group", 4);
  b.node("Relu", {"c"}, {"d"}, "relu");
  b.node("Reshape", {"d", "shape"}, {"e"}, "reshape");
  b.node("Softmax", {"e"}, {"y"}, "softmax");
  const auto path = b.save(testing::temp_dir("targets_rules_model") / "m.onnx");
  auto m = ir::import_onnx_file(path);
  EXPECT_TRUE(m.has_value()) << m.status().message();
  return std::move(m).value();
}

// Depthwise Conv (group = input channels = output channels) passes "group in [1] or depthwise";
// a group-2 Conv does not; a depthwise Conv still meets the weight-size limit (1x256 > 255).
TEST(TargetCheck, DepthwiseConvPassesTheGroupRule) {
  const targets::TargetReport r = targets::check_model(rules_model(1), rules_profile());
  ASSERT_EQ(r.nodes.size(), 6u);
  EXPECT_EQ(r.nodes[0].placement, targets::Placement::kNpu) << r.nodes[0].reasons.size();
  ASSERT_EQ(r.nodes[1].placement, targets::Placement::kCpu);
  ASSERT_EQ(r.nodes[1].reasons.size(), 1u);
  EXPECT_NE(r.nodes[1].reasons[0].text.find("'group' = 2; profile: attribute 'group' in [1] or depthwise"),
            std::string::npos)
      << r.nodes[1].reasons[0].text;
  ASSERT_EQ(r.nodes[2].placement, targets::Placement::kCpu);
  ASSERT_EQ(r.nodes[2].reasons.size(), 1u);
  EXPECT_NE(r.nodes[2].reasons[0].text.find("input 1 'w_wide' dim 3 = 256"), std::string::npos)
      << r.nodes[2].reasons[0].text;
}

// "batchsize: 1" is the model's batch: at batch 1 a Softmax over a [4, 8, 8] tensor (leading dim
// 4, e.g. attention heads) is taken; at batch 2 every Softmax falls back, naming the model input.
TEST(TargetCheck, BatchRuleReadsTheModelInputs) {
  const targets::PlatformProfile profile = rules_profile();
  targets::TargetReport r = targets::check_model(rules_model(1), profile);
  EXPECT_EQ(r.nodes[5].placement, targets::Placement::kNpu);
  r = targets::check_model(rules_model(2), profile);
  ASSERT_EQ(r.nodes[5].placement, targets::Placement::kCpu);
  ASSERT_EQ(r.nodes[5].reasons.size(), 1u);
  EXPECT_EQ(r.nodes[5].reasons[0].kind, targets::Reason::Kind::kInput);
  EXPECT_NE(r.nodes[5].reasons[0].text.find("model input 'x' has batch 2 [2,4,8,8]; profile: model batch (dim 0 of "
                                            "the model's inputs) <= 1 (batchsize: 1)"),
            std::string::npos)
      << r.nodes[5].reasons[0].text;
  EXPECT_EQ(r.nodes[5].reasons[0].line, 4);
}

// A node the documentation is silent on is "unknown": counted apart from NPU and CPU, in its own
// partition, and the tensors into and out of it are not NPU<->CPU crossings.
TEST(TargetCheck, UnknownIsNotFallback) {
  const targets::TargetReport r = targets::check_model(rules_model(1), rules_profile());
  EXPECT_EQ(r.nodes[3].placement, targets::Placement::kUnknown);
  EXPECT_EQ(r.npu_nodes, 3);
  EXPECT_EQ(r.cpu_nodes, 2);
  EXPECT_EQ(r.unknown_nodes, 1);
  EXPECT_EQ(r.partition_count(targets::Placement::kUnknown), 1);
  // a (NPU → CPU) is a crossing; c (CPU → unknown) and d (unknown → NPU) have an unknown side.
  EXPECT_EQ(r.crossing_count(true), 1);
  EXPECT_EQ(r.crossing_count(false), 2);
  EXPECT_EQ(r.crossing_bytes(), 4 * 8 * 8 * 4);
}

TEST(TargetProfile, NewConstraintFormsAreChecked) {
  EXPECT_NE(load_error(R"({"kind":"op","op":"Conv","verdict":"supported","source":"d",)"
                       R"("constraints":[{"attr":"strides","in":[1],"or_depthwise":true}]})")
                .find("'or_depthwise' applies to a constraint on 'group' with 'in'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Softmax","verdict":"supported","source":"d",)"
                       R"("constraints":[{"model_batch":true}]})")
                .find("'model_batch' needs 'min' or 'max'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"kind":"op","op":"Softmax","verdict":"supported","source":"d",)"
                       R"("constraints":[{"model_batch":true,"axis":0,"max":1}]})")
                .find("'axis' does not apply to 'model_batch'"),
            std::string::npos);
}

TEST(TargetRecipe, RendersOnlyKnownPlaceholders) {
  auto text = targets::render_template("m={{model_file}} s=[{{input_shape}}]",
                                       {{"model_file", "model.onnx"}, {"input_shape", "1,3"}}, "t");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "m=model.onnx s=[1,3]");
  auto bad = targets::render_template("{{colour}}", {}, "t.in");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("unknown placeholder {{colour}}"), std::string::npos);
  bad = targets::render_template("{{model_file}}", {}, "t.in");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("no value for placeholder {{model_file}}"), std::string::npos);
  EXPECT_FALSE(targets::render_template("{{model_file", {}, "t.in").has_value());
}

/// The error message of loading a recipe folder holding `json` and a template t.in.
std::string recipe_error(const std::string& json) {
  const auto dir = testing::temp_dir("targets_recipe");
  std::ofstream(dir / "t.in") << "x";
  std::ofstream(dir / "recipe.json") << json;
  auto r = targets::load_recipe(dir.string());
  EXPECT_FALSE(r.has_value()) << json;
  return r ? "" : r.status().message();
}

TEST(TargetRecipe, MalformedRecipesAreRefused) {
  EXPECT_NE(recipe_error(R"({"target":"npu","templates":[{"template":"/etc/passwd","output":"a.sh"}]})")
                .find("must be a file name inside"),
            std::string::npos);
  EXPECT_NE(recipe_error(R"({"target":"npu","templates":[{"template":"../t.in","output":"a.sh"}]})")
                .find("must be a file name inside"),
            std::string::npos);
  EXPECT_NE(recipe_error(R"({"target":"npu","templates":[{"template":"t.in","output":"model.int8.onnx"}]})")
                .find("'model.int8.onnx' would be written twice"),
            std::string::npos);
  EXPECT_NE(recipe_error(R"({"target":"npu","templates":[{"template":"t.in","output":"a.sh"}],)"
                         R"("calibration":{"format":"none","required":"yes"}})")
                .find("'required' must be true or false"),
            std::string::npos);
}

}  // namespace targets_test
}  // namespace edgemm
