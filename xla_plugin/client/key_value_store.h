// KeyValueStore: the framework's cross-process key-value store, as a device sees it.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_KEY_VALUE_STORE_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_KEY_VALUE_STORE_H_

#include <string>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {

// A key-value store shared by every process of a multi-process job (JAX: the coordination
// service behind jax.distributed.initialize()). The C-API layer adapts the framework's
// PJRT_Client_Create callbacks to it; devices read and write through it while they create their
// client (and may keep it as long as the client lives). Implementations are thread-safe.
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  // The value of `key`, waiting up to `timeout_ms` for another process to put it;
  // DEADLINE_EXCEEDED (or the framework's code) when it does not appear in time.
  virtual StatusOr<std::string> Get(const std::string& key, int timeout_ms) = 0;
  // The value of `key` now; NOT_FOUND when it is not there.
  virtual StatusOr<std::string> TryGet(const std::string& key) = 0;
  // Stores `value` under `key`.
  virtual Status Put(const std::string& key, const std::string& value) = 0;
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_KEY_VALUE_STORE_H_
