// PJRT_Extension_Type_Gpu_Custom_Call, forwarded: what JAX's CUDA plugin package uses to register
// GPU custom-call targets (legacy and typed FFI) with XLA:GPU. No handles; errors translated.
#include "xla/pjrt/c/pjrt_c_api_gpu_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_Gpu_Custom_Call* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* RegisterCustomCall(PJRT_Gpu_Register_Custom_Call_Args* args) {
  return Guard("PJRT_Gpu_Register_Custom_Call", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Gpu_Register_Custom_Call_Args, handler_execute)));
    if (args->function_name == nullptr) return NullHandleError(fn, "function_name");
    return FromInner(fn, inner_extension->custom_call(args));
  });
}

}  // namespace

PJRT_Extension_Base* ForwardGpuCustomCall(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner = FindInner(
      PJRT_Extension_Type_Gpu_Custom_Call, PJRTKIT_ARGS_SIZE(PJRT_Gpu_Custom_Call, custom_call));
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_Gpu_Custom_Call*>(inner);
  static PJRT_Gpu_Custom_Call extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, custom_call, &RegisterCustomCall);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
