// The KV cache of vision-language generation (docs/vlm.md "KV cache"): com.edgemm KvAttention
// against plain attention computed here in double, and a decoder bound by passes::bind_kv_cache
// against PyTorch's logits of the tiny fixture (tests/fixtures/vlm_tiny, tools/fixtures/
// make_vlm_fixture.py) — after the prefill, after one decode step, and token by token against one
// prefill over the whole sequence — in both decoder forms, with the KV bytes per step flat.

#include "edgemm/pipelines/vlm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "ir/onnx_export.h"
#include "kernels/cpu/onednn.h"
#include "passes/kv_cache.h"
#include "pipelines/image.h"
#include "pipelines/vlm/decoder.h"
#include "pipelines/vlm/preprocess.h"
#include "runtime/single_node.h"
#include "session/rewrite_load.h"
#include "source_dir.h"

namespace edgemm {
namespace vlm_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;

Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = Tensor::create(DataType::kFloat32, shape).value();
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

/// softmax(scale · q·kᵀ + mask) · v in double, with keys/values = the cache's first P rows then
/// the new rows, query head h reading key/value head h / (Hq / Hkv).
std::vector<double> plain_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    const std::vector<float>& cache_k, const std::vector<float>& cache_v, int64_t past,
                                    int64_t capacity, float scale) {
  const int64_t hq = q.dim(1), s_len = q.dim(2), d = q.dim(3), hkv = k.dim(1), t_len = past + s_len;
  std::vector<double> y(static_cast<size_t>(hq * s_len * d), 0.0);
  auto key = [&](int64_t g, int64_t t, int64_t i, bool value) -> double {
    if (t < past) return (value ? cache_v : cache_k)[(g * capacity + t) * d + i];
    return (value ? v : k).data<float>()[(g * s_len + t - past) * d + i];
  };
  for (int64_t h = 0; h < hq; ++h) {
    const int64_t g = h / (hq / hkv);
    for (int64_t s = 0; s < s_len; ++s) {
      std::vector<double> w(static_cast<size_t>(t_len));
      double top = -INFINITY, sum = 0;
      for (int64_t t = 0; t < t_len; ++t) {
        double dot = 0;
        for (int64_t i = 0; i < d; ++i) dot += q.data<float>()[(h * s_len + s) * d + i] * key(g, t, i, false);
        w[t] = scale * dot + mask.data<float>()[s * t_len + t];
        top = std::max(top, w[t]);
      }
      for (double& x : w) sum += (x = std::exp(x - top));
      for (int64_t t = 0; t < t_len; ++t) {
        for (int64_t i = 0; i < d; ++i) y[(h * s_len + s) * d + i] += w[t] / sum * key(g, t, i, true);
      }
    }
  }
  return y;
}

struct KvCase {
  int64_t s_len, past, d;
  int threads;
};

class KvAttention : public ::testing::TestWithParam<KvCase> {};

// One new position (decode: each cache row read once for both query heads of a KV head; at 601
// positions the two KV heads go to two threads), three (still the decode path: 6 query rows per KV
// head), twelve (24 rows: the batched oneDNN matmuls), each also on the reference path; head
// sizes off the vector width, and the AVX-512 decode loops' cases: 16 keys at a time with a
// partial last group, 64 output columns at a time, rows in tiles of 4 with a partial last tile.
INSTANTIATE_TEST_SUITE_P(Steps, KvAttention,
                         ::testing::Values(KvCase{1, 37, 24, 1}, KvCase{1, 600, 64, 2}, KvCase{3, 5, 8, 2},
                                           KvCase{12, 20, 16, 2}, KvCase{3, 40, 128, 1}, KvCase{1, 20, 32, 1}));

TEST_P(KvAttention, AppendsInPlaceAndMatchesPlainAttention) {
  const int64_t hq = 4, hkv = 2, s_len = GetParam().s_len, past = GetParam().past, d = GetParam().d,
                capacity = past + s_len + 4, t_len = past + s_len;
  const float scale = 0.35f;
  for (bool onednn : {true, false}) {
    kernels::onednn::ScopedEnabled mode(onednn);
    std::mt19937 rng(7);
    const Tensor q = random_tensor({1, hq, s_len, d}, rng), k = random_tensor({1, hkv, s_len, d}, rng),
                 v = random_tensor({1, hkv, s_len, d}, rng);
    Tensor mask = Tensor::create(DataType::kFloat32, {1, 1, s_len, t_len}).value();
    for (int64_t s = 0; s < s_len; ++s) {
      for (int64_t t = 0; t < t_len; ++t) mask.data<float>()[s * t_len + t] = t > past + s ? -1e9f : 0.0f;
    }
    Tensor cache_k = random_tensor({1, hkv, capacity, d}, rng), cache_v = random_tensor({1, hkv, capacity, d}, rng);
    const std::vector<float> before_k(cache_k.data<float>(), cache_k.data<float>() + cache_k.element_count());
    const std::vector<float> before_v(cache_v.data<float>(), cache_v.data<float>() + cache_v.element_count());
    ir::Node node;
    node.name = "attn";
    node.domain = ir::kEdgemmDomain;
    node.op_type = "KvAttention";
    node.inputs = {"q", "k", "v", "mask", "past", "cache_k", "cache_v"};
    node.outputs = {"y"};
    node.attributes["scale"].kind = ir::Attribute::Kind::kFloat;
    node.attributes["scale"].f = scale;
    const Tensor past_view = Tensor::create(DataType::kFloat32, {1, hkv, past, d}).value();
    auto out = runtime::run_node(node, {q, k, v, mask, past_view, cache_k, cache_v}, 1, GetParam().threads);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const std::vector<double> want = plain_attention(q, k, v, mask, before_k, before_v, past, capacity, scale);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(want[i] - (*out)[0].data<float>()[i]));
    EXPECT_LE(worst, 2e-6) << (onednn ? "oneDNN" : "reference");
    for (int64_t g = 0; g < hkv; ++g) {
      for (int64_t t = 0; t < capacity; ++t) {
        for (int64_t i = 0; i < d; ++i) {
          const int64_t at = (g * capacity + t) * d + i;
          const bool fresh = t >= past && t < t_len;
          EXPECT_EQ(cache_k.data<float>()[at], fresh ? k.data<float>()[(g * s_len + t - past) * d + i] : before_k[at]);
          EXPECT_EQ(cache_v.data<float>()[at], fresh ? v.data<float>()[(g * s_len + t - past) * d + i] : before_v[at]);
        }
      }
    }
    const Tensor small = Tensor::create(DataType::kFloat32, {1, hkv, t_len - 1, d}).value();
    auto full = runtime::run_node(node, {q, k, v, mask, past_view, small, small}, 1, 1);
    ASSERT_FALSE(full.has_value());
    EXPECT_NE(full.status().message().find("the KV cache holds " + std::to_string(t_len - 1) + " positions"),
              std::string::npos)
        << full.status().to_string();
  }
}

fs::path fixture(const std::string& form) { return fs::path(edgemm::testing::source_dir()) / "tests/fixtures" / form; }

Tensor vlm_reference(const std::string& name) {
  auto t = read_npy((fixture("vlm_tiny") / "reference" / (name + ".npy")).string());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t.has_value() ? std::move(t).value() : Tensor();
}

/// Rows [begin, end) of inputs_embeds [1, S, hidden].
Tensor rows(const Tensor& embeds, int64_t begin, int64_t end) {
  const int64_t hidden = embeds.dim(2);
  Tensor t = Tensor::create(DataType::kFloat32, {1, end - begin, hidden}).value();
  std::copy(embeds.data<float>() + begin * hidden, embeds.data<float>() + end * hidden, t.data<float>());
  return t;
}

double max_diff(const std::vector<float>& got, const float* want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
  return worst;
}

std::unique_ptr<Inferencer> load_decoder(const std::string& form, bool bind) {
  InferencerConfig config;
  config.model_path = (fixture(form) / "onnx/decoder_model_merged.onnx").string();
  config.threads = 1;
  auto inf = bind ? session::create_with_rewrite(config,
                                                 [](ir::Model& model) -> Status {
                                                   auto report = passes::bind_kv_cache(model, 200);
                                                   return report.has_value() ? Status::ok() : report.status();
                                                 })
                  : Inferencer::create(config);
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  return inf.has_value() ? std::move(inf).value() : nullptr;
}

class VlmDecoder : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(VlmDecoder, MatchesPyTorchAndDecodesAsOnePrefill) {
  const auto& [form, bind] = GetParam();
  auto inf = load_decoder(form, bind);
  ASSERT_NE(inf, nullptr);
  auto session = vlm::DecoderSession::create(*inf, form, {});
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ(session->bound_cache(), bind);
  const Tensor embeds = vlm_reference("p0_inputs_embeds"), logits = vlm_reference("p0_logits");
  const int64_t prompt = embeds.dim(1), vocab = logits.dim(2);
  auto last = session->step(embeds);
  ASSERT_TRUE(last.has_value()) << last.status().to_string();
  EXPECT_LE(max_diff(*last, logits.data<float>() + (prompt - 1) * vocab), 1e-4) << "prefill vs PyTorch";
  auto next = session->step(vlm_reference("decode_inputs_embeds"));
  ASSERT_TRUE(next.has_value()) << next.status().to_string();
  EXPECT_LE(max_diff(*next, vlm_reference("decode_logits").data<float>()), 1e-4) << "decode step vs PyTorch";

  // Token by token after a shorter prefill: the same last logits as one prefill.
  session->reset();
  ASSERT_TRUE(session->step(rows(embeds, 0, prompt - 12)).has_value());
  std::vector<int64_t> bytes;
  std::vector<float> one_by_one;
  for (int64_t i = prompt - 12; i < prompt; ++i) {
    auto step = session->step(rows(embeds, i, i + 1));
    ASSERT_TRUE(step.has_value()) << step.status().to_string();
    one_by_one = *step;
    bytes.push_back(session->last_step_kv_bytes_copied());
  }
  EXPECT_EQ(session->past_length(), prompt);
  EXPECT_LE(max_diff(one_by_one, logits.data<float>() + (prompt - 1) * vocab), 1e-4) << "token by token";
  const int64_t per_position = 2 * 3 * 2 * 16 * 4;  // key + value × layers × kv heads × head_dim × float
  if (bind) {
    for (int64_t b : bytes) EXPECT_EQ(b, per_position);  // flat: only the new position
  } else {
    EXPECT_EQ(bytes.back() - bytes.front(), per_position * 11);  // the whole cache, growing
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, VlmDecoder,
                         ::testing::Combine(::testing::Values("vlm_tiny", "vlm_tiny_if"), ::testing::Bool()));

TEST(VlmDecoder, BoundCacheRefusesToOverflow) {
  InferencerConfig config;
  config.model_path = (fixture("vlm_tiny") / "onnx/decoder_model_merged.onnx").string();
  config.threads = 1;
  auto inf = session::create_with_rewrite(
      config, [](ir::Model& model) -> Status { return passes::bind_kv_cache(model, 100).status(); });
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto session = vlm::DecoderSession::create(**inf, "tiny", {});
  ASSERT_TRUE(session.has_value());
  auto step = session->step(vlm_reference("p0_inputs_embeds"));
  ASSERT_FALSE(step.has_value());
  EXPECT_NE(step.status().message().find("more than the 100 of the KV cache"), std::string::npos)
      << step.status().to_string();
}

TEST(VlmDecoder, DecoderWithoutKvInputsIsRefused) {
  // The embedding model as "decoder": no inputs_embeds; and a graph with inputs_embeds only.
  InferencerConfig config;
  config.model_path = (fixture("vlm_tiny") / "onnx/embed_tokens.onnx").string();
  auto embed = Inferencer::create(config);
  ASSERT_TRUE(embed.has_value());
  auto s = vlm::DecoderSession::create(**embed, "embed_tokens.onnx", {});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("no float32 input 'inputs_embeds'"), std::string::npos) << s.status().to_string();

  ir::Model model;
  model.ir_version = 8;
  model.opsets[""] = 17;
  model.graph.inputs.push_back({"inputs_embeds", DataType::kFloat32, {Dim{1, ""}, Dim{-1, "s"}, Dim{64, ""}}, true});
  model.graph.outputs.push_back({"logits", DataType::kFloat32, {Dim{1, ""}, Dim{-1, "s"}, Dim{64, ""}}, true});
  ir::Node identity;
  identity.name = "id";
  identity.op_type = "Identity";
  identity.inputs = {"inputs_embeds"};
  identity.outputs = {"logits"};
  model.graph.nodes.push_back(identity);
  const fs::path file = fs::temp_directory_path() / "edgemm_vlm_no_kv.onnx";
  ASSERT_TRUE(ir::export_onnx_file(model, file.string()).is_ok());
  config.model_path = file.string();
  auto no_kv = Inferencer::create(config);
  ASSERT_TRUE(no_kv.has_value()) << no_kv.status().to_string();
  s = vlm::DecoderSession::create(**no_kv, "no_kv.onnx", {});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("decoder without KV inputs"), std::string::npos) << s.status().to_string();
  fs::remove(file);
}

}  // namespace vlm_test
}  // namespace edgemm

namespace edgemm {
namespace vlm_test {  // named for the file: unity batches merge anonymous namespaces

// edgemm's Idefics3 preprocessing (resize by `size` with Lanczos-3, rescale, normalize, frames)
// against transformers.js' processor on the real photos (refs made by ctest vlm_processor_refs).
TEST(VlmPreprocessOracle, FramesMatchTransformersJs) {
  const char* refs = std::getenv("EDGEMM_VLM_PROCESSOR_REFS");
  if (refs == nullptr || *refs == 0) {
    GTEST_SKIP() << "EDGEMM_VLM_PROCESSOR_REFS is not set (ctest -R vlm_processor_oracle runs the oracle)";
  }
  auto model = vlm::VlmModel::load(fixture("vlm_tiny").string());
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  int images = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(edgemm::testing::source_dir()) / "data/photos")) {
    const fs::path photo = entry.path();
    // rocket.jpg carries an Adobe RGB ICC profile that sharp converts and edgemm ignores (docs/clip.md).
    if (photo.extension() != ".png") continue;
    auto want = read_npy((fs::path(refs) / (photo.stem().string() + ".npy")).string());
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    auto bgr = pipelines::read_image_bgr(photo.string(), pipelines::Alpha::kDrop);
    ASSERT_TRUE(bgr.has_value());
    cv::Mat rgb;
    cv::cvtColor(*bgr, rgb, cv::COLOR_BGR2RGB);
    auto got = vlm::preprocess_image(rgb, model->config());
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    ASSERT_EQ(got->pixels.shape(), want->shape()) << photo;
    double worst = 0, sum = 0;
    for (int64_t i = 0; i < want->element_count(); ++i) {
      const double d = std::fabs(static_cast<double>(got->pixels.data<float>()[i]) - want->data<float>()[i]);
      worst = std::max(worst, d);
      sum += d;
    }
    // One 8-bit level is 2/255 after normalizing with std 0.5. Our Lanczos-3 is PIL's; sharp runs
    // libvips' reduce, which differs by about one level on average (measured 0.4-1.1 levels mean,
    // up to 11 at edges; docs/vlm.md "Preprocessing"). The bounds catch a wrong resize or split.
    EXPECT_LE(worst, 13 * 2.0 / 255) << photo;
    EXPECT_LE(sum / want->element_count(), 1.3 * 2.0 / 255) << photo;
    std::cout << "[ vlm ] " << photo.filename().string() << ": frames " << want->dim(0) << ", max abs diff " << worst
              << ", mean " << sum / want->element_count() << "\n";
    ++images;
  }
  EXPECT_GE(images, 5);
}

// An in-memory image (RGB, as numpy gives it) generates what its file does, and a chat session's
// conversation holds the typed turns the chat template renders.
TEST(VlmModelApi, ImageViewsAndTypedMessages) {
  auto model = vlm::VlmModel::load(fixture("vlm_tiny").string());
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const std::string photo = (fs::path(edgemm::testing::source_dir()) / "data/photos/chelsea.png").string();
  auto prompt = model->chat_prompt("What is this?", 1);
  ASSERT_TRUE(prompt.has_value()) << prompt.status().to_string();
  vlm::GenerateOptions options;
  options.max_new_tokens = 4;
  auto from_file = model->generate(*prompt, std::vector<std::string>{photo}, options);
  ASSERT_TRUE(from_file.has_value()) << from_file.status().to_string();

  auto bgr = pipelines::read_image_bgr(photo);
  ASSERT_TRUE(bgr.has_value());
  cv::Mat rgb;
  cv::cvtColor(*bgr, rgb, cv::COLOR_BGR2RGB);
  const ImageView view{rgb.data, rgb.cols, rgb.rows, 3, static_cast<int64_t>(rgb.step[0]), ChannelOrder::kRgb};
  auto from_view = model->generate(*prompt, std::vector<ImageView>{view}, options);
  ASSERT_TRUE(from_view.has_value()) << from_view.status().to_string();
  EXPECT_EQ(from_view->ids, from_file->ids);
  auto bad = model->generate(*prompt, std::vector<ImageView>{ImageView{nullptr, 4, 4}}, options);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);

  vlm::ChatSession chat(*model);
  auto turn = chat.send("What is this?", std::vector<ImageView>{view}, options);
  ASSERT_TRUE(turn.has_value()) << turn.status().to_string();
  EXPECT_EQ(turn->ids, from_file->ids);
  ASSERT_EQ(chat.messages().size(), 2u);
  const vlm::ChatMessage& user = chat.messages()[0];
  EXPECT_EQ(user.role, "user");
  ASSERT_EQ(user.content.size(), 2u);
  EXPECT_EQ(user.content[0].type, vlm::ChatPart::Type::kImage);
  EXPECT_EQ(user.content[1].text, "What is this?");
  EXPECT_EQ(chat.messages()[1].role, "assistant");
  EXPECT_EQ(chat.messages()[1].content.at(0).text, turn->text);
  EXPECT_EQ(*model->chat_prompt({user}), *prompt);
}

}  // namespace vlm_test
}  // namespace edgemm
