// The CLIP pipeline (include/edgemm/pipelines/clip.h) on the tiny package tests/fixtures/clip_tiny:
// preprocessing against transformers.js' CLIPImageProcessor output (reference/processor/*.npy) and
// hand-computed geometry; image and text embeddings through the pipeline against PyTorch's
// references; the embedding index round trip; ranking and zero-shot scores on hand-made cases;
// package errors.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgemm/npy.h"
#include "edgemm/pipelines/clip.h"
#include "pipelines/clip/preprocess.h"
#include "source_dir.h"

namespace edgemm::clip {
namespace clip_pipeline_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;

const fs::path kSource(edgemm::testing::source_dir());
const fs::path kClipPackage = kSource / "tests/fixtures/clip_tiny";

/// One 8-bit level after rescale and normalize, for the smallest CLIP std (0.26130258): the
/// preprocessing tolerance (docs/clip.md, "Retrieval": our resize matches sharp's within one level).
constexpr double kOneLevel = 1.0 / (255.0 * 0.26130258);

Tensor clip_reference(const std::string& name) {
  auto t = read_npy((kClipPackage / "reference" / (name + ".npy")).string());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t.has_value() ? std::move(t).value() : Tensor();
}

/// Rows of `t` [N, D] scaled to unit length (PyTorch's references are the models' raw outputs).
std::vector<float> normalized_rows(const Tensor& t) {
  std::vector<float> out(t.data<float>(), t.data<float>() + t.element_count());
  const int64_t d = t.dim(1);
  for (int64_t r = 0; r < t.dim(0); ++r) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += double(out[r * d + i]) * out[r * d + i];
    for (int64_t i = 0; i < d; ++i) out[r * d + i] = static_cast<float>(out[r * d + i] / std::sqrt(s));
  }
  return out;
}

/// Max |a - b| within `tolerance` and min row cosine above `min_cosine` of two [N, D] float32
/// tensors given as flat vectors.
void expect_embeddings(const Tensor& got, const std::vector<float>& want, double tolerance, const std::string& what,
                       double min_cosine = 0.99999) {
  ASSERT_EQ(static_cast<size_t>(got.element_count()), want.size()) << what;
  const int64_t d = got.dim(1);
  double max_diff = 0, min_cos = 1;
  for (int64_t r = 0; r < got.dim(0); ++r) {
    double dot = 0;
    for (int64_t i = 0; i < d; ++i) {
      max_diff = std::max(max_diff, std::fabs(double(got.data<float>()[r * d + i]) - want[r * d + i]));
      dot += double(got.data<float>()[r * d + i]) * want[r * d + i];
    }
    min_cos = std::min(min_cos, dot);
  }
  std::cout << "[ clip ] " << what << ": max abs diff " << max_diff << ", min cosine " << min_cos << "\n";
  EXPECT_LE(max_diff, tolerance) << what;
  EXPECT_GT(min_cos, min_cosine) << what;
}

ClipModel load_package(const fs::path& dir = kClipPackage, ClipOptions options = {}) {
  options.threads = 1;
  auto model = ClipModel::load(dir.string(), options);
  EXPECT_TRUE(model.has_value()) << model.status().to_string();
  if (!model.has_value()) std::abort();
  return std::move(model).value();
}

/// A writable copy of the fixture package in a fresh temporary folder.
fs::path copy_package(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("edgemm_clip_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json",
                        "special_tokens_map.json"}) {
    fs::copy_file(kClipPackage / f, dir / f);
  }
  fs::create_directories(dir / "onnx");
  fs::copy_file(kClipPackage / "onnx/vision_model.onnx", dir / "onnx/vision_model.onnx");
  fs::copy_file(kClipPackage / "onnx/text_model.onnx", dir / "onnx/text_model.onnx");
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// --- configuration -------------------------------------------------------------------------------

TEST(ClipConfig, ReadsTheFixture) {
  auto p = ImageProcessorConfig::load((kClipPackage / "preprocessor_config.json").string());
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(p->shortest_edge, 64);
  EXPECT_EQ(p->resample, Resample::kBicubic);
  EXPECT_TRUE(p->do_center_crop);
  EXPECT_EQ(p->crop_width, 64);
  EXPECT_EQ(p->crop_height, 64);
  EXPECT_DOUBLE_EQ(p->image_std[1], 0.26130258);
  const ClipModel model = load_package();
  EXPECT_EQ(model.config().projection_dim, 32);
  EXPECT_EQ(model.config().image_size, 64);
  EXPECT_EQ(model.embedding_dim(), 32);
  EXPECT_EQ(model.config().model_id, "clip_tiny");
  EXPECT_NEAR(model.logit_scale(), std::exp(2.6592), 1e-4);
  EXPECT_EQ(model.vision_model_sha256().size(), 64u);
}

TEST(ClipConfig, ErrorsNameFileAndField) {
  auto expect_error = [](const std::string& json, StatusCode code, const std::string& fragment) {
    auto p = ImageProcessorConfig::parse(json, "pp.json");
    ASSERT_FALSE(p.has_value()) << json;
    EXPECT_EQ(p.status().code(), code) << p.status().to_string();
    EXPECT_NE(p.status().message().find(fragment), std::string::npos) << p.status().to_string();
    EXPECT_NE(p.status().message().find("pp.json"), std::string::npos) << p.status().to_string();
  };
  expect_error("{not json", StatusCode::kInvalidModel, "not valid JSON");
  expect_error(R"({"do_resize": true})", StatusCode::kInvalidModel, "'size'");
  expect_error(R"({"size": {"shortest_edge": -3}})", StatusCode::kInvalidModel, "size.shortest_edge");
  expect_error(R"({"size": 64, "do_center_crop": true})", StatusCode::kInvalidModel, "crop_size");
  expect_error(R"({"size": 64, "resample": 7})", StatusCode::kInvalidModel, "resample");
  expect_error(R"({"size": 64, "resample": "bicubic"})", StatusCode::kInvalidModel, "resample");
  expect_error(R"({"size": 64, "image_std": [0.5, 0, 0.5]})", StatusCode::kInvalidModel, "image_std");
  expect_error(R"({"size": 64, "image_mean": [0.5, 0.5]})", StatusCode::kInvalidModel, "image_mean");
  expect_error(R"({"size": 64, "do_normalize": "yes"})", StatusCode::kInvalidModel, "do_normalize");
  // An integer size is the shortest edge (Python transformers' CLIPImageProcessor); height/width exact.
  auto p = ImageProcessorConfig::parse(R"({"size": 224, "crop_size": 224, "resample": 2})", "x");
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(p->shortest_edge, 224);
  EXPECT_EQ(p->crop_width, 224);
  EXPECT_EQ(p->resample, Resample::kBilinear);
  auto hw = ImageProcessorConfig::parse(R"({"size": {"height": 30, "width": 40}})", "x");
  ASSERT_TRUE(hw.has_value());
  EXPECT_EQ(resize_output_size(*hw, 451, 300), (std::array<int, 2>{40, 30}));
}

// --- geometry (hand-computed) --------------------------------------------------------------------

TEST(ClipPreprocess, ResizeSizeAsTransformersJs) {
  ImageProcessorConfig c;
  c.shortest_edge = 64;
  // 451 × 300: 451 · 64 / 300 = 96.213 → 96.
  EXPECT_EQ(resize_output_size(c, 451, 300), (std::array<int, 2>{96, 64}));
  EXPECT_EQ(resize_output_size(c, 600, 400), (std::array<int, 2>{96, 64}));
  // 221 · 64 / 205 = 68.9951: transformers.js rounds to 2 decimals first (69.00 → 69); Python's
  // int() would give 68. (transformers.js 4.3.1 get_resize_output_image_size gives [69, 64].)
  EXPECT_EQ(resize_output_size(c, 221, 205), (std::array<int, 2>{69, 64}));
  EXPECT_EQ(resize_output_size(c, 205, 221), (std::array<int, 2>{64, 69}));
  // Upscaling: 40 × 30 → 85.33 × 64.
  EXPECT_EQ(resize_output_size(c, 40, 30), (std::array<int, 2>{85, 64}));
  // longest_edge caps the longer side: 96 × 64 → factor min(80 / 96, 80 / 64) = 0.8333 → 80 × 53.
  c.longest_edge = 80;
  EXPECT_EQ(resize_output_size(c, 451, 300), (std::array<int, 2>{80, 53}));
}

TEST(ClipPreprocess, CenterCropOffsets) {
  // A 69 × 64 image whose pixel (x, y) holds (x, y, 7): the 64 × 64 crop starts at
  // floor((69 - 64) / 2) = 2 (transformers.js RawImage.center_crop, Math.floor of the offset).
  cv::Mat image(64, 69, CV_8UC3);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 69; ++x) image.at<cv::Vec3b>(y, x) = cv::Vec3b(x, y, 7);
  cv::Mat crop = center_crop(image, 64, 64);
  ASSERT_EQ(crop.cols, 64);
  EXPECT_EQ(crop.at<cv::Vec3b>(0, 0), cv::Vec3b(2, 0, 7));
  EXPECT_EQ(crop.at<cv::Vec3b>(63, 63), cv::Vec3b(65, 63, 7));
  // Smaller than the crop: padded with black, the image at floor((64 - 61) / 2) = 1.
  cv::Mat small = center_crop(image(cv::Rect(0, 0, 61, 64)), 64, 64);
  EXPECT_EQ(small.at<cv::Vec3b>(5, 0), cv::Vec3b(0, 0, 0));
  EXPECT_EQ(small.at<cv::Vec3b>(5, 1), cv::Vec3b(0, 5, 7));
  EXPECT_EQ(small.at<cv::Vec3b>(5, 61), cv::Vec3b(60, 5, 7));
  EXPECT_EQ(small.at<cv::Vec3b>(5, 62), cv::Vec3b(0, 0, 0));
}

TEST(ClipPreprocess, ResizeKernelsByHand) {
  // One row [0, 100] → width 4: sample positions 0, 0.5, 1, 1.5 (corner-aligned, x · 2 / 4).
  // Bilinear: 0, 50, 100, and 100 · 0.5 + black · 0.5 = 50 past the edge (libvips' affine reads
  // black outside the image).
  cv::Mat row(1, 2, CV_8UC3);
  row.at<cv::Vec3b>(0, 0) = cv::Vec3b(0, 0, 0);
  row.at<cv::Vec3b>(0, 1) = cv::Vec3b(100, 100, 100);
  cv::Mat bilinear = resize_like_transformers_js(row, 4, 1, Resample::kBilinear);
  const int want[4] = {0, 50, 100, 50};
  for (int x = 0; x < 4; ++x) EXPECT_EQ(bilinear.at<cv::Vec3b>(0, x)[0], want[x]) << x;
  // Bicubic 4 → 2 lands on integer positions 0 and 2: the input samples exactly.
  cv::Mat four(1, 4, CV_8UC3);
  for (int x = 0; x < 4; ++x) four.at<cv::Vec3b>(0, x) = cv::Vec3b(10 * x + 1, 20 * x, 3);
  cv::Mat half = resize_like_transformers_js(four, 2, 1, Resample::kBicubic);
  EXPECT_EQ(half.at<cv::Vec3b>(0, 0), cv::Vec3b(1, 0, 3));
  EXPECT_EQ(half.at<cv::Vec3b>(0, 1), cv::Vec3b(21, 40, 3));
  // Bicubic at position 0.5 between 0 and 100 with neighbours 0 and 100: Catmull-Rom weights
  // (-1/16, 9/16, 9/16, -1/16) → 0 · -1/16 + 0 · 9/16 + 100 · 9/16 + 100 · -1/16 = 50.
  cv::Mat ramp(1, 4, CV_8UC3);
  const int v[4] = {0, 0, 100, 100};
  for (int x = 0; x < 4; ++x) ramp.at<cv::Vec3b>(0, x) = cv::Vec3b(v[x], v[x], v[x]);
  cv::Mat doubled = resize_like_transformers_js(ramp, 8, 1, Resample::kBicubic);  // positions 0, 0.5, ..., 3.5
  EXPECT_EQ(doubled.at<cv::Vec3b>(0, 3)[0], 50);                                  // position 1.5
  // Nearest: floor(x · 4 / 3) = 0, 1, 2.
  cv::Mat nearest = resize_like_transformers_js(four, 3, 1, Resample::kNearest);
  EXPECT_EQ(nearest.at<cv::Vec3b>(0, 2)[0], 21);
}

TEST(ClipPreprocess, WholeChainByHand) {
  // 130 × 64 RGB with R = x, G = y, B = 200: shortest edge already 64, so no resize; the crop
  // starts at x = floor((130 - 64) / 2) = 33; value (v / 255 - mean[c]) / std[c] in R, G, B planes.
  const ClipModel model = load_package();
  std::vector<uint8_t> rgb(130 * 64 * 3);
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 130; ++x) {
      uint8_t* p = &rgb[(y * 130 + x) * 3];
      p[0] = static_cast<uint8_t>(x);
      p[1] = static_cast<uint8_t>(y);
      p[2] = 200;
    }
  }
  const std::vector<uint8_t> rgb_before = rgb;
  auto t = model.preprocess(ImageView{rgb.data(), 130, 64, 3, 0, ChannelOrder::kRgb});
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(rgb, rgb_before) << "the caller's pixels were written";
  ASSERT_EQ(t->shape(), (Shape{1, 3, 64, 64}));
  auto at = [&](int c, int y, int x) { return t->data<float>()[(c * 64 + y) * 64 + x]; };
  EXPECT_NEAR(at(0, 0, 0), (33 / 255.0 - 0.48145466) / 0.26862954, 1e-6);
  EXPECT_NEAR(at(0, 5, 63), (96 / 255.0 - 0.48145466) / 0.26862954, 1e-6);
  EXPECT_NEAR(at(1, 7, 10), (7 / 255.0 - 0.4578275) / 0.26130258, 1e-6);
  EXPECT_NEAR(at(2, 63, 63), (200 / 255.0 - 0.40821073) / 0.27577711, 1e-6);
  // The same pixels as BGR, and as RGBA whose alpha is dropped (not composited), give the same values.
  std::vector<uint8_t> bgr(rgb.size()), rgba(130 * 64 * 4);
  for (size_t i = 0; i < 130 * 64; ++i) {
    bgr[3 * i] = rgb[3 * i + 2], bgr[3 * i + 1] = rgb[3 * i + 1], bgr[3 * i + 2] = rgb[3 * i];
    for (int c = 0; c < 3; ++c) rgba[4 * i + c] = rgb[3 * i + c];
    rgba[4 * i + 3] = static_cast<uint8_t>(i % 256);
  }
  for (const ImageView& same : {ImageView{bgr.data(), 130, 64, 3, 0, ChannelOrder::kBgr},
                                ImageView{rgba.data(), 130, 64, 4, 0, ChannelOrder::kRgb}}) {
    auto u = model.preprocess(same);
    ASSERT_TRUE(u.has_value()) << u.status().to_string();
    EXPECT_EQ(std::memcmp(u->data<float>(), t->data<float>(), t->byte_size()), 0) << same.channels << " channels";
  }
  EXPECT_EQ(model.preprocess(ImageView{nullptr, 10, 10}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.preprocess(ImageView{rgb.data(), 130, 64, 3, 100}).status().code(), StatusCode::kInvalidArgument);
}

// --- preprocessing vs transformers.js ------------------------------------------------------------

TEST(ClipPreprocess, MatchesTransformersJsProcessor) {
  const ClipModel model = load_package();
  for (const char* name : {"chelsea", "coffee"}) {
    auto got = model.preprocess_file((kSource / "data/photos" / (std::string(name) + ".png")).string());
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    const Tensor want = clip_reference(std::string("processor/") + name);
    ASSERT_EQ(got->shape(), want.shape());
    double max_diff = 0, sum = 0;
    int64_t differing = 0;
    for (int64_t i = 0; i < want.element_count(); ++i) {
      const double d = std::fabs(double(got->data<float>()[i]) - want.data<float>()[i]);
      max_diff = std::max(max_diff, d);
      sum += d;
      differing += d > 1e-6;
    }
    std::cout << "[ clip ] preprocessing " << name << " vs transformers.js: max abs diff " << max_diff
              << " (one level = " << kOneLevel << "), mean " << sum / want.element_count() << ", " << differing
              << " of " << want.element_count() << " values differ\n";
    EXPECT_LE(max_diff, kOneLevel + 1e-5) << name;
    EXPECT_LT(differing, want.element_count() / 4) << name;
  }
}

// --- embeddings ----------------------------------------------------------------------------------

TEST(ClipPipeline, ImageEmbeddingsMatchPyTorch) {
  const ClipModel model = load_package();
  auto got = model.embed_pixels(clip_reference("pixel_values"));
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_embeddings(*got, normalized_rows(clip_reference("image_embeds")), 1e-4, "image_embeds (pipeline)");
  // Batch 1 and image_batch 1 give the same rows.
  ClipOptions one;
  one.image_batch = 1;
  const ClipModel single = load_package(kClipPackage, one);
  const std::vector<std::string> photos = {(kSource / "data/photos/chelsea.png").string(),
                                           (kSource / "data/photos/coffee.png").string(),
                                           (kSource / "data/photos/rocket.jpg").string()};
  auto batched = model.embed_images(photos);
  auto singles = single.embed_images(photos);
  ASSERT_TRUE(batched.has_value()) << batched.status().to_string();
  ASSERT_TRUE(singles.has_value()) << singles.status().to_string();
  expect_embeddings(*batched, std::vector<float>(singles->data<float>(), singles->data<float>() + 96), 1e-5,
                    "embed_images batch 8 vs 1");
  // The photos' embeddings against the model on transformers.js' processor output.
  for (int i = 0; i < 2; ++i) {
    auto ref = model.embed_pixels(clip_reference(i == 0 ? "processor/chelsea" : "processor/coffee"));
    ASSERT_TRUE(ref.has_value());
    double dot = 0;
    for (int k = 0; k < 32; ++k) dot += double(ref->data<float>()[k]) * batched->data<float>()[i * 32 + k];
    std::cout << "[ clip ] photo " << i << ": cosine of our preprocessing vs transformers.js' " << dot << "\n";
    EXPECT_GT(dot, 0.9999);
  }
}

TEST(ClipPipeline, Bfloat16PrecisionStaysCloseAndHasItsOwnIdentity) {
  const ClipModel fp32 = load_package();
  ClipOptions options;
  options.precision = "bf16";
  const ClipModel bf16 = load_package(kClipPackage, options);
  EXPECT_EQ(bf16.vision_model_sha256(), fp32.vision_model_sha256() + "+precision(bf16)");
  auto got = bf16.embed_pixels(clip_reference("pixel_values"));
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_embeddings(*got, normalized_rows(clip_reference("image_embeds")), 1e-2, "image_embeds (bf16)", 0.999);
  auto text = bf16.embed_token_ids(clip_reference("input_ids"));
  ASSERT_TRUE(text.has_value()) << text.status().to_string();
  expect_embeddings(*text, normalized_rows(clip_reference("text_embeds")), 1e-2, "text_embeds (bf16)", 0.999);
  // An image's embedding does not depend on its batch (65 tokens x 8 images: past 256 MatMul rows).
  const std::vector<std::string> photos(8, (kSource / "data/photos/coffee.png").string());
  options.image_batch = 1;
  const ClipModel single = load_package(kClipPackage, options);
  auto batched = bf16.embed_images(photos);
  auto singles = single.embed_images({photos[0]});
  ASSERT_TRUE(batched.has_value()) << batched.status().to_string();
  ASSERT_TRUE(singles.has_value()) << singles.status().to_string();
  std::vector<float> repeated;
  for (int i = 0; i < 8; ++i) repeated.insert(repeated.end(), singles->data<float>(), singles->data<float>() + 32);
  expect_embeddings(*batched, repeated, 1e-5, "bf16 embed_images batch 8 vs 1");
  options.precision = "fp8";
  options.image_batch = 8;
  auto refused = ClipModel::load(kClipPackage.string(), options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("precision 'fp8'"), std::string::npos) << refused.status().to_string();
}

TEST(ClipPipeline, TextEmbeddingsMatchPyTorch) {
  const ClipModel model = load_package();
  std::ifstream in(kClipPackage / "reference/prompts.json");
  const nlohmann::json prompts = nlohmann::json::parse(in);
  const auto texts = prompts.at("texts").get<std::vector<std::string>>();
  auto got = model.embed_texts(texts);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_embeddings(*got, normalized_rows(clip_reference("prompt_text_embeds")), 1e-4,
                    "prompt text_embeds (tokenizer)");
  auto ids = model.embed_token_ids(clip_reference("input_ids"));
  ASSERT_TRUE(ids.has_value()) << ids.status().to_string();
  expect_embeddings(*ids, normalized_rows(clip_reference("text_embeds")), 1e-4, "text_embeds (ids)");
  // Over-long text is truncated to the 16 positions (EOS kept) instead of failing.
  auto long_text = model.embed_texts({"a photo of a cat a photo of a cat a photo of a cat a photo of a cat"});
  EXPECT_TRUE(long_text.has_value()) << long_text.status().to_string();
  for (const std::vector<std::string>& bad : {std::vector<std::string>{}, std::vector<std::string>{"a cat", "  "}}) {
    auto e = model.embed_texts(bad);
    ASSERT_FALSE(e.has_value());
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  }
}

// --- index, ranking, zero-shot -------------------------------------------------------------------

TEST(ClipIndex, SaveLoadRoundTripAndModelCheck) {
  const ClipModel model = load_package();
  EmbeddingIndex index = EmbeddingIndex::for_model(model);
  auto e = model.embed_pixels(clip_reference("pixel_values"));
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(index.add(*e, {"a\xc3\xa9.png", "latin1-\xe9.png"}).is_ok());  // UTF-8 and not
  const fs::path file = fs::temp_directory_path() / ("edgemm_clip_index_" + std::to_string(::getpid()) + ".idx");
  ASSERT_TRUE(index.save(file.string()).is_ok());
  auto loaded = EmbeddingIndex::load(file.string());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  EXPECT_EQ(loaded->paths, index.paths);
  EXPECT_EQ(loaded->vectors, index.vectors);
  EXPECT_EQ(loaded->model_id, "clip_tiny");
  EXPECT_EQ(loaded->vision_model_sha256, model.vision_model_sha256());
  EXPECT_TRUE(loaded->check_model(model).is_ok());
  // Another model (another checksum) is refused, naming both.
  loaded->vision_model_sha256 = std::string(64, '0');
  const Status other = loaded->check_model(model);
  EXPECT_EQ(other.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("another model"), std::string::npos) << other.to_string();
  // Truncated and foreign files.
  const auto size = fs::file_size(file);
  fs::resize_file(file, size - 4);
  auto truncated = EmbeddingIndex::load(file.string());
  ASSERT_FALSE(truncated.has_value());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos) << truncated.status().to_string();
  write(file, "not an index at all");
  auto foreign = EmbeddingIndex::load(file.string());
  ASSERT_FALSE(foreign.has_value());
  EXPECT_NE(foreign.status().message().find("not an edgemm embedding index"), std::string::npos);
  fs::remove(file);
  EXPECT_EQ(EmbeddingIndex::load(file.string()).status().code(), StatusCode::kIo);
}

TEST(ClipIndex, RanksByCosine) {
  EmbeddingIndex index;
  index.dim = 2;
  // Unit vectors at 0°, 90°, 45°, 180°, and 45° again (a tie with row 2).
  const float h = static_cast<float>(std::sqrt(0.5));
  index.vectors = {1, 0, 0, 1, h, h, -1, 0, h, h};
  index.paths = {"east", "north", "ne", "west", "ne2"};
  auto top = index.search({1, 0}, 3);  // cosines 1, 0, 0.707, -1, 0.707
  ASSERT_TRUE(top.has_value());
  ASSERT_EQ(top->size(), 3u);
  EXPECT_EQ((*top)[0].path, "east");
  EXPECT_EQ((*top)[1].path, "ne");  // tie: lower index first
  EXPECT_EQ((*top)[2].path, "ne2");
  EXPECT_NEAR((*top)[1].score, h, 1e-6);
  auto all = index.search({0, 1}, 100);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 5u);
  // north 1, ne and ne2 0.707, then the tie east / west at 0: lower index first.
  EXPECT_EQ((*all)[3].path, "east");
  EXPECT_EQ((*all)[4].path, "west");
  EXPECT_EQ(index.search({1, 0}, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index.search({1, 0, 0}, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(ClipPipeline, ZeroShotIsSoftmaxOfScaledCosine) {
  const ClipModel model = load_package();
  auto images = model.embed_pixels(clip_reference("pixel_values"));
  ASSERT_TRUE(images.has_value());
  const std::vector<std::string> labels = {"a photo of a cat", "A cup of coffee on a table.",
                                           "rocket launch at night!!"};
  auto scores = model.classify(*images, labels);
  ASSERT_TRUE(scores.has_value()) << scores.status().to_string();
  const std::vector<float> img = normalized_rows(clip_reference("image_embeds"));
  const std::vector<float> txt = normalized_rows(clip_reference("prompt_text_embeds"));
  const double scale = std::exp(2.6592);
  for (int i = 0; i < 2; ++i) {
    double z[3], sum = 0;
    for (int l = 0; l < 3; ++l) {
      double dot = 0;
      for (int k = 0; k < 32; ++k) dot += double(img[i * 32 + k]) * txt[l * 32 + k];
      EXPECT_NEAR((*scores)[i].cosine[l], dot, 1e-4);
      z[l] = std::exp(scale * dot);
      sum += z[l];
    }
    for (int l = 0; l < 3; ++l) EXPECT_NEAR((*scores)[i].probs[l], z[l] / sum, 1e-4);
  }
  EXPECT_EQ(model.classify(*images, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.classify(*images, {"cat", ""}).status().code(), StatusCode::kInvalidArgument);
}

// --- package errors ------------------------------------------------------------------------------

TEST(ClipPackage, ErrorsNameTheFile) {
  auto missing = ClipModel::load("/nonexistent/clip");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);

  const fs::path dir = copy_package("errors");
  fs::remove(dir / "onnx/vision_model.onnx");
  auto no_vision = ClipModel::load(dir.string());
  ASSERT_FALSE(no_vision.has_value());
  EXPECT_EQ(no_vision.status().code(), StatusCode::kIo);
  EXPECT_NE(no_vision.status().message().find("no vision model"), std::string::npos) << no_vision.status().to_string();
  // A text-only load still works without it.
  ClipOptions text_only;
  text_only.load_vision = false;
  auto text = ClipModel::load(dir.string(), text_only);
  EXPECT_TRUE(text.has_value()) << text.status().to_string();

  fs::copy_file(kClipPackage / "onnx/vision_model.onnx", dir / "onnx/vision_model.onnx");
  write(dir / "preprocessor_config.json", R"({"size": {"shortest_edge": 64}, "resample": 7})");
  auto bad_pp = ClipModel::load(dir.string());
  ASSERT_FALSE(bad_pp.has_value());
  EXPECT_NE(bad_pp.status().message().find("preprocessor_config.json: field 'resample'"), std::string::npos)
      << bad_pp.status().to_string();
  fs::remove(dir / "preprocessor_config.json");
  auto no_pp = ClipModel::load(dir.string());
  ASSERT_FALSE(no_pp.has_value());
  EXPECT_NE(no_pp.status().message().find("preprocessor_config.json"), std::string::npos);
  fs::copy_file(kClipPackage / "preprocessor_config.json", dir / "preprocessor_config.json");
  write(dir / "config.json", R"({"projection_dim": "x"})");
  auto bad_config = ClipModel::load(dir.string());
  ASSERT_FALSE(bad_config.has_value());
  EXPECT_NE(bad_config.status().message().find("config.json: field 'projection_dim'"), std::string::npos)
      << bad_config.status().to_string();
  // A crop size the model's static input cannot take: an error at preprocessing, never a crash.
  fs::copy_file(kClipPackage / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  write(dir / "onnx/vision_model.onnx", "not onnx");
  auto bad_onnx = ClipModel::load(dir.string());
  EXPECT_FALSE(bad_onnx.has_value());
  fs::remove_all(dir);
}

/// Pins the vision model's pixel_values to `dims` (as a static export for an NPU would).
void pin_vision_input(const fs::path& dir, const std::vector<int64_t>& dims) {
  onnx::ModelProto model;
  {
    std::ifstream in(kClipPackage / "onnx/vision_model.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  auto* shape = model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  std::ofstream out(dir / "onnx/vision_model.onnx", std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

TEST(ClipPackage, StaticVisionInput) {
  // Batch fixed at 1: three photos run one at a time (zero padding not needed) and give the same
  // embeddings as the dynamic model.
  const fs::path dir = copy_package("static");
  pin_vision_input(dir, {1, 3, 64, 64});
  const ClipModel fixed = load_package(dir);
  const ClipModel dynamic = load_package();
  const std::vector<std::string> photos = {(kSource / "data/photos/chelsea.png").string(),
                                           (kSource / "data/photos/coffee.png").string(),
                                           (kSource / "data/photos/rocket.jpg").string()};
  auto a = fixed.embed_images(photos);
  auto b = dynamic.embed_images(photos);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  expect_embeddings(*a, std::vector<float>(b->data<float>(), b->data<float>() + b->element_count()), 1e-5,
                    "static batch 1 vs dynamic");
  auto two = fixed.embed_pixels(clip_reference("pixel_values"));  // [2, ...] through a batch-1 model
  ASSERT_TRUE(two.has_value()) << two.status().to_string();
  expect_embeddings(*two, normalized_rows(clip_reference("image_embeds")), 1e-4, "static batch 1, two images");
  // A crop size the static input cannot take is refused at load, naming both.
  write(dir / "preprocessor_config.json",
        R"({"size": {"shortest_edge": 32}, "do_center_crop": true, "crop_size": {"height": 32, "width": 32}})");
  auto mismatch = ClipModel::load(dir.string());
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(mismatch.status().message().find("32x32"), std::string::npos) << mismatch.status().to_string();
  EXPECT_NE(mismatch.status().message().find("64x64"), std::string::npos) << mismatch.status().to_string();
  fs::remove_all(dir);
}

}  // namespace clip_pipeline_test
}  // namespace edgemm::clip
