#include "http_json.h"

#include <random>

namespace edgemm::cli::serve {

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& code, const std::string& param) {
  const Json error = {{"error",
                       {{"message", message},
                        {"type", type},
                        {"param", param.empty() ? Json(nullptr) : Json(param)},
                        {"code", code.empty() ? Json(nullptr) : Json(code)}}}};
  res.status = status;
  res.set_content(error.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void send_status(httplib::Response& res, const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kIo:
      return send_error(res, 400, status.message(), "invalid_request_error");
    case StatusCode::kUnsupported:
      return send_error(res, 400, status.message(), "invalid_request_error", "unsupported");
    case StatusCode::kOutOfMemory:
      res.set_header("Retry-After", "5");
      return send_error(res, 503, status.message(), "server_error", "out_of_memory");
    default:
      return send_error(res, 500, status.message(), "server_error");
  }
}

void send_json(httplib::Response& res, const Json& body) {
  res.status = 200;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

Expected<Json> parse_json_object(const httplib::Request& req) {
  if (req.body.empty()) return Status(StatusCode::kInvalidArgument, "the request has no body: send a JSON object");
  Json body;
  try {
    body = Json::parse(req.body);
  } catch (const Json::parse_error& e) {
    return Status(StatusCode::kInvalidArgument,
                  "the body is not valid JSON (at byte " + std::to_string(e.byte) + "): " + e.what());
  } catch (const Json::exception& e) {  // e.g. a number beyond double's range (1e999)
    return Status(StatusCode::kInvalidArgument, std::string("the body's JSON cannot be read: ") + e.what());
  }
  if (!body.is_object()) {
    return Status(StatusCode::kInvalidArgument, std::string("the body must be a JSON object, not ") + body.type_name());
  }
  return body;
}

Clock::time_point request_deadline(const ServerState& state) {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(state.options.timeout_s * 1000));
}

bool admit(ServedModel& model, Clock::time_point deadline, httplib::Response& res, Admission::Lease& lease) {
  switch (model.admission->acquire(deadline, lease)) {
    case Admission::Result::kAdmitted:
      return true;
    case Admission::Result::kFull:
      res.set_header("Retry-After", "1");
      send_error(res, 429,
                 "model '" + model.kind + "' is busy: " + std::to_string(model.admission->running()) + " running and " +
                     std::to_string(model.admission->waiting()) + " waiting (--parallel, --queue); retry later",
                 "rate_limit_error", "queue_full");
      return false;
    case Admission::Result::kTimedOut:
      res.set_header("Retry-After", "1");
      send_error(res, 503, "timed out waiting for model '" + model.kind + "' (--timeout)", "unavailable_error",
                 "timeout");
      return false;
  }
  return false;
}

bool check_model(const Json& body, const ServedModel* model, const std::string& kind, httplib::Response& res) {
  auto name = string_field(body, "model");
  if (!name.has_value()) {
    send_error(res, 400, name.status().message(), "invalid_request_error", "", "model");
    return false;
  }
  if (model == nullptr) {
    send_error(res, 404, "no " + kind + " model is loaded (start edgemm serve with --" + kind + " DIR)",
               "invalid_request_error", "model_not_found", "model");
    return false;
  }
  if (!model->answers_to(*name)) {
    send_error(res, 404,
               "model '" + *name + "' is not served here (this endpoint serves '" + model->kind + "'" +
                   (model->folder.empty() ? "" : " or '" + model->folder + "'") + ")",
               "invalid_request_error", "model_not_found", "model");
    return false;
  }
  return true;
}

Expected<std::string> string_field(const Json& body, const char* key, const std::string& fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    return Status(StatusCode::kInvalidArgument, std::string("'") + key + "' must be a string, not " + it->type_name());
  }
  return it->get<std::string>();
}

std::string random_id(const std::string& prefix) {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static const char kHex[] = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id.push_back(kHex[generator() % 16]);
  return id;
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace edgemm::cli::serve
