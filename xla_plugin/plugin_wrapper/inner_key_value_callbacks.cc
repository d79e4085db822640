#include "xla_plugin/plugin_wrapper/inner_key_value_callbacks.h"

#include <cstring>
#include <string>

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// `status` as an error made by the inner plugin's `make` (null for OK).
PJRT_Error* ToInnerError(const Status& status, PJRT_CallbackError* make) {
  if (status.ok()) return nullptr;
  const std::string& message = status.message();
  return (*make)(static_cast<PJRT_Error_Code>(static_cast<int>(status.code())), message.data(),
                 message.size());
}

// A new[] copy of `value` (freed by InnerKeyValueCallbacks::DeleteValue).
char* CopyValue(const std::string& value) {
  char* out = new char[value.size() + 1];
  std::memcpy(out, value.data(), value.size());
  out[value.size()] = '\0';
  return out;
}

}  // namespace

void InnerKeyValueCallbacks::Fill(KeyValueStore* store, PJRT_Client_Create_Args* args) {
  args->kv_get_callback = &InnerKeyValueCallbacks::Get;
  args->kv_get_user_arg = store;
  args->kv_put_callback = &InnerKeyValueCallbacks::Put;
  args->kv_put_user_arg = store;
  args->kv_try_get_callback = &InnerKeyValueCallbacks::TryGet;
  args->kv_try_get_user_arg = store;
}

PJRT_Error* InnerKeyValueCallbacks::Get(PJRT_KeyValueGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  StatusOr<std::string> value =
      store->Get(std::string(args->key, args->key_size), args->timeout_in_ms);
  if (!value.ok()) return ToInnerError(value.status(), args->callback_error);
  args->value = CopyValue(*value);
  args->value_size = value->size();
  args->value_deleter_callback = &InnerKeyValueCallbacks::DeleteValue;
  return nullptr;
}

PJRT_Error* InnerKeyValueCallbacks::TryGet(PJRT_KeyValueTryGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  StatusOr<std::string> value = store->TryGet(std::string(args->key, args->key_size));
  if (!value.ok()) return ToInnerError(value.status(), args->callback_error);
  args->value = CopyValue(*value);
  args->value_size = value->size();
  args->value_deleter_callback = &InnerKeyValueCallbacks::DeleteValue;
  return nullptr;
}

PJRT_Error* InnerKeyValueCallbacks::Put(PJRT_KeyValuePutCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  return ToInnerError(store->Put(std::string(args->key, args->key_size),
                                 std::string(args->value, args->value_size)),
                      args->callback_error);
}

void InnerKeyValueCallbacks::DeleteValue(char* value) { delete[] value; }

}  // namespace plugin_wrapper
}  // namespace pjrtkit
