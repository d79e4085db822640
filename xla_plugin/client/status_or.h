// StatusOr<T>: a value or an error Status (an absl::StatusOr look-alike with no absl).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_OR_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_OR_H_

#include <optional>
#include <utility>

#include "xla_plugin/client/status.h"

namespace pjrtkit {

// Holds either a T or a non-OK Status. Building one from an OK Status is a programming error and is
// turned into an INTERNAL status, never an abort.
template <typename T>
class StatusOr {
 public:
  // Holds `value`.
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design.
  // Holds the error `status`.
  StatusOr(Status status)  // NOLINT: implicit by design.
      : status_(status.ok() ? Internal("StatusOr built from an OK status") : std::move(status)) {}

  // True when a value is held.
  bool ok() const { return value_.has_value(); }
  // The error, or OK when a value is held.
  const Status& status() const { return status_; }
  // The value; only valid when ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;            // OK when value_ is set.
  std::optional<T> value_;  // The value, when there is one.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_STATUS_OR_H_
