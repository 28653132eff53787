// Parity of edgemm with PyTorch on the tiny CLIP package (tests/fixtures/clip_tiny, made by
// tools/fixtures/make_clip_fixture.py; transformers.js runs the same files in the ctest
// clip_check): image_embeds and text_embeds (and last_hidden_state; text_embeds also of real
// prompts tokenized by transformers.js) within 1e-4 of PyTorch's, cosine > 0.99999 per row, with
// graph optimizations on and off and with the input shapes pinned; dynamic batch and sequence.
// With precision "bf16" (bfloat16 MatMul products where the CPU has AVX512_BF16) or "fp16" (half-
// precision Conv and MatMul on Arm with FP16 arithmetic) image_embeds stay within cosine 0.999 of
// PyTorch's float32 ones, and the nodes name their bf16 / f16 kernels where the CPU runs them.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/kernel.h"
#include "source_dir.h"

namespace edgemm {
namespace clip_fixture_test {  // named for the file: unity batches merge anonymous namespaces

using Inputs = std::vector<std::pair<std::string, Tensor>>;

/// The committed package, or another one made by the same generator (EDGEMM_CLIP_PACKAGE, e.g. the
/// ViT-B/32-shaped export of `make_clip_fixture.py --shape vit-b32`).
std::filesystem::path package() {
  const char* other = std::getenv("EDGEMM_CLIP_PACKAGE");
  return other != nullptr && *other != 0
             ? std::filesystem::path(other)
             : std::filesystem::path(edgemm::testing::source_dir()) / "tests/fixtures/clip_tiny";
}

Tensor clip_fixture_reference(const std::string& name) {
  auto t = read_npy((package() / "reference" / (name + ".npy")).string());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t.has_value() ? std::move(t).value() : Tensor();
}

/// How the graph is loaded: passes off, passes on (the default), or passes on with the input shape
/// pinned, so that the Shape → Gather → Concat → Reshape subgraphs fold to constants.
enum class Load { kNotOptimized, kOptimized, kPinned };

std::string tag(Load mode) {
  return mode == Load::kNotOptimized ? " (not optimized)" : mode == Load::kOptimized ? " (optimized)" : " (pinned)";
}

std::unique_ptr<Inferencer> load(const std::string& model, Load mode, const std::string& input = "",
                                 const Shape& pinned = {}) {
  InferencerConfig config;
  config.model_path = (package() / "onnx" / model).string();
  config.threads = 1;
  config.optimize = mode != Load::kNotOptimized;
  if (mode == Load::kPinned) config.fixed_input_shapes[input] = pinned;
  auto inf = Inferencer::create(config);
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  return inf.has_value() ? std::move(inf).value() : nullptr;
}

/// Rows `rows` of `t` along axis 0, and along axis 1 only the first `cols` entries (all when -1).
template <typename T>
Tensor slice(const Tensor& t, const std::vector<int64_t>& rows, int64_t cols = -1) {
  Shape shape = t.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  if (cols >= 0) shape[1] = cols;
  auto out = Tensor::create(t.dtype(), shape);
  EXPECT_TRUE(out.has_value());
  const int64_t inner = t.rank() > 2 ? t.element_count() / (t.dim(0) * t.dim(1)) : 1;
  const int64_t row_in = t.element_count() / t.dim(0), row_out = out->element_count() / shape[0];
  for (size_t r = 0; r < rows.size(); ++r) {
    const T* src = t.data<T>() + rows[r] * row_in;
    T* dst = out->template data<T>() + static_cast<int64_t>(r) * row_out;
    if (t.rank() == 1) {
      *dst = *src;
    } else {
      std::memcpy(dst, src, static_cast<size_t>(shape[1] * inner) * sizeof(T));
    }
  }
  return *out;
}

/// Largest |got - want| and the smallest per-row (axis 0) cosine similarity.
void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), DataType::kFloat32) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what << ": " << shape_to_string(got.shape()) << " vs "
                                       << shape_to_string(want.shape());
  const float* a = got.data<float>();
  const float* b = want.data<float>();
  const int64_t rows = got.dim(0), row = got.element_count() / rows;
  double max_diff = 0, min_cos = 1;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t i = r * row; i < (r + 1) * row; ++i) {
      max_diff = std::max(max_diff, std::isnan(a[i]) ? INFINITY : std::fabs(double(a[i]) - b[i]));
      dot += double(a[i]) * b[i];
      na += double(a[i]) * a[i];
      nb += double(b[i]) * b[i];
    }
    min_cos = std::min(min_cos, dot / std::sqrt(na * nb));
  }
  EXPECT_LE(max_diff, 1e-4) << what;
  EXPECT_GT(min_cos, 0.99999) << what;
  std::cout << "[ clip ] " << what << ": max abs diff " << max_diff << ", min cosine " << min_cos << "\n";
}

class ClipFixture : public ::testing::TestWithParam<Load> {};

TEST_P(ClipFixture, VisionMatchesPyTorch) {
  const Load mode = GetParam();
  const Tensor pixels = clip_fixture_reference("pixel_values");
  auto inf = load("vision_model.onnx", mode, "pixel_values", pixels.shape());
  ASSERT_NE(inf, nullptr);
  auto out = inf->run({{"pixel_values", pixels}}, {"image_embeds", "last_hidden_state"});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_close((*out)[0], clip_fixture_reference("image_embeds"), "image_embeds" + tag(mode));
  expect_close((*out)[1], clip_fixture_reference("vision_last_hidden_state"), "vision last_hidden_state" + tag(mode));
  // The shapes below differ from the pinned one, and from those of a --static export.
  if (mode == Load::kPinned || inf->inputs()[0].shape[0].is_static()) return;
  // Batch 1 (the batch axis is symbolic): the second image alone.
  auto one = inf->run({{"pixel_values", slice<float>(pixels, {1})}}, {"image_embeds"});
  ASSERT_TRUE(one.has_value()) << one.status().to_string();
  expect_close((*one)[0], slice<float>(clip_fixture_reference("image_embeds"), {1}),
               "image_embeds batch 1" + tag(mode));
}

TEST_P(ClipFixture, TextMatchesPyTorch) {
  const Load mode = GetParam();
  const Tensor ids = clip_fixture_reference("input_ids");
  ASSERT_EQ(ids.shape(), (Shape{3, 12}));
  auto inf = load("text_model.onnx", mode, "input_ids", ids.shape());
  ASSERT_NE(inf, nullptr);
  auto out = inf->run({{"input_ids", ids}}, {"text_embeds", "last_hidden_state"});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_close((*out)[0], clip_fixture_reference("text_embeds"), "text_embeds" + tag(mode));
  expect_close((*out)[1], clip_fixture_reference("text_last_hidden_state"), "text last_hidden_state" + tag(mode));
  // The shapes below differ from the pinned one, and from those of a --static export.
  if (mode == Load::kPinned || inf->inputs()[0].shape[0].is_static()) return;
  // Rows 0 and 2 end (EOS) at positions 4 and 7: cut to 8 tokens, their embeddings are unchanged
  // (the causal mask hides what follows the EOS), so a shorter sequence axis must give the same.
  auto cut = inf->run({{"input_ids", slice<int64_t>(ids, {0, 2}, 8)}}, {"text_embeds"});
  ASSERT_TRUE(cut.has_value()) << cut.status().to_string();
  expect_close((*cut)[0], slice<float>(clip_fixture_reference("text_embeds"), {0, 2}),
               "text_embeds [2, 8]" + tag(mode));
  // Real prompts, tokenized by transformers.js with the package's tokenizer.json (prompts.json).
  if (!std::filesystem::exists(package() / "reference/prompt_input_ids.npy")) return;
  auto prompts = inf->run({{"input_ids", clip_fixture_reference("prompt_input_ids")}}, {"text_embeds"});
  ASSERT_TRUE(prompts.has_value()) << prompts.status().to_string();
  expect_close((*prompts)[0], clip_fixture_reference("prompt_text_embeds"), "prompt text_embeds" + tag(mode));
}

/// The vision encoder at `precision` stays within cosine 0.999 of PyTorch's float32 image_embeds,
/// and nodes run kernels named `kernel_prefix`... exactly where `available`.
void expect_vision_close_at(const std::string& precision, const std::string& kernel_prefix, bool available) {
  const Tensor pixels = clip_fixture_reference("pixel_values");
  InferencerConfig config;
  config.model_path = (package() / "onnx/vision_model.onnx").string();
  config.threads = 1;
  config.precision = precision;
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto out = (*inf)->run_profiled({{"pixel_values", pixels}}, {"image_embeds"});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const Tensor& got = out->outputs[0];
  const Tensor want = clip_fixture_reference("image_embeds");
  ASSERT_EQ(got.shape(), want.shape());
  const int64_t rows = got.dim(0), row = got.element_count() / rows;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t i = r * row; i < (r + 1) * row; ++i) {
      dot += double(got.data<float>()[i]) * want.data<float>()[i];
      na += double(got.data<float>()[i]) * got.data<float>()[i];
      nb += double(want.data<float>()[i]) * want.data<float>()[i];
    }
    EXPECT_GT(dot / std::sqrt(na * nb), 0.999) << "image " << r;
    std::cout << "[ clip ] image_embeds in " << precision << ", image " << r << ": cosine " << dot / std::sqrt(na * nb)
              << "\n";
  }
  int reduced_nodes = 0;
  for (const NodeProfile& node : out->nodes) reduced_nodes += node.kernel.rfind(kernel_prefix, 0) == 0;
  if (available) {
    EXPECT_GT(reduced_nodes, 0);
  } else {
    EXPECT_EQ(reduced_nodes, 0);
  }
}

TEST(ClipFixtureBfloat16, VisionStaysCloseToPyTorch) {
  expect_vision_close_at("bf16", "bf16_", kernels::matmul_panels_available(kernels::PanelFormat::kBfloat16));
}

TEST(ClipFixtureFloat16, VisionStaysCloseToPyTorch) {
  expect_vision_close_at("fp16", "f16_", kernels::fp16_available());
}

INSTANTIATE_TEST_SUITE_P(Load, ClipFixture, ::testing::Values(Load::kNotOptimized, Load::kOptimized, Load::kPinned),
                         [](const ::testing::TestParamInfo<Load>& info) {
                           return info.param == Load::kNotOptimized ? "NotOptimized"
                                  : info.param == Load::kOptimized  ? "Optimized"
                                                                    : "Pinned";
                         });

}  // namespace clip_fixture_test
}  // namespace edgemm
