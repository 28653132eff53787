#pragma once
/// \file status.h
/// Error handling for the public API: `Status` (cheap on success) and `Expected<T>`.
/// No exception escapes the public API; every failure is a `Status` whose message is a full
/// sentence naming the node, op, input and offending value. Modelled on absl::Status /
/// ONNX Runtime's common::Status.

#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace edgemm {

/// Error categories. The CLI maps each to a distinct non-zero exit code (see exit_code()).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  ///< caller passed a bad value (input name, shape, dtype, option)
  kInvalidModel,     ///< model file is malformed, inconsistent or fails the ONNX checker
  kUnsupported,      ///< valid ONNX we do not implement (op, attribute, dtype)
  kOutOfMemory,      ///< an allocation was refused or a size exceeds the configured limit
  kIo,               ///< a file could not be read or written
  kInternal,         ///< a bug in edgemm
};

/// Human-readable name of a code, e.g. "InvalidModel".
const char* status_code_name(StatusCode code);

/// Result of an operation that returns nothing. Success holds no allocation.
/// Thread safety: immutable after construction; copyable.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status ok() { return Status(); }

  bool is_ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  /// The message without the code prefix; empty on success.
  const std::string& message() const;
  /// "InvalidModel: <message>", or "OK".
  std::string to_string() const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

/// Process exit code for a status: 0 for OK, 2 InvalidArgument, 3 InvalidModel,
/// 4 Unsupported, 5 OutOfMemory, 6 Io, 7 Internal.
int exit_code(const Status& status);

/// Either a value of type T or an error Status (never an OK status).
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  /// An OK status carries no value: it becomes an Internal error rather than an empty success.
  Expected(Status status)  // NOLINT: implicit by design
      : data_(status.is_ok() ? Status(StatusCode::kInternal, "an Expected was built from an OK status")
                             : std::move(status)) {}

  bool has_value() const { return data_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// The error; OK when a value is held.
  Status status() const { return has_value() ? Status::ok() : std::get<1>(data_); }

 private:
  std::variant<T, Status> data_;
};

/// Builds an error status (same as the constructor; reads better in return statements).
Status make_error(StatusCode code, std::string message);

}  // namespace edgemm

/// Returns the status from the enclosing function if `expr` failed.
#define EDGEMM_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::edgemm::Status edgemm_status_ = (expr); \
    if (!edgemm_status_.is_ok()) return edgemm_status_; \
  } while (0)

#define EDGEMM_CONCAT_INNER_(a, b) a##b
#define EDGEMM_CONCAT_(a, b) EDGEMM_CONCAT_INNER_(a, b)
/// `EDGEMM_ASSIGN_OR_RETURN(auto x, f())`: unwraps an Expected or returns its error.
/// Expands to several statements: use it only inside braces, at most once per line.
#define EDGEMM_ASSIGN_OR_RETURN(lhs, expr) \
  EDGEMM_ASSIGN_OR_RETURN_IMPL_(EDGEMM_CONCAT_(edgemm_expected_, __LINE__), lhs, expr)
#define EDGEMM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.has_value()) return tmp.status();          \
  lhs = std::move(tmp).value()
