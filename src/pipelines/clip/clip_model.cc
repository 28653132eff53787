// ClipModel: package loading, image and text embeddings, zero-shot classification.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <sstream>

#include "edgemm/pipelines/clip.h"
#include "edgemm/pipelines/tokenizer.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "passes/token_pruning.h"
#include "pipelines/clip/preprocess.h"
#include "pipelines/files.h"
#include "pipelines/image.h"

namespace edgemm::clip {

namespace fs = std::filesystem;

class ClipModelImpl {
 public:
  std::string dir;
  ClipOptions options;
  ClipConfig config;
  ImageProcessorConfig processor;
  std::optional<text::Tokenizer> tokenizer;
  std::unique_ptr<Inferencer> vision;  // the combined model when `combined`
  std::unique_ptr<Inferencer> text;
  bool combined = false;
  std::string vision_path, vision_sha256;
  // Names found in the models.
  std::string pixel_input, image_output, ids_input, mask_input, text_output;
  DataType ids_dtype = DataType::kInt64, mask_dtype = DataType::kInt64;
  int width = 0, height = 0;  // pixel_values H × W fed to the vision model
  int static_batch = 0;       // > 0 when the vision model's batch axis is fixed
  int dim = 0;

  const Inferencer* text_model() const { return combined ? vision.get() : text.get(); }
};

namespace {

bool is_integer(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

/// The input called `preferred`, else the only input matching `fits` (not among `taken`).
Expected<const ValueInfo*> find_value(const std::vector<ValueInfo>& values, const std::string& preferred,
                                      const std::function<bool(const ValueInfo&)>& fits, const std::string& file,
                                      const std::string& what) {
  const ValueInfo* found = nullptr;
  int candidates = 0;
  for (const ValueInfo& v : values) {
    if (v.name == preferred) return &v;
    if (fits(v)) {
      found = &v;
      ++candidates;
    }
  }
  if (candidates == 1) return found;
  std::string names;
  for (const ValueInfo& v : values) names += (names.empty() ? "" : ", ") + v.name;
  return Status(StatusCode::kInvalidModel,
                file + ": no " + what + " named '" + preferred + "'" +
                    (candidates > 1 ? " and several candidates" : " and no other candidate") + " (has: " + names + ")");
}

void l2_normalize_rows(Tensor& t) {
  const int64_t rows = t.dim(0), cols = t.element_count() / rows;
  float* p = t.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < cols; ++i) sum += double(p[r * cols + i]) * p[r * cols + i];
    const float inv = sum > 0 ? static_cast<float>(1.0 / std::sqrt(sum)) : 0.0f;
    for (int64_t i = 0; i < cols; ++i) p[r * cols + i] *= inv;
  }
}

/// Embeddings output of a run: float32 [N, D] (a [N, 1, D] or [N, D, 1] is flattened), normalized.
Expected<Tensor> normalized_embeddings(Tensor out, int64_t rows, const std::string& name) {
  if (out.dtype() != DataType::kFloat32 || out.rank() < 2 || out.dim(0) != rows) {
    return Status(StatusCode::kInvalidModel, "output '" + name + "' is " + shape_to_string(out.shape()) +
                                                 "; expected float32 [" + std::to_string(rows) + ", dim]");
  }
  auto copy = out.reshaped({rows, out.element_count() / rows});
  if (!copy.has_value()) return copy.status();
  auto owned = copy->clone();  // the run's output may be borrowed; keep our own storage
  if (!owned.has_value()) return owned.status();
  l2_normalize_rows(*owned);
  return std::move(owned).value();
}

/// The vision model at `path` with visual token pruning (passes/token_pruning.h) per `options`,
/// loaded by `create` from a temporary copy (removed before returning).
template <typename Create>
Expected<std::unique_ptr<Inferencer>> load_pruned(const std::string& path, const ClipOptions& options,
                                                  const Create& create) {
  auto model = ir::import_onnx_file(path);
  if (!model.has_value()) return model.status();
  passes::TokenPruningOptions prune;
  prune.after_layer = options.prune_after_layer;
  prune.keep_ratio = options.prune_keep_ratio;
  prune.rule = options.prune_rule;
  auto report = passes::prune_visual_tokens(*model, prune);
  if (!report.has_value()) return Status(report.status().code(), path + ": " + report.status().message());
  std::error_code ec;
  static std::atomic<int> loads{0};
  const fs::path dir =
      fs::temp_directory_path(ec) / ("edgemm_pruned_" + std::to_string(::getpid()) + "_" + std::to_string(loads++));
  fs::create_directories(dir, ec);
  const std::string file = (dir / "vision_model.onnx").string();
  Status saved = ir::export_onnx_file(*model, file);
  auto inf = saved.is_ok() ? create(file) : Expected<std::unique_ptr<Inferencer>>(saved);
  fs::remove_all(dir, ec);
  return inf;
}

Expected<Tensor> make_int_tensor(DataType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  auto t = Tensor::create(dtype, shape);
  if (!t.has_value()) return t.status();
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kInt64) {
      t->data<int64_t>()[i] = values[i];
    } else {
      t->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    }
  }
  return t;
}

Status load_models(ClipModelImpl& m) {
  const fs::path onnx = fs::path(m.dir) / "onnx";
  const fs::path vision_file = onnx / "vision_model.onnx", text_file = onnx / "text_model.onnx",
                 combined_file = onnx / "model.onnx";
  std::error_code ec;
  const bool has_vision = fs::is_regular_file(vision_file, ec), has_text = fs::is_regular_file(text_file, ec);
  m.combined = !has_vision && !has_text && fs::is_regular_file(combined_file, ec);
  m.vision_path = m.combined ? combined_file.string() : vision_file.string();
  if (!m.combined && !has_vision && m.options.load_vision) {
    return Status(StatusCode::kIo, "model package '" + m.dir + "' has no vision model: expected " +
                                       vision_file.string() + " (or a combined " + combined_file.string() + ")");
  }
  if (!m.combined && !has_text && m.options.load_text) {
    return Status(StatusCode::kIo, "model package '" + m.dir + "' has no text model: expected " + text_file.string() +
                                       " (or a combined " + combined_file.string() + ")");
  }
  if (fs::is_regular_file(m.vision_path, ec)) {
    auto sha = sha256_file(m.vision_path);
    if (!sha.has_value()) return sha.status();
    m.vision_sha256 = *sha;
  }
  auto create = [&](const std::string& path) -> Expected<std::unique_ptr<Inferencer>> {
    InferencerConfig config;
    static_cast<RuntimeOptions&>(config) = m.options;
    config.model_path = path;
    return Inferencer::create(config);
  };
  if (m.options.precision != "fp32") m.vision_sha256 += "+precision(" + m.options.precision + ")";
  if (m.options.prune_after_layer >= 0) {  // an index made with pruning only matches a model pruned alike
    std::ostringstream id;
    id << "+prune(k=" << m.options.prune_after_layer << ",keep=" << m.options.prune_keep_ratio
       << ",rule=" << m.options.prune_rule << ")";
    m.vision_sha256 += id.str();
  }
  const bool prune = m.options.prune_after_layer >= 0 && (m.combined || m.options.load_vision);
  if (prune && m.combined) {
    return Status(StatusCode::kUnsupported,
                  "visual token pruning needs a separate vision model; '" + m.vision_path + "' is a combined model");
  }
  if (prune) {
    auto inf = load_pruned(m.vision_path, m.options, create);
    if (!inf.has_value()) return inf.status();
    m.vision = std::move(inf).value();
  } else if (m.combined || m.options.load_vision) {
    auto inf = create(m.vision_path);
    if (!inf.has_value()) return inf.status();
    m.vision = std::move(inf).value();
  }
  if (!m.combined && m.options.load_text) {
    auto inf = create(text_file.string());
    if (!inf.has_value()) return inf.status();
    m.text = std::move(inf).value();
  }
  if (m.vision != nullptr && (m.options.load_vision || m.combined)) {
    const std::string file = m.vision_path;
    auto pixels = find_value(
        m.vision->inputs(), "pixel_values",
        [](const ValueInfo& v) { return v.dtype == DataType::kFloat32 && v.shape.size() == 4; }, file,
        "float32 [batch, 3, height, width] input");
    if (!pixels.has_value()) return pixels.status();
    m.pixel_input = (*pixels)->name;
    auto out = find_value(
        m.vision->outputs(), "image_embeds", [&](const ValueInfo& v) { return !m.combined && v.shape.size() == 2; },
        file, "[batch, dim] image embedding output");
    if (!out.has_value()) return out.status();
    m.image_output = (*out)->name;
    const auto& shape = (*pixels)->shape;
    if (shape.size() == 4) {
      if (shape[1].is_static() && shape[1].value != 3) {
        return Status(StatusCode::kInvalidModel, file + ": input '" + m.pixel_input + "' has " +
                                                     std::to_string(shape[1].value) + " channels; CLIP takes 3 (RGB)");
      }
      if (shape[0].is_static()) m.static_batch = static_cast<int>(shape[0].value);
      if (shape[2].is_static()) m.height = static_cast<int>(shape[2].value);
      if (shape[3].is_static()) m.width = static_cast<int>(shape[3].value);
    }
    const ImageProcessorConfig& p = m.processor;
    const int want_h = p.do_center_crop ? p.crop_height : p.resize_height;
    const int want_w = p.do_center_crop ? p.crop_width : p.resize_width;
    if (m.height == 0 || m.width == 0) {
      if (want_h == 0) {
        return Status(StatusCode::kUnsupported,
                      m.dir +
                          "/preprocessor_config.json: images would keep their aspect ratio (no crop_size, no "
                          "size.height/width) and the vision model's input size is not fixed; edgemm batches "
                          "images of one size");
      }
      m.height = want_h;
      m.width = want_w;
    } else if (want_h > 0 && (want_h != m.height || want_w != m.width)) {
      return Status(StatusCode::kInvalidModel, m.dir + "/preprocessor_config.json: images are cropped/resized to " +
                                                   std::to_string(want_w) + "x" + std::to_string(want_h) + " but " +
                                                   file + " input '" + m.pixel_input + "' takes " +
                                                   std::to_string(m.width) + "x" + std::to_string(m.height));
    }
    if (m.dim == 0 && (*out)->shape.size() == 2 && (*out)->shape[1].is_static()) {
      m.dim = static_cast<int>((*out)->shape[1].value);
    }
  }
  if (const Inferencer* t = m.text_model(); t != nullptr && (m.options.load_text || m.combined)) {
    const std::string file = m.combined ? combined_file.string() : text_file.string();
    auto ids = find_value(
        t->inputs(), "input_ids", [](const ValueInfo& v) { return is_integer(v.dtype) && v.name != "attention_mask"; },
        file, "integer [batch, sequence] token input");
    if (!ids.has_value()) return ids.status();
    m.ids_input = (*ids)->name;
    m.ids_dtype = (*ids)->dtype;
    if (!is_integer(m.ids_dtype)) {
      return Status(StatusCode::kInvalidModel, file + ": input '" + m.ids_input + "' must be int64 or int32");
    }
    for (const ValueInfo& v : t->inputs()) {
      if (v.name == "attention_mask") {
        m.mask_input = v.name;
        m.mask_dtype = is_integer(v.dtype) ? v.dtype : DataType::kInt64;
      } else if (v.name != m.ids_input && v.name != m.pixel_input) {
        return Status(StatusCode::kInvalidModel,
                      file + ": unexpected input '" + v.name +
                          "' (CLIP text models take input_ids and optionally attention_mask)");
      }
    }
    auto out = find_value(
        t->outputs(), "text_embeds", [&](const ValueInfo& v) { return !m.combined && v.shape.size() == 2; }, file,
        "[batch, dim] text embedding output");
    if (!out.has_value()) return out.status();
    m.text_output = (*out)->name;
  }
  return Status::ok();
}

Status load_tokenizer(ClipModelImpl& m) {
  auto tok = text::Tokenizer::from_file(m.dir);
  if (!tok.has_value()) return tok.status();
  text::TruncationOptions truncation;
  const auto& tc = tok->config();
  int max_length = m.config.max_position_embeddings;
  if (tc.model_max_length.has_value() && *tc.model_max_length > 0 && *tc.model_max_length < (1 << 20)) {
    max_length = max_length > 0 ? std::min<int>(max_length, static_cast<int>(*tc.model_max_length))
                                : static_cast<int>(*tc.model_max_length);
  }
  truncation.max_length = max_length;
  tok->set_truncation(truncation);
  text::PaddingOptions padding;
  padding.strategy = text::PaddingOptions::Strategy::kLongest;
  std::optional<int32_t> pad;
  if (tc.pad_token.has_value()) pad = tok->token_to_id(*tc.pad_token);
  if (!pad.has_value() && m.config.pad_token_id.has_value()) pad = static_cast<int32_t>(*m.config.pad_token_id);
  if (!pad.has_value()) pad = tok->token_to_id("<|endoftext|>");
  padding.pad_id = pad.value_or(0);
  padding.pad_token = tok->id_to_token(padding.pad_id);
  tok->set_padding(padding);
  m.tokenizer = std::move(tok).value();
  return Status::ok();
}

}  // namespace

ClipModel::ClipModel(std::unique_ptr<ClipModelImpl> impl) : impl_(std::move(impl)) {}
ClipModel::~ClipModel() = default;
ClipModel::ClipModel(ClipModel&&) noexcept = default;
ClipModel& ClipModel::operator=(ClipModel&&) noexcept = default;

Expected<ClipModel> ClipModel::load(const std::string& dir, const ClipOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status(StatusCode::kIo,
                  "model package '" + dir + "' " + (fs::exists(dir, ec) ? "is not a folder" : "does not exist"));
  }
  if (!options.load_vision && !options.load_text) {
    return Status(StatusCode::kInvalidArgument, "ClipOptions: load_vision and load_text are both off");
  }
  if (options.image_batch < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "ClipOptions: image_batch must be at least 1, got " + std::to_string(options.image_batch));
  }
  auto impl = std::make_unique<ClipModelImpl>();
  impl->dir = dir;
  impl->options = options;
  const fs::path root(dir);
  auto config_text = pipelines::read_text_file(root / "config.json");
  if (!config_text.has_value()) return config_text.status();
  auto config = ClipConfig::parse(*config_text, (root / "config.json").string());
  if (!config.has_value()) return config.status();
  impl->config = *config;
  if (impl->config.model_id.empty())
    impl->config.model_id = fs::absolute(root, ec).lexically_normal().filename().string();
  if (impl->config.model_id.empty()) impl->config.model_id = fs::absolute(root, ec).parent_path().filename().string();
  impl->dim = impl->config.projection_dim;
  if (options.load_vision || fs::exists(root / "onnx" / "model.onnx", ec)) {
    auto processor = ImageProcessorConfig::load((root / "preprocessor_config.json").string());
    if (!processor.has_value()) return processor.status();
    impl->processor = *processor;
  }
  if (options.load_text) EDGEMM_RETURN_IF_ERROR(load_tokenizer(*impl));
  EDGEMM_RETURN_IF_ERROR(load_models(*impl));
  if (impl->dim == 0) {
    return Status(StatusCode::kInvalidModel,
                  (root / "config.json").string() + ": field 'projection_dim' is missing and the models do not fix it");
  }
  return ClipModel(std::move(impl));
}

namespace {

// pixel_values [1, 3, H, W] of an 8-bit BGR image (the processor works on RGB).
Expected<Tensor> preprocess_bgr(const ClipModelImpl& m, const cv::Mat& bgr) {
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat32, {1, 3, m.height, m.width}));
  EDGEMM_RETURN_IF_ERROR(preprocess_rgb_into(rgb, m.processor, m.width, m.height, t.data<float>()));
  return t;
}

Status require_vision(const ClipModelImpl& m) {
  if (m.vision == nullptr) return Status(StatusCode::kUnsupported, "no vision model loaded (load_vision off)");
  return Status::ok();
}

// Embeddings [count, dim] of `count` images, image_batch at a time; preprocess(i) gives image i's
// pixel_values [1, 3, H, W].
Expected<Tensor> embed_batched(const ClipModel& model, const ClipModelImpl& m, size_t count,
                               const std::function<Expected<Tensor>(size_t)>& preprocess) {
  if (count == 0) return Status(StatusCode::kInvalidArgument, "no images to embed");
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(DataType::kFloat32, {static_cast<int64_t>(count), m.dim}));
  const int64_t image = 3 * int64_t{m.height} * m.width;
  const size_t batch = static_cast<size_t>(m.static_batch > 0 ? m.static_batch : m.options.image_batch);
  for (size_t start = 0; start < count; start += batch) {
    const size_t rows = std::min(batch, count - start);
    EDGEMM_ASSIGN_OR_RETURN(Tensor pixels,
                            Tensor::create(DataType::kFloat32, {static_cast<int64_t>(rows), 3, m.height, m.width}));
    for (size_t r = 0; r < rows; ++r) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor one, preprocess(start + r));
      std::memcpy(pixels.data<float>() + r * image, one.data<float>(), static_cast<size_t>(image) * sizeof(float));
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor e, model.embed_pixels(pixels));
    std::memcpy(out.data<float>() + start * m.dim, e.data<float>(), rows * m.dim * sizeof(float));
  }
  return out;
}

}  // namespace

Expected<Tensor> ClipModel::preprocess_file(const std::string& path) const {
  EDGEMM_RETURN_IF_ERROR(require_vision(*impl_));
  EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::read_image_bgr(path, pipelines::Alpha::kDrop));
  return preprocess_bgr(*impl_, bgr);
}

Expected<Tensor> ClipModel::preprocess(const ImageView& image) const {
  EDGEMM_RETURN_IF_ERROR(require_vision(*impl_));
  EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::image_view_to_bgr(image, pipelines::Alpha::kDrop));
  return preprocess_bgr(*impl_, bgr);
}

Expected<Tensor> ClipModel::embed_pixels(const Tensor& pixel_values) const {
  const ClipModelImpl& m = *impl_;
  if (m.vision == nullptr || m.image_output.empty()) return Status(StatusCode::kUnsupported, "no vision model loaded");
  if (pixel_values.dtype() != DataType::kFloat32 || pixel_values.rank() != 4 || pixel_values.dim(1) != 3 ||
      pixel_values.dim(2) != m.height || pixel_values.dim(3) != m.width || pixel_values.dim(0) < 1) {
    return Status(StatusCode::kInvalidArgument, "pixel_values must be float32 [N, 3, " + std::to_string(m.height) +
                                                    ", " + std::to_string(m.width) + "], got " +
                                                    shape_to_string(pixel_values.shape()));
  }
  const int64_t n = pixel_values.dim(0);
  std::vector<std::pair<std::string, Tensor>> inputs;
  if (m.static_batch > 0 && n != m.static_batch) {
    // A fixed batch axis: run it once per static_batch rows, zero-padded.
    auto out = Tensor::create(DataType::kFloat32, {n, m.dim});
    if (!out.has_value()) return out.status();
    const int64_t image = 3 * int64_t{m.height} * m.width;
    for (int64_t start = 0; start < n; start += m.static_batch) {
      auto chunk = Tensor::create(DataType::kFloat32, {m.static_batch, 3, m.height, m.width});
      if (!chunk.has_value()) return chunk.status();
      std::fill(chunk->data<float>(), chunk->data<float>() + chunk->element_count(), 0.0f);
      const int64_t rows = std::min<int64_t>(m.static_batch, n - start);
      std::memcpy(chunk->data<float>(), pixel_values.data<float>() + start * image,
                  static_cast<size_t>(rows * image) * sizeof(float));
      auto e = embed_pixels(*chunk);
      if (!e.has_value()) return e.status();
      std::memcpy(out->data<float>() + start * m.dim, e->data<float>(), static_cast<size_t>(rows * m.dim) * 4);
    }
    return out;
  }
  inputs.emplace_back(m.pixel_input, pixel_values);
  if (m.combined) {  // the combined graph also wants text: one dummy token
    auto ids = make_int_tensor(m.ids_dtype, {1, 1}, {0});
    if (!ids.has_value()) return ids.status();
    inputs.emplace_back(m.ids_input, *ids);
    if (!m.mask_input.empty()) {
      auto mask = make_int_tensor(m.mask_dtype, {1, 1}, {1});
      if (!mask.has_value()) return mask.status();
      inputs.emplace_back(m.mask_input, *mask);
    }
  }
  auto out = m.vision->run(inputs, {m.image_output});
  if (!out.has_value()) return out.status();
  auto e = normalized_embeddings(std::move((*out)[0]), n, m.image_output);
  if (e.has_value() && e->dim(1) != m.dim) {
    return Status(StatusCode::kInvalidModel, m.vision_path + ": image embeddings have " + std::to_string(e->dim(1)) +
                                                 " values; config.json projection_dim is " + std::to_string(m.dim));
  }
  return e;
}

Expected<Tensor> ClipModel::embed_images(const std::vector<std::string>& paths) const {
  return embed_batched(*this, *impl_, paths.size(), [&](size_t i) { return preprocess_file(paths[i]); });
}

Expected<Tensor> ClipModel::embed_images(const std::vector<ImageView>& images) const {
  return embed_batched(*this, *impl_, images.size(), [&](size_t i) { return preprocess(images[i]); });
}

Expected<Tensor> ClipModel::embed_texts(const std::vector<std::string>& texts) const {
  const ClipModelImpl& m = *impl_;
  if (!m.tokenizer.has_value() || m.text_model() == nullptr || m.text_output.empty()) {
    return Status(StatusCode::kUnsupported, "no text model loaded");
  }
  if (texts.empty()) return Status(StatusCode::kInvalidArgument, "no texts to embed");
  for (size_t i = 0; i < texts.size(); ++i) {
    if (std::all_of(texts[i].begin(), texts[i].end(), [](unsigned char c) { return std::isspace(c) != 0; })) {
      return Status(StatusCode::kInvalidArgument,
                    "text " + std::to_string(i + 1) + " of " + std::to_string(texts.size()) + " is empty");
    }
  }
  auto encoded = m.tokenizer->encode_batch(texts);
  if (!encoded.has_value()) return encoded.status();
  const int64_t n = static_cast<int64_t>(encoded->size()), s = static_cast<int64_t>((*encoded)[0].ids.size());
  std::vector<int64_t> ids, mask;
  for (const text::Encoding& e : *encoded) {
    ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    mask.insert(mask.end(), e.attention_mask.begin(), e.attention_mask.end());
  }
  auto ids_t = make_int_tensor(DataType::kInt64, {n, s}, ids);
  auto mask_t = make_int_tensor(DataType::kInt64, {n, s}, mask);
  if (!ids_t.has_value()) return ids_t.status();
  if (!mask_t.has_value()) return mask_t.status();
  return embed_token_ids(*ids_t, &*mask_t);
}

Expected<Tensor> ClipModel::embed_token_ids(const Tensor& input_ids, const Tensor* attention_mask) const {
  const ClipModelImpl& m = *impl_;
  const Inferencer* model = m.text_model();
  if (model == nullptr || m.text_output.empty()) return Status(StatusCode::kUnsupported, "no text model loaded");
  if (input_ids.dtype() != DataType::kInt64 || input_ids.rank() != 2 || input_ids.dim(0) < 1 || input_ids.dim(1) < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "input_ids must be int64 [N, S], got " + shape_to_string(input_ids.shape()));
  }
  const int64_t n = input_ids.dim(0), s = input_ids.dim(1);
  std::vector<int64_t> ids(input_ids.data<int64_t>(), input_ids.data<int64_t>() + n * s);
  std::vector<int64_t> mask(static_cast<size_t>(n * s), 1);
  if (attention_mask != nullptr) {
    if (attention_mask->dtype() != DataType::kInt64 || attention_mask->shape() != input_ids.shape()) {
      return Status(StatusCode::kInvalidArgument, "attention_mask must be int64 of input_ids' shape");
    }
    mask.assign(attention_mask->data<int64_t>(), attention_mask->data<int64_t>() + n * s);
  }
  std::vector<std::pair<std::string, Tensor>> inputs;
  auto ids_t = make_int_tensor(m.ids_dtype, {n, s}, ids);
  if (!ids_t.has_value()) return ids_t.status();
  inputs.emplace_back(m.ids_input, *ids_t);
  if (!m.mask_input.empty()) {
    auto mask_t = make_int_tensor(m.mask_dtype, {n, s}, mask);
    if (!mask_t.has_value()) return mask_t.status();
    inputs.emplace_back(m.mask_input, *mask_t);
  }
  if (m.combined) {
    auto pixels = Tensor::create(DataType::kFloat32, {1, 3, m.height, m.width});
    if (!pixels.has_value()) return pixels.status();
    std::fill(pixels->data<float>(), pixels->data<float>() + pixels->element_count(), 0.0f);
    inputs.emplace_back(m.pixel_input, *pixels);
  }
  auto out = model->run(inputs, {m.text_output});
  if (!out.has_value()) return out.status();
  auto e = normalized_embeddings(std::move((*out)[0]), n, m.text_output);
  if (e.has_value() && e->dim(1) != m.dim) {
    return Status(StatusCode::kInvalidModel, "text embeddings have " + std::to_string(e->dim(1)) +
                                                 " values; config.json projection_dim is " + std::to_string(m.dim));
  }
  return e;
}

float ClipModel::logit_scale() const {
  return impl_->config.logit_scale_init_value.has_value()
             ? static_cast<float>(std::exp(*impl_->config.logit_scale_init_value))
             : 1.0f;
}

Expected<std::vector<LabelScores>> ClipModel::classify(const Tensor& image_embeds,
                                                       const std::vector<std::string>& labels, float scale) const {
  if (labels.empty()) return Status(StatusCode::kInvalidArgument, "no labels to classify against");
  for (size_t i = 0; i < labels.size(); ++i) {
    if (std::all_of(labels[i].begin(), labels[i].end(), [](unsigned char c) { return std::isspace(c) != 0; })) {
      return Status(StatusCode::kInvalidArgument, "label " + std::to_string(i + 1) + " is empty");
    }
  }
  if (image_embeds.dtype() != DataType::kFloat32 || image_embeds.rank() != 2 || image_embeds.dim(1) != impl_->dim) {
    return Status(StatusCode::kInvalidArgument, "image embeddings must be float32 [N, " + std::to_string(impl_->dim) +
                                                    "], got " + shape_to_string(image_embeds.shape()));
  }
  auto text = embed_texts(labels);
  if (!text.has_value()) return text.status();
  if (!(scale > 0)) scale = logit_scale();
  const int64_t d = impl_->dim;
  std::vector<LabelScores> result(static_cast<size_t>(image_embeds.dim(0)));
  for (int64_t i = 0; i < image_embeds.dim(0); ++i) {
    LabelScores& r = result[static_cast<size_t>(i)];
    const float* img = image_embeds.data<float>() + i * d;
    for (size_t l = 0; l < labels.size(); ++l) {
      const float* t = text->data<float>() + static_cast<int64_t>(l) * d;
      double dot = 0;
      for (int64_t k = 0; k < d; ++k) dot += double(img[k]) * t[k];
      r.cosine.push_back(static_cast<float>(dot));
    }
    const float top = *std::max_element(r.cosine.begin(), r.cosine.end());
    double sum = 0;
    for (float c : r.cosine) sum += std::exp(double(scale) * (c - top));
    for (float c : r.cosine) r.probs.push_back(static_cast<float>(std::exp(double(scale) * (c - top)) / sum));
  }
  return result;
}

const ClipConfig& ClipModel::config() const { return impl_->config; }
const ImageProcessorConfig& ClipModel::processor() const { return impl_->processor; }
int ClipModel::embedding_dim() const { return impl_->dim; }
const std::string& ClipModel::vision_model_path() const { return impl_->vision_path; }
const std::string& ClipModel::vision_model_sha256() const { return impl_->vision_sha256; }

std::vector<std::pair<std::string, const Inferencer*>> ClipModel::models() const {
  std::vector<std::pair<std::string, const Inferencer*>> out;
  if (impl_->combined) {
    out.emplace_back("model", impl_->vision.get());
    return out;
  }
  if (impl_->vision) out.emplace_back("vision", impl_->vision.get());
  if (impl_->text) out.emplace_back("text", impl_->text.get());
  return out;
}

}  // namespace edgemm::clip
