// POST /v1/ocr (docs/serve.md "OCR"), edgemm's extension: one image, as a JSON body
// {"image": "data:..."} (or OpenAI's {"image_url": {"url": "data:..."}}) or as the raw bytes of the
// file (any other Content-Type); the answer is that image's entry of `edgemm ocr --json`.
#include "../ocr_json.h"
#include "endpoints.h"
#include "http_json.h"
#include "request_image.h"

namespace edgemm::cli::serve {

namespace {

Expected<RequestImage> request_image(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (type.rfind("application/json", 0) != 0) {
    if (req.body.empty()) {
      return Status(StatusCode::kInvalidArgument, "the request has no body: send an image file or a JSON object");
    }
    return decode_image_bytes(req.body, "the request body");
  }
  EDGEMM_ASSIGN_OR_RETURN(const Json body, parse_json_object(req));
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
  const Clock::time_point start = Clock::now();
  auto image = request_image(req);
  if (!image.has_value()) return send_status(res, image.status());
  const double decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  Admission::Lease lease;
  if (!admit(*state.ocr_slot, deadline, res, lease)) return;
  auto result = state.ocr->run(image->image.view());
  if (!result.has_value()) return send_status(res, result.status());
  result->timings.decode_ms = decode_ms;
  result->timings.total_ms += decode_ms;
  send_json(res, ocr_image_json("request", *result));
}

}  // namespace edgemm::cli::serve
