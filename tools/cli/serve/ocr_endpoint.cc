// POST /v1/ocr (docs/serve.md "OCR"), edgemm's extension: one image, as a JSON body
// {"image": "data:..."} (or OpenAI's {"image_url": {"url": "data:..."}}; Content-Type
// application/json, or any body starting with '{') or as the raw bytes of the file; the answer is
// that image's entry of `edgemm ocr --json`.
#include <algorithm>
#include <cctype>

#include "../ocr_json.h"
#include "endpoints.h"
#include "http_json.h"
#include "request_image.h"

namespace edgemm::cli::serve {

namespace {

/// True for a JSON body: it says so, or it starts like an object (curl -d sends JSON as form
/// data); no image format starts with '{'.
bool is_json(const httplib::Request& req) {
  std::string type = req.get_header_value("Content-Type");
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t first = req.body.find_first_not_of(" \t\r\n");
  return type.rfind("application/json", 0) == 0 || (first != std::string::npos && req.body[first] == '{');
}

Expected<RequestImage> json_image(const Json& body) {
  for (const char* key : {"image", "image_url"}) {
    if (auto it = body.find(key); it != body.end()) return decode_image_url(*it, key);
  }
  return Status(StatusCode::kInvalidArgument, "the JSON body has no \"image\" (a data: URL)");
}

}  // namespace

void handle_ocr(const httplib::Request& req, httplib::Response& res, ServerState& state) {
  const Clock::time_point deadline = request_deadline(state);
  if (!state.ocr) {
    return send_error(res, 404, "no ocr model is loaded (start edgemm serve with --ocr DIR)", "invalid_request_error",
                      "model_not_found");
  }
  std::optional<Json> body;
  if (is_json(req)) {
    auto parsed = parse_json_object(req);
    if (!parsed.has_value()) return send_status(res, parsed.status());
    if (!check_model(*parsed, &*state.ocr_slot, "ocr", res)) return;
    body = std::move(parsed).value();
  } else if (req.body.empty()) {
    return send_error(res, 400, "the request has no body: send an image file or a JSON object",
                      "invalid_request_error");
  }
  // Decoded once admitted, so that queued requests hold only their bodies, and on the model's
  // thread, where the image's memory is then reused (runner.h).
  Admission::Lease lease;
  if (!admit(*state.ocr_slot, deadline, res, lease)) return;
  auto result = state.ocr_slot->runner->call([&]() -> Expected<ocr::OcrResult> {
    const Clock::time_point start = Clock::now();
    EDGEMM_ASSIGN_OR_RETURN(const RequestImage image,
                            body ? json_image(*body) : decode_image_bytes(req.body, "the request body"));
    const double decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    EDGEMM_ASSIGN_OR_RETURN(ocr::OcrResult lines, state.ocr->run(image.image.view()));
    lines.timings.decode_ms = decode_ms;
    lines.timings.total_ms += decode_ms;
    return lines;
  });
  if (!result.has_value()) return send_status(res, result.status());
  send_json(res, ocr_image_json("request", *result));
}

}  // namespace edgemm::cli::serve
