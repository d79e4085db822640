// CallbackKeyValueStore: the framework's PJRT_Client_Create key-value callbacks as a
// pjrtkit::KeyValueStore (xla_plugin/client/key_value_store.h).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_KEY_VALUE_CALLBACKS_H_
#define PJRTKIT_XLA_PLUGIN_C_API_KEY_VALUE_CALLBACKS_H_

// C++ standard library.
#include <memory>
#include <shared_mutex>
#include <string>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/key_value_store.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {

// Calls the framework's kv_get / kv_try_get / kv_put callbacks. Errors the callbacks report are
// made through pjrtkit's own PJRT_CallbackError (so they are pjrtkit PJRT_Errors, turned into a
// Status and freed here). The framework keeps the callbacks valid only until PJRT_Client_Destroy
// (jaxlib: its C API client owns them), while a device's inner client may live on (executables
// keep it): PJRT_Client_Destroy calls Close(), after which every call answers FAILED_PRECONDITION
// without touching the callbacks. Calls run concurrently; Close() waits for those in flight.
class CallbackKeyValueStore : public KeyValueStore {
 public:
  // The store of `args`, or null when it sets no callbacks. INVALID_ARGUMENT when only one of
  // kv_get_callback / kv_put_callback is set. kv_try_get is read only when `args` is large
  // enough to hold it; without it TryGet answers UNIMPLEMENTED.
  static StatusOr<std::shared_ptr<CallbackKeyValueStore>> FromArgs(
      const PJRT_Client_Create_Args& args);

  // From now on no callback is called (see the class comment). Idempotent.
  void Close();

  StatusOr<std::string> Get(const std::string& key, int timeout_ms) override;
  StatusOr<std::string> TryGet(const std::string& key) override;
  Status Put(const std::string& key, const std::string& value) override;

 private:
  CallbackKeyValueStore() = default;

  // FAILED_PRECONDITION naming `what` once Close() ran.
  Status ClosedError(const std::string& what) const;

  // PJRT_CallbackError: the error a callback returns, as a pjrtkit PJRT_Error.
  static PJRT_Error* MakeCallbackError(PJRT_Error_Code code, const char* message,
                                       size_t message_size);

  PJRT_KeyValueGetCallback get_ = nullptr;         // Blocking get.
  void* get_arg_ = nullptr;                        // Its user_arg.
  PJRT_KeyValueTryGetCallback try_get_ = nullptr;  // Non-blocking get; may be null.
  void* try_get_arg_ = nullptr;                    // Its user_arg.
  PJRT_KeyValuePutCallback put_ = nullptr;         // Put.
  void* put_arg_ = nullptr;                        // Its user_arg.
  // What every callback gets as callback_error (the header asks for a pointer to one).
  PJRT_CallbackError callback_error_ = &CallbackKeyValueStore::MakeCallbackError;
  // Shared by calls in flight, exclusive for Close(); closed_ is read and written under it.
  mutable std::shared_mutex mutex_;
  bool closed_ = false;
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_KEY_VALUE_CALLBACKS_H_
