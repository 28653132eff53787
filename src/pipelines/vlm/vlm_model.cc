// VlmModel: package loading and generation (docs/vlm.md).

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <sstream>

#include "edgemm/pipelines/chat_template.h"
#include "edgemm/pipelines/tokenizer.h"
#include "edgemm/pipelines/vlm.h"
#include "passes/kv_cache.h"
#include "pipelines/files.h"
#include "pipelines/image.h"
#include "pipelines/vlm/decoder.h"
#include "pipelines/vlm/preprocess.h"
#include "pipelines/vlm/sampling.h"
#include "session/rewrite_load.h"

namespace edgemm::vlm {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class VlmModelImpl {
 public:
  std::string dir;
  VlmConfig config;
  std::optional<text::Tokenizer> tokenizer;
  std::optional<text::ChatTemplate> chat_template;
  Status chat_template_status;  // why chat_template is empty
  std::unique_ptr<Inferencer> vision, embed, decoder;
  std::optional<DecoderSession> session;
  std::string embed_input, embed_output, features_output;
  bool vision_has_mask = false;
  std::string kv_cache_mode;
  // The conversation in the KV cache: ids fed to the decoder, and every image so far.
  std::vector<int64_t> fed_ids;
  std::vector<ImageFrames> frames;
  std::vector<Tensor> features;  // per image: [frames, image_seq_len, hidden]
};

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Expected<Json> read_json(const fs::path& path) {
  EDGEMM_ASSIGN_OR_RETURN(std::string text, pipelines::read_text_file(path));
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status(StatusCode::kInvalidModel, path.string() + ": not a JSON object");
  }
  return j;
}

/// A positive integer field of `obj`, or `fallback` when absent.
Expected<int64_t> get_int(const Json& obj, const char* key, int64_t fallback, const std::string& source) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return Status(StatusCode::kInvalidModel,
                  source + ": field '" + key + "' must be a non-negative integer, got " + it->dump());
  }
  return it->get<int64_t>();
}

/// `eos_token_id`: an integer or a list of integers.
Expected<std::vector<int64_t>> get_ids(const Json& obj, const char* key, const std::string& source) {
  std::vector<int64_t> ids;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return ids;
  const Json list = it->is_array() ? *it : Json::array({*it});
  for (const Json& v : list) {
    if (!v.is_number_integer()) {
      return Status(StatusCode::kInvalidModel,
                    source + ": field '" + key + "' must be an integer or a list of integers, got " + it->dump());
    }
    ids.push_back(v.get<int64_t>());
  }
  return ids;
}

Status read_config(const fs::path& dir, VlmConfig& c) {
  const std::string path = (dir / "config.json").string();
  EDGEMM_ASSIGN_OR_RETURN(Json j, read_json(path));
  c.model_type = j.value("model_type", "");
  EDGEMM_ASSIGN_OR_RETURN(c.image_token_id, get_int(j, "image_token_id", -1, path));
  if (c.image_token_id < 0) {
    EDGEMM_ASSIGN_OR_RETURN(c.image_token_id, get_int(j, "image_token_index", -1, path));
  }
  if (c.image_token_id < 0) {
    return Status(StatusCode::kInvalidModel, path + ": no 'image_token_id' (the id of \"<image>\")");
  }
  const Json text = j.contains("text_config") && j["text_config"].is_object() ? j["text_config"] : j;
  const std::string tsrc = path + " text_config";
  EDGEMM_ASSIGN_OR_RETURN(int64_t layers, get_int(text, "num_hidden_layers", 0, tsrc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t heads, get_int(text, "num_attention_heads", 0, tsrc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t kv_heads, get_int(text, "num_key_value_heads", heads, tsrc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t hidden, get_int(text, "hidden_size", 0, tsrc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t head_dim, get_int(text, "head_dim", heads > 0 ? hidden / heads : 0, tsrc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t context, get_int(text, "max_position_embeddings", 0, tsrc));
  c.layers = static_cast<int>(layers);
  c.kv_heads = static_cast<int>(kv_heads);
  c.hidden = static_cast<int>(hidden);
  c.head_dim = static_cast<int>(head_dim);
  c.max_context = static_cast<int>(context);
  EDGEMM_ASSIGN_OR_RETURN(c.eos_ids, get_ids(text.contains("eos_token_id") ? text : j, "eos_token_id", path));
  const fs::path generation = dir / "generation_config.json";
  if (fs::exists(generation)) {
    EDGEMM_ASSIGN_OR_RETURN(Json g, read_json(generation));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> eos, get_ids(g, "eos_token_id", generation.string()));
    if (!eos.empty()) c.eos_ids = eos;
  }
  return Status::ok();
}

Status read_processor(const fs::path& dir, VlmConfig& c) {
  const std::string proc = (dir / "processor_config.json").string();
  EDGEMM_ASSIGN_OR_RETURN(Json p, read_json(proc));
  EDGEMM_ASSIGN_OR_RETURN(int64_t seq, get_int(p, "image_seq_len", 0, proc));
  if (seq <= 0) return Status(StatusCode::kInvalidModel, proc + ": no positive 'image_seq_len'");
  c.image_seq_len = static_cast<int>(seq);
  const std::string pre = (dir / "preprocessor_config.json").string();
  EDGEMM_ASSIGN_OR_RETURN(std::string text, pipelines::read_text_file(pre));
  EDGEMM_ASSIGN_OR_RETURN(c.image_processor, clip::ImageProcessorConfig::parse(text, pre));
  Json j = Json::parse(text);
  c.do_image_splitting = j.value("do_image_splitting", true);
  auto max_size = j.find("max_image_size");
  if (max_size == j.end() || !max_size->is_object()) {
    return Status(StatusCode::kInvalidModel, pre + ": no 'max_image_size': {\"longest_edge\": N}");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t side, get_int(*max_size, "longest_edge", 0, pre + " max_image_size"));
  if (side <= 0) return Status(StatusCode::kInvalidModel, pre + ": 'max_image_size.longest_edge' must be positive");
  c.max_image_size = static_cast<int>(side);
  return Status::ok();
}

Expected<std::unique_ptr<Inferencer>> load_model(const fs::path& path, const VlmOptions& options,
                                                 const session::ModelRewrite& rewrite = {}) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status(StatusCode::kIo, "missing model file '" + path.string() + "'");
  InferencerConfig ic;
  static_cast<RuntimeOptions&>(ic) = options;
  ic.model_path = path.string();
  return rewrite ? session::create_with_rewrite(ic, rewrite) : Inferencer::create(ic);
}

/// The decoder with its KV cache bound (passes/kv_cache.h) when the rewrite applies, else as
/// published; `mode` says which.
Expected<std::unique_ptr<Inferencer>> load_decoder(const fs::path& path, const VlmOptions& options,
                                                   const VlmConfig& config, std::string& mode) {
  mode = "concat (binding off)";
  if (!options.bind_kv_cache) return load_model(path, options);
  const int64_t capacity = options.kv_capacity > 0 ? options.kv_capacity
                                                   : std::min(config.max_context > 0 ? config.max_context : 4096, 4096);
  auto bound = load_model(path, options, [capacity](ir::Model& model) -> Status {
    return passes::bind_kv_cache(model, capacity).status();
  });
  if (bound.has_value()) {
    mode = "bound (capacity " + std::to_string(capacity) + ")";
    return bound;
  }
  if (bound.status().code() != StatusCode::kUnsupported) return bound.status();
  mode = "concat (" + bound.status().message() + ")";
  return load_model(path, options);
}

Status find_names(VlmModelImpl& m) {
  const std::string efile = m.dir + "/onnx/embed_tokens.onnx", vfile = m.dir + "/onnx/vision_encoder.onnx";
  if (m.embed->inputs().size() != 1 || m.embed->outputs().empty()) {
    return Status(StatusCode::kInvalidModel, efile + ": expected one input (input_ids) and an inputs_embeds output");
  }
  m.embed_input = m.embed->inputs()[0].name;
  m.embed_output = m.embed->outputs()[0].name;
  bool has_pixels = false;
  for (const ValueInfo& v : m.vision->inputs()) {
    has_pixels |= v.name == "pixel_values";
    m.vision_has_mask |= v.name == "pixel_attention_mask";
  }
  if (!has_pixels) return Status(StatusCode::kInvalidModel, vfile + ": no input 'pixel_values'");
  m.features_output = m.vision->outputs().at(0).name;
  return Status::ok();
}

/// The frames of a decoded 8-bit BGR image (the processor works on RGB).
Expected<ImageFrames> frames_of(const cv::Mat& bgr, const VlmConfig& config) {
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return preprocess_image(rgb, config);
}

/// Decodes an image file or view (alpha dropped, as transformers.js' RawImage.rgb()) into frames.
Expected<ImageFrames> read_frames(const std::string& path, const VlmConfig& config) {
  EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::read_image_bgr(path, pipelines::Alpha::kDrop));
  return frames_of(bgr, config);
}
Expected<ImageFrames> read_frames(const ImageView& view, const VlmConfig& config) {
  EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::image_view_to_bgr(view, pipelines::Alpha::kDrop));
  return frames_of(bgr, config);
}

/// The frames of each image, in order; stops at the first that cannot be decoded.
template <typename Image>
Expected<std::vector<ImageFrames>> read_all_frames(const std::vector<Image>& images, const VlmConfig& config) {
  std::vector<ImageFrames> frames;
  for (const Image& image : images) {
    EDGEMM_ASSIGN_OR_RETURN(ImageFrames f, read_frames(image, config));
    frames.push_back(std::move(f));
  }
  return frames;
}

/// input_ids int64 [1, n] → inputs_embeds float32 [1, n, hidden].
Expected<Tensor> embed_ids(const VlmModelImpl& m, const std::vector<int64_t>& ids) {
  Tensor input = Tensor::from_int64s({1, static_cast<int64_t>(ids.size())}, ids);
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> out, m.embed->run({{m.embed_input, input}}, {m.embed_output}));
  return std::move(out[0]);
}

/// Image features [frames × image_seq_len rows, hidden] of preprocessed frames.
Expected<Tensor> encode_frames(const VlmModelImpl& m, const std::vector<ImageFrames>& images) {
  int64_t total = 0;
  for (const ImageFrames& f : images) total += f.pixels.dim(0);
  const int side = m.config.max_image_size;
  EDGEMM_ASSIGN_OR_RETURN(Tensor pixels, Tensor::create(DataType::kFloat32, {1, total, 3, side, side}));
  size_t offset = 0;
  for (const ImageFrames& f : images) {
    std::memcpy(pixels.data<float>() + offset, f.pixels.data<float>(), f.pixels.byte_size());
    offset += static_cast<size_t>(f.pixels.element_count());
  }
  std::vector<std::pair<std::string, Tensor>> in = {{"pixel_values", pixels}};
  if (m.vision_has_mask) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor mask, Tensor::create(DataType::kBool, {1, total, side, side}));
    std::fill(mask.data<bool>(), mask.data<bool>() + mask.element_count(), true);
    in.emplace_back("pixel_attention_mask", std::move(mask));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> out, m.vision->run(in, {m.features_output}));
  return std::move(out[0]);
}

/// Writes image features into the rows of `embeds` (the prompt's ids from `begin` on, [1, n, hidden])
/// whose id is the image token, in order (transformers.js default_merge_input_ids_with_features):
/// the first such row takes feature row `skipped` of the conversation's images (`features`, each
/// [frames, image_seq_len, hidden], concatenated).
Status merge_features(const VlmModelImpl& m, const std::vector<Tensor>& features, const std::vector<int64_t>& ids,
                      size_t begin, int64_t skipped, Tensor& embeds) {
  const int64_t hidden = embeds.dim(2);
  const int64_t slots = std::count(ids.begin(), ids.end(), m.config.image_token_id);
  int64_t rows = 0;
  for (const Tensor& f : features) {
    if (f.rank() < 2 || f.dim(f.rank() - 1) != hidden) {
      return Status(StatusCode::kInvalidModel, "the vision encoder gave image features of shape " +
                                                   shape_to_string(f.shape()) + "; expected [.., " +
                                                   std::to_string(hidden) + "] (the decoder's hidden size)");
    }
    rows += f.element_count() / hidden;
  }
  if (rows != slots) {
    return Status(StatusCode::kInvalidModel,
                  "the prompt has " + std::to_string(slots) + " image tokens (processor_config.json image_seq_len " +
                      std::to_string(m.config.image_seq_len) + " per frame) but the vision encoder gave " +
                      std::to_string(rows) + " feature rows");
  }
  std::vector<const float*> row_of;
  for (const Tensor& f : features) {
    for (int64_t r = 0; r < f.element_count() / hidden; ++r) row_of.push_back(f.data<float>() + r * hidden);
  }
  int64_t next = skipped;
  for (size_t i = begin; i < ids.size(); ++i) {
    if (ids[i] != m.config.image_token_id) continue;
    std::memcpy(embeds.data<float>() + (i - begin) * hidden, row_of[next++], hidden * sizeof(float));
  }
  return Status::ok();
}

/// A user message of `images` image parts then `text`.
ChatMessage user_turn(const std::string& text, size_t images) {
  ChatMessage message{"user", std::vector<ChatPart>(images, ChatPart{ChatPart::Type::kImage, ""})};
  message.content.push_back({ChatPart::Type::kText, text});
  return message;
}

/// Messages in the parts form the VLM chat templates read: [{role, content: [{type: "image"} |
/// {type: "text", text}]}], as JSON text.
std::string messages_json(const std::vector<ChatMessage>& messages) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ChatMessage& message : messages) {
    nlohmann::ordered_json content = nlohmann::ordered_json::array();
    for (const ChatPart& part : message.content) {
      if (part.type == ChatPart::Type::kImage) {
        content.push_back({{"type", "image"}});
      } else {
        content.push_back({{"type", "text"}, {"text", part.text}});
      }
    }
    list.push_back({{"role", message.role}, {"content", std::move(content)}});
  }
  return list.dump();
}

Expected<GenerateResult> extend_with(VlmModelImpl& m, const std::string& prompt, std::vector<ImageFrames> added,
                                     Clock::time_point start, const GenerateOptions& options,
                                     const TokenCallback& on_token);

}  // namespace

VlmModel::VlmModel(std::unique_ptr<VlmModelImpl> impl) : impl_(std::move(impl)) {}
VlmModel::~VlmModel() = default;
VlmModel::VlmModel(VlmModel&&) noexcept = default;
VlmModel& VlmModel::operator=(VlmModel&&) noexcept = default;

const VlmConfig& VlmModel::config() const { return impl_->config; }
const std::string& VlmModel::kv_cache_mode() const { return impl_->kv_cache_mode; }

Expected<VlmModel> VlmModel::load(const std::string& dir, const VlmOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status(StatusCode::kIo, "'" + dir + "' is not a model folder");
  auto m = std::make_unique<VlmModelImpl>();
  m->dir = dir;
  EDGEMM_RETURN_IF_ERROR(read_config(dir, m->config));
  EDGEMM_RETURN_IF_ERROR(read_processor(dir, m->config));
  EDGEMM_ASSIGN_OR_RETURN(text::Tokenizer tokenizer, text::Tokenizer::from_file(dir));
  m->tokenizer = std::move(tokenizer);
  auto chat = text::ChatTemplate::from_model_dir(dir);
  if (chat.has_value()) {
    m->chat_template = std::move(chat).value();
  } else {
    m->chat_template_status = chat.status();
  }
  const fs::path onnx = fs::path(dir) / "onnx";
  EDGEMM_ASSIGN_OR_RETURN(m->vision, load_model(onnx / "vision_encoder.onnx", options));
  EDGEMM_ASSIGN_OR_RETURN(m->embed, load_model(onnx / "embed_tokens.onnx", options));
  EDGEMM_ASSIGN_OR_RETURN(m->decoder, load_decoder(onnx / options.decoder_file, options, m->config, m->kv_cache_mode));
  EDGEMM_RETURN_IF_ERROR(find_names(*m));
  const VlmConfig& c = m->config;
  KvLayout hint{c.layers, c.kv_heads, c.head_dim, c.hidden};
  EDGEMM_ASSIGN_OR_RETURN(DecoderSession session,
                          DecoderSession::create(*m->decoder, (onnx / options.decoder_file).string(), hint));
  session.set_max_context(c.max_context);
  m->session = std::move(session);
  return VlmModel(std::move(m));
}

Expected<std::string> VlmModel::chat_prompt(const std::string& question, int images) const {
  return chat_prompt(std::vector<ChatMessage>{user_turn(question, static_cast<size_t>(std::max(images, 0)))});
}

Expected<std::string> VlmModel::chat_prompt(const std::vector<ChatMessage>& messages) const {
  if (!impl_->chat_template) {
    return Status(StatusCode::kInvalidModel,
                  "the package has no usable chat template: " + impl_->chat_template_status.message());
  }
  return impl_->chat_template->apply(messages_json(messages), /*add_generation_prompt=*/true);
}

template <typename Image>
Expected<GenerateResult> ChatSession::send_turn(const std::string& text, const std::vector<Image>& images,
                                                const GenerateOptions& options, const TokenCallback& on_token) {
  std::vector<ChatMessage> messages = messages_;
  messages.push_back(user_turn(text, images.size()));
  EDGEMM_ASSIGN_OR_RETURN(std::string prompt, model_->chat_prompt(messages));
  auto result = started_ ? model_->extend(prompt, images, options, on_token)
                         : model_->generate(prompt, images, options, on_token);
  if (!result.has_value()) return result.status();
  messages.push_back({"assistant", {{ChatPart::Type::kText, result->text}}});
  messages_ = std::move(messages);
  started_ = true;
  return result;
}

Expected<GenerateResult> ChatSession::send(const std::string& text, const std::vector<std::string>& image_paths,
                                           const GenerateOptions& options, const TokenCallback& on_token) {
  return send_turn(text, image_paths, options, on_token);
}

Expected<GenerateResult> ChatSession::send(const std::string& text, const std::vector<ImageView>& images,
                                           const GenerateOptions& options, const TokenCallback& on_token) {
  return send_turn(text, images, options, on_token);
}

void ChatSession::reset() {
  messages_.clear();
  started_ = false;
}

Expected<GenerateResult> VlmModel::generate(const std::string& prompt, const std::vector<std::string>& image_paths,
                                            const GenerateOptions& options, const TokenCallback& on_token) {
  impl_->fed_ids.clear();
  impl_->frames.clear();
  impl_->features.clear();
  return extend(prompt, image_paths, options, on_token);
}

Expected<GenerateResult> VlmModel::generate(const std::string& prompt, const std::vector<ImageView>& images,
                                            const GenerateOptions& options, const TokenCallback& on_token) {
  impl_->fed_ids.clear();
  impl_->frames.clear();
  impl_->features.clear();
  return extend(prompt, images, options, on_token);
}

Expected<GenerateResult> VlmModel::extend(const std::string& prompt, const std::vector<std::string>& new_images,
                                          const GenerateOptions& options, const TokenCallback& on_token) {
  const Clock::time_point start = Clock::now();
  EDGEMM_ASSIGN_OR_RETURN(std::vector<ImageFrames> added, read_all_frames(new_images, impl_->config));
  return extend_with(*impl_, prompt, std::move(added), start, options, on_token);
}

Expected<GenerateResult> VlmModel::extend(const std::string& prompt, const std::vector<ImageView>& new_images,
                                          const GenerateOptions& options, const TokenCallback& on_token) {
  const Clock::time_point start = Clock::now();
  EDGEMM_ASSIGN_OR_RETURN(std::vector<ImageFrames> added, read_all_frames(new_images, impl_->config));
  return extend_with(*impl_, prompt, std::move(added), start, options, on_token);
}

namespace {

/// The part of `text` after the `streamed` bytes already given out, up to what later tokens cannot
/// change: a text that ends in U+FFFD may end in a character whose bytes are still coming (byte
/// tokens), so that tail waits unless this is the `last` token (transformers' TextStreamer holds
/// it back the same way). Advances `streamed`.
std::string stream_piece(const std::string& text, size_t& streamed, bool last) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  const bool open_end = text.size() >= kReplacement.size() &&
                        text.compare(text.size() - kReplacement.size(), kReplacement.size(), kReplacement) == 0;
  if ((open_end && !last) || text.size() <= streamed) return "";
  std::string piece = text.substr(streamed);
  streamed = text.size();
  return piece;
}

/// extend() once the new images are decoded into frames (`start`: when the call began).
Expected<GenerateResult> extend_with(VlmModelImpl& m, const std::string& prompt, std::vector<ImageFrames> added,
                                     Clock::time_point start, const GenerateOptions& options,
                                     const TokenCallback& on_token) {
  GenerateResult result;
  std::vector<ImageFrames> frames = m.frames;
  frames.insert(frames.end(), added.begin(), added.end());
  EDGEMM_ASSIGN_OR_RETURN(std::string text, expand_image_tokens(prompt, frames, m.config.image_seq_len));
  EDGEMM_ASSIGN_OR_RETURN(text::Encoding encoding, m.tokenizer->encode(text));
  const std::vector<int64_t> ids(encoding.ids.begin(), encoding.ids.end());
  result.timings.prompt_tokens = static_cast<int64_t>(ids.size());
  if (m.config.max_context > 0 && result.timings.prompt_tokens >= m.config.max_context) {
    return Status(StatusCode::kInvalidArgument, "the prompt is " + std::to_string(ids.size()) +
                                                    " tokens, the model's context max_position_embeddings is " +
                                                    std::to_string(m.config.max_context));
  }
  // The positions already in the KV cache that this prompt starts with are kept (at least one
  // position is fed again, so that there are logits to start from).
  size_t reused = 0;
  while (reused < m.fed_ids.size() && reused + 1 < ids.size() && m.fed_ids[reused] == ids[reused]) ++reused;
  EDGEMM_RETURN_IF_ERROR(m.session->truncate(static_cast<int64_t>(reused)));
  m.fed_ids.resize(reused);
  result.timings.cached_prompt_tokens = static_cast<int64_t>(reused);
  result.timings.preprocess_ms = ms_since(start);

  Clock::time_point t = Clock::now();
  const std::vector<int64_t> suffix(ids.begin() + static_cast<int64_t>(reused), ids.end());
  EDGEMM_ASSIGN_OR_RETURN(Tensor embeds, embed_ids(m, suffix));
  // The conversation's images change only once this turn's prefill succeeded.
  std::vector<Tensor> features = m.features;
  if (!added.empty()) {
    const Clock::time_point v = Clock::now();
    EDGEMM_ASSIGN_OR_RETURN(Tensor encoded, encode_frames(m, added));
    features.push_back(std::move(encoded));
    result.timings.vision_ms = ms_since(v);
  }
  const int64_t skipped = std::count(ids.begin(), ids.begin() + static_cast<int64_t>(reused), m.config.image_token_id);
  EDGEMM_RETURN_IF_ERROR(merge_features(m, features, ids, reused, skipped, embeds));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<float> logits, m.session->step(embeds));
  m.fed_ids.insert(m.fed_ids.end(), suffix.begin(), suffix.end());
  m.frames = std::move(frames);
  m.features = std::move(features);
  result.timings.prefill_ms = ms_since(t) - result.timings.vision_ms;
  result.timings.first_token_ms = ms_since(start);

  EDGEMM_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(options.sampling));
  std::vector<int32_t> context(ids.begin(), ids.end());
  std::vector<int64_t> stops = m.config.eos_ids;
  stops.insert(stops.end(), options.stop_ids.begin(), options.stop_ids.end());
  result.stop_reason = "max_new_tokens";
  t = Clock::now();
  std::vector<int32_t> new_ids;
  std::string decoded;
  size_t streamed = 0;  // bytes of `decoded` given to on_token
  while (static_cast<int>(result.ids.size()) < options.max_new_tokens) {
    EDGEMM_ASSIGN_OR_RETURN(const int32_t id, sampler.next(logits, context));
    context.push_back(id);
    result.ids.push_back(id);
    new_ids.push_back(id);
    EDGEMM_ASSIGN_OR_RETURN(decoded, m.tokenizer->decode(new_ids, options.skip_special_tokens));
    const bool stop_token = std::find(stops.begin(), stops.end(), id) != stops.end();
    const bool at_max = static_cast<int>(result.ids.size()) == options.max_new_tokens;
    const int64_t limit = m.session->context_limit();
    const bool at_context = limit > 0 && m.session->past_length() >= limit;
    if (on_token) on_token(id, stream_piece(decoded, streamed, stop_token || at_max || at_context));
    if (stop_token) {
      result.stop_reason = "stop_token";
      break;
    }
    if (at_max) break;
    if (options.should_stop && options.should_stop()) {
      result.stop_reason = "cancelled";
      break;
    }
    if (at_context) {  // the answer so far stands
      result.stop_reason = "context";
      break;
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor next, embed_ids(m, {id}));
    EDGEMM_ASSIGN_OR_RETURN(logits, m.session->step(next));
    m.fed_ids.push_back(id);
  }
  result.timings.decode_ms = ms_since(t);
  result.timings.new_tokens = static_cast<int64_t>(result.ids.size());
  result.timings.kv_bytes_copied_last_step = m.session->last_step_kv_bytes_copied();
  result.text = decoded;
  return result;
}

}  // namespace

}  // namespace edgemm::vlm
