#include "edgemm/status.h"

namespace edgemm {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kInvalidModel: return "InvalidModel";
    case StatusCode::kUnsupported: return "Unsupported";
    case StatusCode::kOutOfMemory: return "OutOfMemory";
    case StatusCode::kIo: return "Io";
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) state_ = std::make_shared<const State>(State{code, std::move(message)});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::to_string() const {
  if (!state_) return "OK";
  return std::string(status_code_name(state_->code)) + ": " + state_->message;
}

int exit_code(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument: return 2;
    case StatusCode::kInvalidModel: return 3;
    case StatusCode::kUnsupported: return 4;
    case StatusCode::kOutOfMemory: return 5;
    case StatusCode::kIo: return 6;
    case StatusCode::kInternal: return 7;
  }
  return 7;
}

Status make_error(StatusCode code, std::string message) { return Status(code, std::move(message)); }

}  // namespace edgemm
