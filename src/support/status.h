// Status and Expected<T>: errors are values at every API boundary.
// A Status carries a small code and a message that names what failed and where
// (file:line:col for parse errors, op name and location for verifier and runtime errors).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace wf {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad user input: shapes, dtypes, attributes, CLI flags
  kParseError,        // malformed MLIR text
  kVerifyError,       // IR violates an op's constraints
  kNotFound,          // missing file, function, tensor, custom_call target
  kUnimplemented,     // valid input that WarpForge does not support (yet)
  kOutOfRange,        // index or size beyond limits
  kResourceExhausted, // out of memory
  kInternal,          // a WarpForge bug
  kUnavailable,       // a rank of a distributed job, its store or its network stopped answering
};

const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: message"
  std::string toString() const;
  // Returns a copy with `context` prepended: "context: message".
  Status withContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status parseError(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
inline Status verifyError(std::string m) { return {StatusCode::kVerifyError, std::move(m)}; }
inline Status notFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status outOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status internalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

// Expected<T>: either a T or a non-ok Status.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : storage_(std::move(value)) {}  // NOLINT(implicit)
  Expected(Status status) : storage_(std::move(status)) {  // NOLINT(implicit)
    assert(!std::get<Status>(storage_).isOk() && "Expected built from an ok Status");
  }

  bool hasValue() const { return storage_.index() == 0; }
  explicit operator bool() const { return hasValue(); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Status& status() const {
    static const Status okStatus;
    return hasValue() ? okStatus : std::get<1>(storage_);
  }
  Status takeStatus() && { return hasValue() ? Status() : std::get<1>(std::move(storage_)); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace wf

#define WF_CONCAT_INNER(a, b) a##b
#define WF_CONCAT(a, b) WF_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define WF_RETURN_IF_ERROR(expr)                \
  do {                                          \
    ::wf::Status wf_status_ = (expr);           \
    if (!wf_status_.isOk()) return wf_status_;  \
  } while (0)

// WF_ASSIGN_OR_RETURN(auto x, makeX());  declares x from an Expected or returns its Status.
#define WF_ASSIGN_OR_RETURN(lhs, expr) \
  WF_ASSIGN_OR_RETURN_IMPL(WF_CONCAT(wf_expected_, __LINE__), lhs, expr)
#define WF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.hasValue()) return std::move(tmp).takeStatus(); \
  lhs = std::move(tmp).value()
