// InnerKeyValueCallbacks: a pjrtkit::KeyValueStore handed to an inner plugin's
// PJRT_Client_Create as its kv_get / kv_try_get / kv_put callbacks.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_KEY_VALUE_CALLBACKS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_KEY_VALUE_CALLBACKS_H_

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/key_value_store.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Static callbacks whose user_arg is the KeyValueStore; errors are made with the inner plugin's
// own PJRT_CallbackError (so the inner plugin can read and free them), values are copied into
// new[] arrays freed by the deleter the callbacks set. The store must outlive the inner client
// (InnerClient keeps it).
class InnerKeyValueCallbacks {
 public:
  // Points the kv fields of `args` at `store` (not owned).
  static void Fill(KeyValueStore* store, PJRT_Client_Create_Args* args);

 private:
  static PJRT_Error* Get(PJRT_KeyValueGetCallback_Args* args);
  static PJRT_Error* TryGet(PJRT_KeyValueTryGetCallback_Args* args);
  static PJRT_Error* Put(PJRT_KeyValuePutCallback_Args* args);
  static void DeleteValue(char* value);
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_KEY_VALUE_CALLBACKS_H_
