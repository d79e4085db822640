// OnceCache<T>: a value a handle computes on first use and keeps for its lifetime, so that the
// pointers the C API hands out (strings, arrays) stay valid as long as the handle.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_ONCE_CACHE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_ONCE_CACHE_H_

// C++ standard library.
#include <memory>
#include <mutex>
#include <utility>

// pjrtkit client layer.
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {

// Thread-safe compute-once slot. A failed computation is not cached (the next call retries), a
// successful one is never replaced, so a returned pointer is valid until the cache is destroyed.
template <typename T>
class OnceCache {
 public:
  OnceCache() = default;
  OnceCache(const OnceCache&) = delete;
  OnceCache& operator=(const OnceCache&) = delete;

  // Returns the cached value, computing it with `make()` (a StatusOr<std::unique_ptr<T>>) first
  // if there is none yet.
  template <typename Make>
  StatusOr<const T*> Get(Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (value_ == nullptr) {
      StatusOr<std::unique_ptr<T>> made = make();
      if (!made.ok()) return made.status();
      if (*made == nullptr) return Internal("OnceCache: the computation returned null");
      value_ = std::move(made).value();
    }
    return static_cast<const T*>(value_.get());
  }

 private:
  std::mutex mu_;             // Guards value_.
  std::unique_ptr<T> value_;  // The value, once computed.
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_ONCE_CACHE_H_
