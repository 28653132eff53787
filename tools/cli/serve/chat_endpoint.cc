// POST /v1/chat/completions (docs/serve.md "Chat"): OpenAI's request and response on the VLM
// package, with server-sent events for "stream": true. The VLM keeps the KV cache of the last
// conversation: a request whose images start with that conversation's images continues it
// (VlmModel::extend re-uses every leading token that matches), any other starts anew.
#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>

#include "../vlm_options.h"
#include "endpoints.h"
#include "http_json.h"
#include "request_image.h"

namespace edgemm::cli::serve {

namespace {

/// A parsed, checked chat completion request.
struct ChatRequest {
  std::vector<vlm::ChatMessage> messages;
  std::vector<ImageUrl> image_urls;  // every image part, in order
  std::vector<RequestImage> images;  // decoded once admitted (decode_image_urls)
  size_t last_user_images = 0;       // images in the last user message (the last ones of `images`)
  vlm::GenerateOptions generate;
  std::vector<std::string> stop;  // stop strings
  bool stream = false;
  bool include_usage = false;
  bool ocr = false;  // OCR+VQA on the last user message's image (extension)
};

Status bad(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

/// A number field in [lo, hi], or `fallback` when absent or null.
Expected<double> number_field(const Json& body, const char* key, double fallback, double lo, double hi) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number()) return bad(std::string("'") + key + "' must be a number, not " + it->type_name());
  const double v = it->get<double>();
  if (!(v >= lo && v <= hi)) {
    std::ostringstream range;
    range << "'" << key << "' must be in [" << lo << ", " << hi << "], got " << it->dump();
    return bad(range.str());
  }
  return v;
}

/// An integer field in [lo, hi], or nullopt when absent or null (1.0 counts as an integer, 2.7 not).
Expected<std::optional<int64_t>> integer_field(const Json& body, const char* key, int64_t lo, int64_t hi) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  const bool integral = it->is_number_integer() ||
                        (it->is_number_float() && std::isfinite(it->get<double>()) &&
                         std::floor(it->get<double>()) == it->get<double>() && std::fabs(it->get<double>()) < 9.2e18);
  if (!integral) return bad(std::string("'") + key + "' must be an integer, not " + it->dump());
  const int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}
                        ? INT64_MAX
                        : (it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>());
  if (v < lo || v > hi) {
    return bad(std::string("'") + key + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
               it->dump());
  }
  return std::optional<int64_t>(v);
}

Expected<bool> bool_field(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) return bad(std::string("'") + key + "' must be true or false, not " + it->type_name());
  return it->get<bool>();
}

/// One message's content: a string, or a list of text and image_url parts.
Status parse_content(const Json& content, const std::string& where, vlm::ChatMessage& message,
                     std::vector<ImageUrl>& image_urls) {
  using Part = vlm::ChatPart;
  if (content.is_string()) {
    message.content.push_back({Part::Type::kText, content.get<std::string>()});
    return Status::ok();
  }
  if (!content.is_array()) {
    return bad(where + " must be a string or a list of parts, not " + std::string(content.type_name()));
  }
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!part.is_object()) return bad(at + " must be an object {\"type\": ...}");
    EDGEMM_ASSIGN_OR_RETURN(const std::string type, string_field(part, "type"));
    if (type == "text") {
      auto text = part.find("text");
      if (text == part.end() || !text->is_string()) return bad(at + ".text must be a string");
      message.content.push_back({Part::Type::kText, text->get<std::string>()});
    } else if (type == "image_url") {
      auto url = part.find("image_url");
      if (url == part.end()) return bad(at + " has no \"image_url\"");
      image_urls.emplace_back(*url, at + ".image_url");
      message.content.push_back({Part::Type::kImage, ""});
    } else {
      return bad(at + ".type '" + type + "' is not supported (text, image_url)");
    }
  }
  return Status::ok();
}

Status parse_messages(const Json& body, ChatRequest& out) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) return bad("'messages' must be a non-empty list");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return bad(at + " must be an object {\"role\", \"content\"}");
    if (!m.contains("role")) return bad(at + " has no role (system, user, assistant)");
    auto role_field = string_field(m, "role");
    if (!role_field.has_value()) return bad(at + "." + role_field.status().message());
    std::string role = *role_field;
    if (role == "developer") role = "system";  // OpenAI's newer name for system messages
    if (role != "system" && role != "user" && role != "assistant") {
      return bad(at + ".role '" + role + "' is not supported (system, user, assistant)");
    }
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) return bad(at + " has no content");
    vlm::ChatMessage message;
    message.role = role;
    const size_t before = out.image_urls.size();
    EDGEMM_RETURN_IF_ERROR(parse_content(*content, at + ".content", message, out.image_urls));
    if (role == "user") out.last_user_images = out.image_urls.size() - before;
    out.messages.push_back(std::move(message));
  }
  if (out.messages.back().role != "user") return bad("the last message must be the user's");
  return Status::ok();
}

Status parse_stop(const Json& body, ChatRequest& out) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return Status::ok();
  const Json list = it->is_string() ? Json::array({*it}) : *it;
  if (!list.is_array() || list.size() > 4) return bad("'stop' must be a string or a list of up to 4 strings");
  for (const Json& s : list) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty()) return bad("'stop' strings must be non-empty");
    out.stop.push_back(s.get<std::string>());
  }
  return Status::ok();
}

Expected<ChatRequest> parse_request(const Json& body) {
  ChatRequest out;
  EDGEMM_RETURN_IF_ERROR(parse_messages(body, out));
  EDGEMM_RETURN_IF_ERROR(parse_stop(body, out));
  if (auto n = body.find("n"); n != body.end() && !n->is_null() && *n != 1) return bad("only 'n': 1 is supported");
  // OpenAI's defaults: temperature 1, top_p 1, no top-k.
  EDGEMM_ASSIGN_OR_RETURN(const double temperature, number_field(body, "temperature", 1.0, 0, 2));
  EDGEMM_ASSIGN_OR_RETURN(const double top_p, number_field(body, "top_p", 1.0, 1e-6, 1));
  EDGEMM_ASSIGN_OR_RETURN(std::optional<int64_t> max_tokens, integer_field(body, "max_completion_tokens", 1, 1 << 20));
  if (!max_tokens) {
    EDGEMM_ASSIGN_OR_RETURN(max_tokens, integer_field(body, "max_tokens", 1, 1 << 20));
  }
  EDGEMM_ASSIGN_OR_RETURN(const std::optional<int64_t> seed, integer_field(body, "seed", INT64_MIN, INT64_MAX));
  vlm::SamplingOptions& s = out.generate.sampling;
  s.do_sample = temperature > 0;
  s.temperature = static_cast<float>(temperature);
  s.top_p = static_cast<float>(top_p);
  s.top_k = 0;
  s.seed = seed ? static_cast<uint64_t>(*seed) : std::random_device{}();
  out.generate.max_new_tokens = static_cast<int>(max_tokens.value_or(256));
  EDGEMM_ASSIGN_OR_RETURN(out.stream, bool_field(body, "stream"));
  EDGEMM_ASSIGN_OR_RETURN(out.ocr, bool_field(body, "ocr"));
  if (auto options = body.find("stream_options"); options != body.end() && options->is_object()) {
    EDGEMM_ASSIGN_OR_RETURN(out.include_usage, bool_field(*options, "include_usage"));
  }
  return out;
}

/// The answer so far, cut at the first stop string; says how much of it may be sent (a tail that
/// could still become a stop string is held back, and no UTF-8 character is split).
class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {
    for (const std::string& s : stops_) hold_ = std::max(hold_, s.size() - 1);
  }
  /// Appends a piece; true once a stop string has appeared.
  bool add(const std::string& piece) {
    if (stopped_) return true;
    text_ += piece;
    cut_at_stop(searched_);
    searched_ = text_.size();
    return stopped_;
  }
  /// The text not yet sent that is safe to send (all of it once `final`).
  std::string take(bool final) {
    size_t end = final || stopped_ ? text_.size() : (text_.size() > hold_ ? text_.size() - hold_ : 0);
    while (end > sent_ && end < text_.size() && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) --end;
    if (end <= sent_) return "";
    std::string out = text_.substr(sent_, end - sent_);
    sent_ = end;
    return out;
  }
  /// Ends with the whole answer (the generation's text: the pieces hold back a partial character
  /// at the end): cuts it at the first stop string and returns the part not yet sent.
  std::string finish(const std::string& whole) {
    // The text sent so far (text_'s first sent_ bytes) must begin the whole answer.
    const bool continues = whole.compare(0, sent_, text_, 0, sent_) == 0;
    text_ = whole;
    cut_at_stop(0);
    if (!continues || text_.size() <= sent_) return "";
    return take(true);
  }
  bool stopped() const { return stopped_; }
  const std::string& text() const { return text_; }

 private:
  /// Cuts text_ before a stop string not wholly inside its first `searched` bytes (searched before).
  void cut_at_stop(size_t searched) {
    for (const std::string& s : stops_) {
      const size_t at = text_.find(s, searched > s.size() ? searched - s.size() : 0);
      if (at != std::string::npos) {
        text_.resize(at);
        stopped_ = true;
      }
    }
  }

  std::vector<std::string> stops_;
  size_t hold_ = 0;
  std::string text_;
  size_t searched_ = 0;
  size_t sent_ = 0;
  bool stopped_ = false;
};

/// OCR+VQA: reads the last user message's last image with the OCR pipeline and puts its lines
/// before that message's text (vlm::ocr_grounded_question).
Status ground_in_ocr(ServerState& state, ChatRequest& request, Clock::time_point deadline, httplib::Response& res,
                     bool& answered) {
  if (!state.ocr) return bad("'ocr': true needs the OCR models (start edgemm serve with --ocr DIR)");
  if (request.last_user_images == 0) return bad("'ocr': true needs an image in the last user message");
  Admission::Lease lease;
  if (!admit(*state.ocr_slot, deadline, res, lease)) {
    answered = true;
    return Status::ok();
  }
  EDGEMM_ASSIGN_OR_RETURN(const ocr::OcrResult lines, state.ocr_slot->runner->call([&] {
    return state.ocr->run(request.images.back().image.view());
  }));
  vlm::ChatMessage& last = request.messages.back();
  std::string question;
  std::vector<vlm::ChatPart> parts;
  for (const vlm::ChatPart& part : last.content) {
    if (part.type == vlm::ChatPart::Type::kText) {
      question += (question.empty() ? "" : "\n") + part.text;
    } else {
      parts.push_back(part);
    }
  }
  parts.push_back({vlm::ChatPart::Type::kText, vlm::ocr_grounded_question(lines, question)});
  last.content = std::move(parts);
  return Status::ok();
}

/// What a finished generation says in the response.
struct ChatOutcome {
  vlm::GenerateResult result;
  std::string text;           // the answer, cut at a stop string
  std::string finish_reason;  // "stop" or "length"
};

/// Runs the generation on the VLM (the caller holds its lease). `on_text` gets each part of the
/// answer that may be sent and returns false when the client is gone, which cancels the run.
Expected<ChatOutcome> generate(ServerState& state, ChatRequest& request, Clock::time_point deadline,
                               const std::function<bool(const std::string&)>& on_text) {
  ServedVlm& served = *state.vlm;
  vlm::VlmModel& model = *served.model;
  EDGEMM_ASSIGN_OR_RETURN(const std::string prompt, model.chat_prompt(request.messages));
  std::vector<std::string> keys;
  std::vector<ImageView> views;
  for (const RequestImage& image : request.images) {
    keys.push_back(image.key);
    views.push_back(image.image.view());
  }
  StopText stop_text(request.stop);
  bool client_gone = false;
  bool timed_out = false;
  request.generate.should_stop = [&] {
    timed_out = timed_out || Clock::now() > deadline;
    return stop_text.stopped() || client_gone || timed_out;
  };
  auto on_token = [&](int64_t, const std::string& piece) {
    stop_text.add(piece);
    const std::string ready = stop_text.take(false);
    if (!ready.empty() && on_text && !on_text(ready)) client_gone = true;
  };
  // Continue the cached conversation when its images are where this one starts.
  const std::vector<std::string>* cached = served.image_keys ? &*served.image_keys : nullptr;
  const bool continues =
      cached != nullptr && cached->size() <= keys.size() && std::equal(cached->begin(), cached->end(), keys.begin());
  const auto reused = static_cast<std::ptrdiff_t>(continues ? cached->size() : 0);
  served.image_keys.reset();  // unknown until the generation succeeds
  Expected<vlm::GenerateResult> result =
      continues ? model.extend(prompt, std::vector<ImageView>(views.begin() + reused, views.end()), request.generate,
                               on_token)
                : model.generate(prompt, views, request.generate, on_token);
  if (!result.has_value()) return result.status();
  served.image_keys = keys;
  ChatOutcome outcome;
  outcome.result = std::move(result).value();
  const std::string rest = stop_text.finish(outcome.result.text);
  if (!rest.empty() && on_text) on_text(rest);
  outcome.text = stop_text.text();
  const std::string& reason = outcome.result.stop_reason;
  outcome.finish_reason = reason == "stop_token" || stop_text.stopped() ? "stop" : "length";
  const vlm::GenerateTimings& t = outcome.result.timings;
  state.metrics.add_generation(t.prompt_tokens, t.new_tokens,
                               t.decode_ms > 0 ? std::max<int64_t>(t.new_tokens - 1, 0) / (t.decode_ms / 1000) : 0);
  return outcome;
}

Json usage_json(const vlm::GenerateTimings& t) {
  return {{"prompt_tokens", t.prompt_tokens},
          {"completion_tokens", t.new_tokens},
          {"total_tokens", t.prompt_tokens + t.new_tokens},
          {"prompt_tokens_details", {{"cached_tokens", t.cached_prompt_tokens}}}};
}

/// edgemm's extension of the response: the token ids, why generation stopped, the timings.
Json edgemm_json(const ChatOutcome& o) {
  return {{"ids", o.result.ids}, {"stop_reason", o.result.stop_reason}, {"timings", timings_json(o.result.timings)}};
}

Json chunk_json(const std::string& id, int64_t created, const std::string& model, const Json& delta,
                const Json& finish_reason) {
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"system_fingerprint", "edgemm-" EDGEMM_VERSION},
          {"choices",
           Json::array({{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish_reason}}})}};
}

bool write_event(httplib::DataSink& sink, const Json& data) {
  const std::string event = "data: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
  return sink.write(event.data(), event.size());
}

/// Streams the answer as server-sent events in OpenAI's chunk format, ending with "data: [DONE]".
void stream_chat(ServerState& state, std::shared_ptr<ChatRequest> request, Admission::Lease lease,
                 Clock::time_point deadline, httplib::Response& res) {
  const std::string id = random_id("chatcmpl-");
  const int64_t created = unix_time();
  const std::string model = state.vlm->kind;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // nginx: pass events on at once
  res.set_chunked_content_provider("text/event-stream", [&state, request, lease, deadline, id, created, model](
                                                            size_t, httplib::DataSink& sink) {
    bool open = write_event(sink, chunk_json(id, created, model, {{"role", "assistant"}, {"content", ""}}, nullptr));
    auto on_text = [&](const std::string& text) {
      open = open && write_event(sink, chunk_json(id, created, model, {{"content", text}}, nullptr));
      return open;
    };
    auto outcome = state.vlm->runner->call([&] { return generate(state, *request, deadline, on_text); });
    if (!open) return false;  // the client went away: generation was cancelled
    if (!outcome.has_value()) {
      httplib::Response error;
      send_status(error, outcome.status());
      write_event(sink, Json::parse(error.body));
    } else {
      Json last = chunk_json(id, created, model, Json::object(), outcome->finish_reason);
      last["edgemm"] = edgemm_json(*outcome);
      write_event(sink, last);
      if (request->include_usage) {
        Json usage = chunk_json(id, created, model, Json::object(), nullptr);
        usage["choices"] = Json::array();
        usage["usage"] = usage_json(outcome->result.timings);
        write_event(sink, usage);
      }
    }
    const std::string done = "data: [DONE]\n\n";
    sink.write(done.data(), done.size());
    sink.done();
    return true;
  });
}

}  // namespace

void handle_chat(const httplib::Request& req, httplib::Response& res, ServerState& state) {
  const Clock::time_point deadline = request_deadline(state);
  auto body = parse_json_object(req);
  if (!body.has_value()) return send_status(res, body.status());
  if (!check_model(*body, state.vlm ? &*state.vlm : nullptr, "vlm", res)) return;
  auto parsed = parse_request(*body);
  if (!parsed.has_value()) return send_status(res, parsed.status());
  auto request = std::make_shared<ChatRequest>(std::move(parsed).value());
  Admission::Lease lease;
  if (!admit(*state.vlm, deadline, res, lease)) return;
  // Decoded once admitted (queued requests hold only their bodies), on the model's thread.
  auto images = state.vlm->runner->call([&] { return decode_image_urls(request->image_urls); });
  if (!images.has_value()) return send_status(res, images.status());
  request->images = std::move(images).value();
  if (request->ocr) {
    bool answered = false;
    const Status grounded = ground_in_ocr(state, *request, deadline, res, answered);
    if (answered) return;
    if (!grounded.is_ok()) return send_status(res, grounded);
  }
  if (request->stream) return stream_chat(state, request, std::move(lease), deadline, res);
  auto outcome = state.vlm->runner->call([&] { return generate(state, *request, deadline, {}); });
  if (!outcome.has_value()) return send_status(res, outcome.status());
  send_json(res, {{"id", random_id("chatcmpl-")},
                  {"object", "chat.completion"},
                  {"created", unix_time()},
                  {"model", state.vlm->kind},
                  {"system_fingerprint", "edgemm-" EDGEMM_VERSION},
                  {"choices", Json::array({{{"index", 0},
                                            {"message", {{"role", "assistant"}, {"content", outcome->text}}},
                                            {"logprobs", nullptr},
                                            {"finish_reason", outcome->finish_reason}}})},
                  {"usage", usage_json(outcome->result.timings)},
                  {"edgemm", edgemm_json(*outcome)}});
}

}  // namespace edgemm::cli::serve
