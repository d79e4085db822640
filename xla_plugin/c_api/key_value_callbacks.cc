#include "xla_plugin/c_api/key_value_callbacks.h"

// C++ standard library.
#include <cstddef>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

}  // namespace

// PJRT_CallbackError: the error a callback returns, as a pjrtkit PJRT_Error.
PJRT_Error* CallbackKeyValueStore::MakeCallbackError(PJRT_Error_Code code, const char* message, size_t message_size) {
  std::string text = message == nullptr ? std::string() : std::string(message, message_size);
  if (code == PJRT_Error_Code_OK) code = PJRT_Error_Code_UNKNOWN;  // An error is never OK.
  return ToPjrtError(Status(ToStatusCode(code), std::move(text)));
}

namespace {

// The Status of what a callback returned (freeing it), with `what` in front of its message.
Status TakeError(PJRT_Error* error, const std::string& what) {
  if (error == nullptr) return OkStatus();
  Status status = Impl(error)->status;
  DestroyError(error);
  return Status(status.code(), what + ": " + status.message());
}

}  // namespace

StatusOr<std::shared_ptr<CallbackKeyValueStore>> CallbackKeyValueStore::FromArgs(
    const PJRT_Client_Create_Args& args) {
  const bool has_try_get =
      args.struct_size >= offsetof(PJRT_Client_Create_Args, kv_try_get_user_arg) + sizeof(void*);
  if (args.kv_get_callback == nullptr && args.kv_put_callback == nullptr) {
    return std::shared_ptr<CallbackKeyValueStore>();
  }
  if (args.kv_get_callback == nullptr || args.kv_put_callback == nullptr) {
    return InvalidArgument(
        "PJRT_Client_Create: kv_get_callback and kv_put_callback must be set together (the "
        "framework's key-value store)");
  }
  std::shared_ptr<CallbackKeyValueStore> store(new CallbackKeyValueStore());
  store->get_ = args.kv_get_callback;
  store->get_arg_ = args.kv_get_user_arg;
  store->put_ = args.kv_put_callback;
  store->put_arg_ = args.kv_put_user_arg;
  if (has_try_get) {
    store->try_get_ = args.kv_try_get_callback;
    store->try_get_arg_ = args.kv_try_get_user_arg;
  }
  return store;
}

void CallbackKeyValueStore::Close() {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  closed_ = true;
}

Status CallbackKeyValueStore::ClosedError(const std::string& what) const {
  return FailedPrecondition("key-value store " + what +
                            ": the framework's key-value store is gone (its PJRT_Client was "
                            "destroyed)");
}

StatusOr<std::string> CallbackKeyValueStore::Get(const std::string& key, int timeout_ms) {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (closed_) return ClosedError("get '" + key + "'");
  PJRT_KeyValueGetCallback_Args args{};
  args.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  args.key = key.data();
  args.key_size = key.size();
  args.timeout_in_ms = timeout_ms;
  args.callback_error = &callback_error_;
  args.user_arg = get_arg_;
  PJRTKIT_RETURN_IF_ERROR(TakeError(get_(&args), "key-value store get '" + key + "'"));
  std::string value(args.value == nullptr ? "" : std::string(args.value, args.value_size));
  if (args.value != nullptr && args.value_deleter_callback != nullptr) {
    args.value_deleter_callback(args.value);
  }
  return value;
}

StatusOr<std::string> CallbackKeyValueStore::TryGet(const std::string& key) {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (closed_) return ClosedError("try-get '" + key + "'");
  if (try_get_ == nullptr) {
    return Unimplemented("the framework passed no kv_try_get_callback");
  }
  PJRT_KeyValueTryGetCallback_Args args{};
  args.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  args.key = key.data();
  args.key_size = key.size();
  args.callback_error = &callback_error_;
  args.user_arg = try_get_arg_;
  PJRTKIT_RETURN_IF_ERROR(TakeError(try_get_(&args), "key-value store try-get '" + key + "'"));
  std::string value(args.value == nullptr ? "" : std::string(args.value, args.value_size));
  if (args.value != nullptr && args.value_deleter_callback != nullptr) {
    args.value_deleter_callback(args.value);
  }
  return value;
}

Status CallbackKeyValueStore::Put(const std::string& key, const std::string& value) {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (closed_) return ClosedError("put '" + key + "'");
  PJRT_KeyValuePutCallback_Args args{};
  args.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  args.key = key.data();
  args.key_size = key.size();
  args.value = value.data();
  args.value_size = value.size();
  args.callback_error = &callback_error_;
  args.user_arg = put_arg_;
  return TakeError(put_(&args), "key-value store put '" + key + "'");
}

}  // namespace capi
}  // namespace pjrtkit
