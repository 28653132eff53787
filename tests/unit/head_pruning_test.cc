// Attention-head pruning (passes/head_pruning.h, quant/head_scoring.h) on the tiny CLIP package
// against its PyTorch references (tools/fixtures/make_clip_fixture.py, HEAD_CASES): the pruned
// vision model (layers 0 and 2 without heads {1} and {0, 3}) and text model (layer 1 without
// head 2) match PyTorch with those heads' outputs zeroed before out_proj within 1e-5; head scores
// match the generator's vision_head_scores; head selection on hand-computed scores; bad input.

#include "passes/head_pruning.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "model_builder.h"
#include "quant/head_scoring.h"
#include "source_dir.h"

namespace edgemm {
namespace head_pruning_test {  // named for the file: unity batches merge anonymous namespaces

const std::filesystem::path kPrunedPackage =
    std::filesystem::path(edgemm::testing::source_dir()) / "tests/fixtures/clip_tiny";
const std::filesystem::path kPrunedReference = kPrunedPackage / "reference";

Tensor pruning_reference(const std::string& name) {
  auto t = read_npy((kPrunedReference / (name + ".npy")).string());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t.has_value() ? std::move(t).value() : Tensor();
}

ir::Model load(const std::string& file) {
  auto model = ir::import_onnx_file((kPrunedPackage / "onnx" / file).string());
  EXPECT_TRUE(model.has_value()) << model.status().to_string();
  return model.has_value() ? std::move(model).value() : ir::Model();
}

/// Runs `model` (saved to a temporary file) on one input; returns the outputs by name.
std::map<std::string, Tensor> run_model(const ir::Model& model, const std::string& file, const std::string& input,
                                        const Tensor& value, bool optimize = true) {
  const std::string path = (testing::temp_dir("head_pruning") / file).string();
  const Status saved = ir::export_onnx_file(model, path);
  EXPECT_TRUE(saved.is_ok()) << saved.to_string();
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = optimize;
  auto inf = Inferencer::create(config);
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  if (!inf.has_value()) return {};
  auto outs = (*inf)->run({{input, value}});
  EXPECT_TRUE(outs.has_value()) << outs.status().to_string();
  if (!outs.has_value()) return {};
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < (*inf)->outputs().size(); ++i) named[(*inf)->outputs()[i].name] = (*outs)[i];
  return named;
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

passes::HeadPruningOptions heads(std::map<int, std::vector<int>> remove) { return {std::move(remove)}; }

TEST(HeadPruning, FindsTheAttentionLayersOfTinyClip) {
  ir::Model vision = load("vision_model.onnx");
  auto layers = passes::find_attention_layers(vision);
  ASSERT_TRUE(layers.has_value()) << layers.status().to_string();
  ASSERT_EQ(layers->size(), 4u);
  for (const auto& l : *layers) {
    EXPECT_EQ(l.heads, 4);
    EXPECT_EQ(l.head_dim, 16);
    EXPECT_EQ(l.hidden, 64);
    EXPECT_NE(l.softmax.find("layers." + std::to_string(l.layer) + "/"), std::string::npos) << l.softmax;
    EXPECT_NE(l.out_matmul.find("out_proj"), std::string::npos) << l.out_matmul;
  }
  ir::Model text = load("text_model.onnx");
  auto text_layers = passes::find_attention_layers(text);
  ASSERT_TRUE(text_layers.has_value()) << text_layers.status().to_string();
  EXPECT_EQ(text_layers->size(), 3u);
}

TEST(HeadPruning, VisionMatchesPyTorchWithHeadsMasked) {
  ir::Model model = load("vision_model.onnx");
  auto report = passes::prune_attention_heads(model, heads({{0, {1}}, {2, {3, 0, 3}}}));
  ASSERT_TRUE(report.has_value()) << report.status().to_string();
  EXPECT_EQ(report->heads_before, 16);
  EXPECT_EQ(report->heads_after, 13);
  EXPECT_EQ(report->pruned[2].removed, (std::vector<int>{0, 3}));
  EXPECT_EQ(report->pruned[2].kept, (std::vector<int>{1, 2}));
  EXPECT_EQ(report->pruned[0].shapes_rewritten, 4);  // three head splits and the merge
  // 3 heads × (q, k, v columns + out rows: 4 × 64 × 16 floats + 3 × 16 bias floats) × 4 bytes;
  // the shape constants change by a few int64s.
  EXPECT_NEAR(report->weight_bytes_before - report->weight_bytes_after, 3 * (4 * 64 * 16 + 3 * 16) * 4, 64);
  for (bool optimize : {true, false}) {
    auto out = run_model(model, "vision.onnx", "pixel_values", pruning_reference("pixel_values"), optimize);
    EXPECT_LT(max_abs_diff(out["image_embeds"], pruning_reference("image_embeds_heads_pruned")), 1e-5) << optimize;
    EXPECT_LT(max_abs_diff(out["last_hidden_state"], pruning_reference("vision_last_hidden_state_heads_pruned")), 1e-5);
  }
}

TEST(HeadPruning, TextMatchesPyTorchWithHeadsMasked) {
  ir::Model model = load("text_model.onnx");
  ASSERT_TRUE(passes::prune_attention_heads(model, heads({{1, {2}}})).has_value());
  auto out = run_model(model, "text.onnx", "input_ids", pruning_reference("input_ids"));
  EXPECT_LT(max_abs_diff(out["text_embeds"], pruning_reference("text_embeds_heads_pruned")), 1e-5);
  EXPECT_LT(max_abs_diff(out["last_hidden_state"], pruning_reference("text_last_hidden_state_heads_pruned")), 1e-5);
}

// Pruning a pruned model again (its shapes now hold constants and cloned Concats) composes.
TEST(HeadPruning, PruningTwiceComposes) {
  ir::Model model = load("vision_model.onnx");
  ASSERT_TRUE(passes::prune_attention_heads(model, heads({{2, {0, 3}}})).has_value());
  auto again = passes::prune_attention_heads(model, heads({{0, {1}}}));
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  EXPECT_EQ(again->pruned[2].heads, 2);
  auto out = run_model(model, "twice.onnx", "pixel_values", pruning_reference("pixel_values"));
  EXPECT_LT(max_abs_diff(out["image_embeds"], pruning_reference("image_embeds_heads_pruned")), 1e-5);
}

TEST(HeadPruning, NothingRemovedLeavesTheOutputsAlone) {
  ir::Model model = load("vision_model.onnx");
  auto report = passes::prune_attention_heads(model, {});
  ASSERT_TRUE(report.has_value()) << report.status().to_string();
  EXPECT_EQ(report->heads_after, 16);
  auto out = run_model(model, "none.onnx", "pixel_values", pruning_reference("pixel_values"));
  EXPECT_LT(max_abs_diff(out["image_embeds"], pruning_reference("image_embeds")), 1e-5);
}

TEST(HeadPruning, BadHeadsAreClearErrors) {
  ir::Model model = load("vision_model.onnx");
  auto head = passes::prune_attention_heads(model, heads({{1, {4}}}));
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(head.status().message().find("has 4 heads; head 4 is outside 0..3"), std::string::npos)
      << head.status().message();
  auto all = passes::prune_attention_heads(model, heads({{3, {0, 1, 2, 3}}}));
  ASSERT_FALSE(all.has_value());
  EXPECT_NE(all.status().message().find("layer 3 would lose all its 4 heads"), std::string::npos)
      << all.status().message();
  auto layer = passes::prune_attention_heads(model, heads({{4, {0}}}));
  ASSERT_FALSE(layer.has_value());
  EXPECT_NE(layer.status().message().find("4 attention layers (Softmax nodes); layer 4 is outside 0..3"),
            std::string::npos)
      << layer.status().message();
  // Nothing was removed by the refused calls.
  auto out = run_model(model, "refused.onnx", "pixel_values", pruning_reference("pixel_values"));
  EXPECT_LT(max_abs_diff(out["image_embeds"], pruning_reference("image_embeds")), 1e-5);
}

TEST(HeadPruning, ParsesHeadLists) {
  auto ok = passes::parse_head_list("0:1,2:0,2:3");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->remove.at(0), (std::vector<int>{1}));
  EXPECT_EQ(ok->remove.at(2), (std::vector<int>{0, 3}));
  for (const char* bad : {"", "0", "0:", ":1", "0:1,", "a:1", "0:-1", "0:1:2"}) {
    auto r = passes::parse_head_list(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.status().message().find("should be LAYER:HEAD"), std::string::npos) << r.status().message();
  }
}

TEST(HeadPruning, ModelsWithoutSelfAttentionAreRefused) {
  const int f = onnx::TensorProto::FLOAT;
  testing::ModelBuilder none;  // no Softmax at all
  none.input("x", f, {1, 4}).output("y", f, {1, 4});
  none.node("Relu", {"x"}, {"y"});
  auto a = ir::import_onnx_file(none.save(testing::temp_dir("heads_none") / "relu.onnx"));
  ASSERT_TRUE(a.has_value());
  auto r = passes::prune_attention_heads(*a, heads({{0, {0}}}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("no attention layers"), std::string::npos) << r.status().message();

  testing::ModelBuilder classifier;  // a Softmax over a Linear layer's logits
  classifier.input("x", f, {1, 4}).output("y", f, {1, 2});
  classifier.initializer_floats("w", {4, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
  classifier.node("MatMul", {"x", "w"}, {"logits"});
  classifier.node("Softmax", {"logits"}, {"y"}, "probs");
  auto b = ir::import_onnx_file(classifier.save(testing::temp_dir("heads_cls") / "cls.onnx"));
  ASSERT_TRUE(b.has_value());
  auto s = passes::prune_attention_heads(*b, heads({{0, {0}}}));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(s.status().message().find("layer 0 (Softmax 'probs')"), std::string::npos) << s.status().message();
}

TEST(HeadScoring, MatchesPyTorchOutputContributions) {
  ir::Model model = load("vision_model.onnx");
  const std::string pixels = (kPrunedReference / "pixel_values.npy").string();
  quant::FeedSource source = [](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(s.path));
    return std::vector<quant::Feed>{{{"pixel_values", std::move(t)}}};
  };
  quant::CalibrateOptions options;
  options.threads = 1;
  auto scores = quant::score_heads(model, {{pixels, "default"}}, source, options);
  ASSERT_TRUE(scores.has_value()) << scores.status().to_string();
  const Tensor want = pruning_reference("vision_head_scores");  // float64 [4, 4]
  ASSERT_EQ(want.shape(), (Shape{4, 4}));
  ASSERT_EQ(scores->scores.size(), 4u);
  for (int l = 0; l < 4; ++l) {
    for (int h = 0; h < 4; ++h) {
      const double w = want.data<double>()[l * 4 + h];
      EXPECT_NEAR(scores->scores[l][h], w, 1e-5 * w) << "layer " << l << " head " << h;
    }
  }
  EXPECT_EQ(scores->runs, 1);
}

// Hand-computed: scores per layer; per-layer keep 0.5 keeps the 2 best of each layer; global keep
// 0.5 keeps 4 of 8: the best of each layer (L0 h1 = 5, L1 h0 = 2), then the best others (L0 h2 =
// 4, L0 h0 = 3; L1's 1.5 loses). Ties keep the lower index.
TEST(HeadScoring, SelectsTheLowestScoringHeads) {
  quant::HeadScores s;
  s.scores = {{3, 5, 4, 1}, {2, 1, 1, 1.5}};
  auto per_layer = quant::select_heads(s, 0.5, quant::HeadRanking::kPerLayer);
  ASSERT_TRUE(per_layer.has_value());
  EXPECT_EQ(per_layer->remove.at(0), (std::vector<int>{0, 3}));
  EXPECT_EQ(per_layer->remove.at(1), (std::vector<int>{1, 2}));
  auto global = quant::select_heads(s, 0.5, quant::HeadRanking::kGlobal);
  ASSERT_TRUE(global.has_value());
  EXPECT_EQ(global->remove.at(0), (std::vector<int>{3}));
  EXPECT_EQ(global->remove.at(1), (std::vector<int>{1, 2, 3}));
  auto tiny = quant::select_heads(s, 0.01, quant::HeadRanking::kGlobal);  // at least one head per layer
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->remove.at(0).size(), 3u);
  EXPECT_EQ(tiny->remove.at(1).size(), 3u);
  auto all = quant::select_heads(s, 1.0, quant::HeadRanking::kPerLayer);
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->remove.empty());
  EXPECT_FALSE(quant::select_heads(s, 0.0, quant::HeadRanking::kPerLayer).has_value());
  EXPECT_FALSE(quant::select_heads(s, 1.5, quant::HeadRanking::kGlobal).has_value());
}

}  // namespace head_pruning_test
}  // namespace edgemm
