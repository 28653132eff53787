// POST /v1/embeddings (docs/serve.md "Embeddings"): OpenAI's request and response on the CLIP
// package. "input" is a string or a list; a list item may also be an image, as
// {"type": "image_url", "image_url": {"url": "data:..."}} (edgemm's extension), embedded by the
// vision tower. Rows are L2-normalized, as `edgemm retrieve` gives them.
#include <cstring>

#include "data_url.h"
#include "endpoints.h"
#include "http_json.h"
#include "request_image.h"

namespace edgemm::cli::serve {

namespace {

constexpr size_t kMaxInputs = 256;

/// The request's inputs: texts and images with their places in the answer.
struct EmbeddingInputs {
  std::vector<std::string> texts;
  std::vector<size_t> text_index;
  std::vector<ImageUrl> image_urls;
  std::vector<size_t> image_index;
};

Expected<EmbeddingInputs> parse_inputs(const Json& body) {
  auto it = body.find("input");
  if (it == body.end() || it->is_null()) return Status(StatusCode::kInvalidArgument, "'input' is required");
  const Json list = it->is_array() ? *it : Json::array({*it});
  if (list.empty() || list.size() > kMaxInputs) {
    return Status(StatusCode::kInvalidArgument, "'input' must hold 1 to " + std::to_string(kMaxInputs) +
                                                    " items, got " + std::to_string(list.size()));
  }
  EmbeddingInputs out;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list[i];
    const std::string at = "input[" + std::to_string(i) + "]";
    if (item.is_string()) {
      out.texts.push_back(item.get<std::string>());
      out.text_index.push_back(i);
    } else if (item.is_object() && item.contains("image_url")) {
      out.image_urls.emplace_back(item["image_url"], at + ".image_url");
      out.image_index.push_back(i);
    } else if (item.is_number_integer() || (item.is_array() && !item.empty() && item[0].is_number_integer())) {
      return Status(StatusCode::kUnsupported, at + ": token ids are not accepted; send the text");
    } else {
      return Status(StatusCode::kInvalidArgument,
                    at + " must be a string or {\"type\": \"image_url\", \"image_url\": {\"url\": \"data:...\"}}");
    }
  }
  return out;
}

/// Row `row` of a [N, D] float32 tensor as JSON: a list of floats, or base64 of the
/// little-endian float32 bytes (OpenAI's encoding_format "base64").
Json embedding_json(const Tensor& rows, int64_t row, bool base64) {
  const int64_t dim = rows.dim(1);
  const float* data = rows.data<float>() + row * dim;
  if (base64) return base64_encode(reinterpret_cast<const uint8_t*>(data), static_cast<size_t>(dim) * sizeof(float));
  return Json(std::vector<float>(data, data + dim));
}

}  // namespace

void handle_embeddings(const httplib::Request& req, httplib::Response& res, ServerState& state) {
  const Clock::time_point deadline = request_deadline(state);
  auto body = parse_json_object(req);
  if (!body.has_value()) return send_status(res, body.status());
  if (!check_model(*body, state.clip_slot ? &*state.clip_slot : nullptr, "clip", res)) return;
  auto format = string_field(*body, "encoding_format", "float");
  if (!format.has_value()) return send_status(res, format.status());
  if (*format != "float" && *format != "base64") {
    return send_error(res, 400, "'encoding_format' must be \"float\" or \"base64\", not '" + *format + "'",
                      "invalid_request_error", "", "encoding_format");
  }
  auto inputs = parse_inputs(*body);
  if (!inputs.has_value()) return send_status(res, inputs.status());
  Admission::Lease lease;
  if (!admit(*state.clip_slot, deadline, res, lease)) return;
  Json data = Json::array();
  // Decoded once admitted, on the model's thread (runner.h).
  auto images = state.clip_slot->runner->call([&] { return decode_image_urls(inputs->image_urls); });
  if (!images.has_value()) return send_status(res, images.status());
  data.get_ref<Json::array_t&>().resize(inputs->texts.size() + images->size());
  const bool base64 = *format == "base64";
  if (!inputs->texts.empty()) {
    auto rows = state.clip_slot->runner->call([&] { return state.clip->embed_texts(inputs->texts); });
    if (!rows.has_value()) return send_status(res, rows.status());
    for (size_t i = 0; i < inputs->texts.size(); ++i) {
      data[inputs->text_index[i]] = embedding_json(*rows, static_cast<int64_t>(i), base64);
    }
  }
  if (!images->empty()) {
    std::vector<ImageView> views;
    for (const RequestImage& image : *images) views.push_back(image.image.view());
    auto rows = state.clip_slot->runner->call([&] { return state.clip->embed_images(views); });
    if (!rows.has_value()) return send_status(res, rows.status());
    for (size_t i = 0; i < views.size(); ++i) {
      data[inputs->image_index[i]] = embedding_json(*rows, static_cast<int64_t>(i), base64);
    }
  }
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = Json{{"object", "embedding"}, {"index", i}, {"embedding", std::move(data[i])}};
  }
  // CLIP's tokens are not counted: usage stays 0 (OpenAI's clients only read it).
  send_json(res, {{"object", "list"},
                  {"data", std::move(data)},
                  {"model", state.clip_slot->kind},
                  {"usage", {{"prompt_tokens", 0}, {"total_tokens", 0}}}});
}

}  // namespace edgemm::cli::serve
