// PJRT_Extension_Type_Callback, forwarded: callbacks a framework registers on a client (prefatal
// errors, TPU slice building) and their invocation; pjrtkit's client is translated.
#include "xla/pjrt/c/pjrt_c_api_callback_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_Callback_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* RegisterCallback(PJRT_Callback_RegisterCallback_Args* args) {
  return Guard("PJRT_Callback_RegisterCallback", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Callback_RegisterCallback_Args, user_arg)));
    if (args->callback == nullptr) return NullHandleError(fn, "callback");
    PJRT_Callback_RegisterCallback_Args inner = *args;
    inner.struct_size = PJRT_Callback_RegisterCallback_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.client, InnerClient(fn, "client", args->client));
    return FromInner(fn, inner_extension->register_callback(&inner));
  });
}

PJRT_Error* InvokeCallback(PJRT_Callback_InvokeCallback_Args* args) {
  return Guard("PJRT_Callback_InvokeCallback", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Callback_InvokeCallback_Args, args)));
    PJRT_Callback_InvokeCallback_Args inner = *args;
    inner.struct_size = PJRT_Callback_InvokeCallback_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.client, InnerClient(fn, "client", args->client));
    return FromInner(fn, inner_extension->invoke_callback(&inner));
  });
}

}  // namespace

PJRT_Extension_Base* ForwardCallback(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner =
      FindInner(PJRT_Extension_Type_Callback, PJRT_Callback_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_Callback_Extension*>(inner);
  static PJRT_Callback_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, register_callback, &RegisterCallback);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, invoke_callback, &InvokeCallback);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
