// Status: the error type of the pjrtkit client layer (an absl::Status look-alike with no absl).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pjrtkit {

// Canonical error codes. The numeric values equal PJRT_Error_Code (and absl::StatusCode), which the
// C-API layer checks with static_asserts.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Returns the canonical upper-case name of `code` ("INVALID_ARGUMENT", ...).
const char* StatusCodeName(StatusCode code);

// An error code with a message; the default-constructed Status is OK. An OK status holds no
// allocation (a null pointer): every C-API call makes, moves and destroys several, so that path
// costs a pointer test. An error owns its code, message and payloads on the heap.
class Status {
 public:
  // Creates an OK status.
  Status() = default;
  // Creates a status with `code` and `message`; a kOk code drops the message.
  Status(StatusCode code, std::string message);
  // Copies make an independent error (payloads included); moves leave the source OK.
  Status(const Status& other) : rep_(other.rep_ == nullptr ? nullptr : CopyRep(*other.rep_)) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ == nullptr ? nullptr : CopyRep(*other.rep_);
    return *this;
  }
  Status(Status&& other) noexcept = default;
  Status& operator=(Status&& other) noexcept = default;
  ~Status() = default;

  // True when the code is kOk.
  bool ok() const { return rep_ == nullptr; }
  // The error code.
  StatusCode code() const { return rep_ == nullptr ? StatusCode::kOk : rep_->code; }
  // The error text (empty for OK).
  const std::string& message() const;
  // "OK" or "<CODE_NAME>: <message>".
  std::string ToString() const;
  // Key-value payloads (absl::Status payloads; PJRT_Error_ForEachPayload reports them), in the
  // order set. An OK status keeps none.
  const std::vector<std::pair<std::string, std::string>>& payloads() const;
  // Sets payload `key` to `value`, replacing an earlier one of that key (no-op when OK).
  void SetPayload(std::string key, std::string value);

 private:
  // What an error holds.
  struct Rep {
    StatusCode code;                                            // Never kOk.
    std::string message;                                        // The error text.
    std::vector<std::pair<std::string, std::string>> payloads;  // See payloads().
  };
  // A heap copy of `rep` (out of line: only errors are copied this way).
  static std::unique_ptr<Rep> CopyRep(const Rep& rep);

  std::unique_ptr<Rep> rep_;  // Null when OK.
};

// Shorthands for the codes pjrtkit uses. OkStatus is inline: every C-API call returns one.
inline Status OkStatus() { return Status(); }
Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status FailedPrecondition(std::string message);
Status Unimplemented(std::string message);
Status Internal(std::string message);
Status OutOfRange(std::string message);
Status ResourceExhausted(std::string message);

}  // namespace pjrtkit

// Returns early from the enclosing function when `expr` (a Status) is not OK.
#define PJRTKIT_RETURN_IF_ERROR(expr)                \
  do {                                               \
    ::pjrtkit::Status pjrtkit_status_ = (expr);      \
    if (!pjrtkit_status_.ok()) return pjrtkit_status_; \
  } while (0)

#define PJRTKIT_CONCAT_INNER_(a, b) a##b
#define PJRTKIT_CONCAT_(a, b) PJRTKIT_CONCAT_INNER_(a, b)

// `PJRTKIT_ASSIGN_OR_RETURN(auto x, StatusOrExpr());` declares x or returns the error.
#define PJRTKIT_ASSIGN_OR_RETURN(lhs, expr) \
  PJRTKIT_ASSIGN_OR_RETURN_IMPL_(PJRTKIT_CONCAT_(pjrtkit_status_or_, __LINE__), lhs, expr)
#define PJRTKIT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_H_
