// Visual token pruning: the com.edgemm TokenPrune kernel on hand-computed cases, and the graph
// rewrite (passes/token_pruning.h) on the tiny CLIP vision model against the PyTorch reference
// of the same rule (tools/fixtures/make_clip_fixture.py, VisionModel.forward_pruned): pruned
// image_embeds within 1e-4 for both rules at k = 1, keep 0.5; keep 1.0 equals the unpruned model.

#include "passes/token_pruning.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "kernels/cpu/token_prune.h"
#include "model_builder.h"
#include "source_dir.h"

namespace edgemm {
namespace token_pruning_test {  // named for the file: unity batches merge anonymous namespaces

const std::filesystem::path kTokenPackage =
    std::filesystem::path(edgemm::testing::source_dir()) / "tests/fixtures/clip_tiny";

Tensor token_pruning_reference(const std::string& name) {
  auto t = read_npy((kTokenPackage / "reference" / (name + ".npy")).string());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t.has_value() ? std::move(t).value() : Tensor();
}

/// Runs `model` (saved to a temporary file) on `inputs`; returns the named output.
Tensor run_model(const ir::Model& model, const std::string& file,
                 const std::vector<std::pair<std::string, Tensor>>& inputs, const std::string& output,
                 bool optimize = true) {
  const std::string path = (testing::temp_dir("token_pruning") / file).string();
  const Status saved = ir::export_onnx_file(model, path);
  EXPECT_TRUE(saved.is_ok()) << saved.to_string();
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = optimize;
  auto inf = Inferencer::create(config);
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  if (!inf.has_value()) return Tensor();
  auto outs = (*inf)->run(inputs);
  EXPECT_TRUE(outs.has_value()) << outs.status().to_string();
  if (!outs.has_value()) return Tensor();
  for (size_t i = 0; i < (*inf)->outputs().size(); ++i) {
    if ((*inf)->outputs()[i].name == output) return (*outs)[i];
  }
  ADD_FAILURE() << "no output " << output;
  return Tensor();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return 1e30;
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(a.data<float>()[i] - b.data<float>()[i])));
  }
  return worst;
}

ir::Model vision_model() {
  auto model = ir::import_onnx_file((kTokenPackage / "onnx/vision_model.onnx").string());
  EXPECT_TRUE(model.has_value()) << model.status().to_string();
  return model.has_value() ? std::move(model).value() : ir::Model();
}

TEST(TokenPruneKernel, PatchCountRoundsUpExceptForWholeProducts) {
  EXPECT_EQ(kernels::pruned_patch_count(0.5, 64), 32);
  EXPECT_EQ(kernels::pruned_patch_count(0.7, 64), 45);  // 44.8
  EXPECT_EQ(kernels::pruned_patch_count(0.3, 10), 3);   // 3.0000000000000004 in double
  EXPECT_EQ(kernels::pruned_patch_count(0.01, 4), 1);   // at least one patch
  EXPECT_EQ(kernels::pruned_patch_count(1.0, 49), 49);
}

// Hand-computed: 4 patches, keep 0.5 → 2. cls_attention scores (mean of 2 heads' row 0, keys
// 1..4): (0.1+0.3)/2 = 0.2, (0.4+0.2)/2 = 0.3, 0.2, (0.0+0.2)/2 = 0.1 → patches 2 and the first
// of the tied 1 and 3 (index 1): tokens [0, 1, 2]. mean_abs of rows (|a|+|b|)/2: 1, 1.5, 4, 4 →
// patches 3 and 4: tokens [0, 3, 4].
TEST(TokenPruneKernel, KeepsClassTokenAndTopPatchesInOrder) {
  testing::ModelBuilder b(17);
  b.model.add_opset_import()->set_domain("com.edgemm");
  b.model.mutable_opset_import(b.model.opset_import_size() - 1)->set_version(1);
  const int f = onnx::TensorProto::FLOAT;
  b.input("x", f, {1, 5, 2});
  b.input("p", f, {1, 2, 5, 5});
  b.output("y_attn", f, {1, 3, 2});
  b.output("y_abs", f, {1, 3, 2});
  for (const char* rule : {"cls_attention", "mean_abs"}) {
    auto* n = b.node("TokenPrune", {"x", "p"}, {std::string("cls_attention") == rule ? "y_attn" : "y_abs"});
    n->set_domain("com.edgemm");
    auto* keep = n->add_attribute();
    keep->set_name("keep_ratio");
    keep->set_type(onnx::AttributeProto::FLOAT);
    keep->set_f(0.5f);
    auto* r = n->add_attribute();
    r->set_name("rule");
    r->set_type(onnx::AttributeProto::STRING);
    r->set_s(rule);
  }
  const std::string path = b.save(testing::temp_dir("token_prune_kernel") / "prune.onnx");
  const Tensor x = Tensor::from_floats({1, 5, 2}, {9, 9, 1, -1, 2, -1, 3, 5, -4, 4});
  std::vector<float> p(50, 0.0f);
  const float head0[5] = {0.2f, 0.1f, 0.4f, 0.3f, 0.0f}, head1[5] = {0.1f, 0.3f, 0.2f, 0.1f, 0.2f};
  for (int j = 0; j < 5; ++j) {
    p[j] = head0[j];       // head 0, query 0
    p[25 + j] = head1[j];  // head 1, query 0
  }
  InferencerConfig config;
  config.model_path = path;
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto outs = (*inf)->run({{"x", x}, {"p", Tensor::from_floats({1, 2, 5, 5}, p)}});
  ASSERT_TRUE(outs.has_value()) << outs.status().to_string();
  const std::vector<float> attn((*outs)[0].data<float>(), (*outs)[0].data<float>() + 6);
  const std::vector<float> abs((*outs)[1].data<float>(), (*outs)[1].data<float>() + 6);
  EXPECT_EQ(attn, (std::vector<float>{9, 9, 1, -1, 2, -1}));
  EXPECT_EQ(abs, (std::vector<float>{9, 9, 3, 5, -4, 4}));
}

TEST(TokenPruning, MatchesPyTorchReferenceOnTinyClip) {
  const Tensor pixels = token_pruning_reference("pixel_values");
  for (const char* rule : {"cls_attention", "mean_abs"}) {
    ir::Model model = vision_model();
    auto report = passes::prune_visual_tokens(model, {.after_layer = 1, .keep_ratio = 0.5f, .rule = rule});
    ASSERT_TRUE(report.has_value()) << report.status().to_string();
    EXPECT_EQ(report->layers, 4);
    for (bool optimize : {true, false}) {
      const Tensor got =
          run_model(model, std::string(rule) + ".onnx", {{"pixel_values", pixels}}, "image_embeds", optimize);
      const Tensor want = token_pruning_reference(std::string("image_embeds_prune_") + rule + "_k1_keep0.5");
      EXPECT_LT(max_abs_diff(got, want), 1e-4) << rule << (optimize ? " optimized" : " not optimized");
      const Tensor hidden =
          run_model(model, std::string(rule) + "_h.onnx", {{"pixel_values", pixels}}, "last_hidden_state", optimize);
      EXPECT_EQ(hidden.shape(), (Shape{2, 33, 64})) << rule;  // class token + ceil(0.5 · 64) patches
    }
  }
}

TEST(TokenPruning, KeepAllEqualsTheUnprunedModel) {
  ir::Model model = vision_model();
  ASSERT_TRUE(
      passes::prune_visual_tokens(model, {.after_layer = 2, .keep_ratio = 1.0f, .rule = "mean_abs"}).has_value());
  const Tensor got =
      run_model(model, "keep_all.onnx", {{"pixel_values", token_pruning_reference("pixel_values")}}, "image_embeds");
  EXPECT_LT(max_abs_diff(got, token_pruning_reference("image_embeds")), 1e-4);
}

TEST(TokenPruning, BadOptionsAreClearErrors) {
  ir::Model model = vision_model();
  auto late = passes::prune_visual_tokens(model, {.after_layer = 3, .keep_ratio = 0.5f});
  ASSERT_FALSE(late.has_value());
  EXPECT_NE(late.status().message().find("4 attention layers"), std::string::npos) << late.status().message();
  EXPECT_FALSE(passes::prune_visual_tokens(model, {.after_layer = 1, .keep_ratio = 0.0f}).has_value());
  EXPECT_FALSE(passes::prune_visual_tokens(model, {.after_layer = 1, .keep_ratio = 1.5f}).has_value());
  auto rule = passes::prune_visual_tokens(model, {.after_layer = 1, .keep_ratio = 0.5f, .rule = "random"});
  ASSERT_FALSE(rule.has_value());
  EXPECT_NE(rule.status().message().find("'random'"), std::string::npos);
}

}  // namespace token_pruning_test
}  // namespace edgemm
