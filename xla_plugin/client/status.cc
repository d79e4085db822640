#include "xla_plugin/client/status.h"

namespace pjrtkit {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) rep_.reset(new Rep{code, std::move(message), {}});
}

std::unique_ptr<Status::Rep> Status::CopyRep(const Rep& rep) { return std::make_unique<Rep>(rep); }

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();  // Immutable; never destroyed.
  return rep_ == nullptr ? *kEmpty : rep_->message;
}

const std::vector<std::pair<std::string, std::string>>& Status::payloads() const {
  // Immutable; never destroyed.
  static const auto* const kNone = new std::vector<std::pair<std::string, std::string>>();
  return rep_ == nullptr ? *kNone : rep_->payloads;
}

void Status::SetPayload(std::string key, std::string value) {
  if (ok()) return;
  for (auto& [k, v] : rep_->payloads) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  rep_->payloads.emplace_back(std::move(key), std::move(value));
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(rep_->code)) + ": " + rep_->message;
}

Status InvalidArgument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
Status Unimplemented(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
Status OutOfRange(std::string m) { return Status(StatusCode::kOutOfRange, std::move(m)); }
Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}

}  // namespace pjrtkit
