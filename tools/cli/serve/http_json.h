#pragma once
/// \file http_json.h
/// Request and response helpers shared by the endpoints: OpenAI's error object, edgemm's
/// statuses as HTTP statuses, JSON bodies and admission to a model.

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "admission.h"
#include "edgemm/status.h"
#include "state.h"

namespace edgemm::cli::serve {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// Writes OpenAI's error object {"error": {"message", "type", "param", "code"}} with `status`;
/// `type` as OpenAI names it ("invalid_request_error", "authentication_error", ...), `code` and
/// `param` null when empty.
void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& code = "", const std::string& param = "");

/// An edgemm error as HTTP: kInvalidArgument 400, kUnsupported 400, kOutOfMemory 503, kIo 400
/// (an image that cannot be read is the request's fault), kInvalidModel and kInternal 500.
void send_status(httplib::Response& res, const Status& status);

/// Writes `body` as application/json with status 200.
void send_json(httplib::Response& res, const Json& body);

/// The request's body as a JSON object. Errors: kInvalidArgument for an empty body, malformed
/// JSON (with the parser's byte offset) or a body that is not an object.
Expected<Json> parse_json_object(const httplib::Request& req);

/// The deadline of a request that starts now.
Clock::time_point request_deadline(const ServerState& state);

/// Takes a run slot of `model` for the request, or writes 429 (queue full, with Retry-After) or
/// 503 (waited until the deadline) and returns false.
bool admit(ServedModel& model, Clock::time_point deadline, httplib::Response& res, Admission::Lease& lease);

/// Checks the request's optional "model" field against `model` (nullptr when that kind is not
/// loaded); writes 400 for a non-string and 404 (model_not_found) for a model that is not
/// served, and returns false.
bool check_model(const Json& body, const ServedModel* model, const std::string& kind, httplib::Response& res);

/// A string field of `body`, or `fallback` when absent or null; kInvalidArgument naming the field
/// for any other type.
Expected<std::string> string_field(const Json& body, const char* key, const std::string& fallback = "");

/// "chatcmpl-" + 24 random hex digits (or another prefix).
std::string random_id(const std::string& prefix);

/// Seconds since the Unix epoch.
int64_t unix_time();

}  // namespace edgemm::cli::serve
