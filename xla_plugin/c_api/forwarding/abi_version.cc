// PJRT_Extension_Type_AbiVersion, forwarded: the runtime ABI version of a client and the ABI
// version of an executable, and what can be asked of them (compatibility, protos, platform ids).
// pjrtkit's client and executable are translated; the version objects handed out are the inner
// plugin's, and every other entry point passes them back to it unchanged.
#include "xla/pjrt/c/pjrt_c_api_abi_version_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_AbiVersion_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* ClientRuntimeAbiVersion(PJRT_Client_RuntimeAbiVersion_Args* args) {
  return Guard("PJRT_Client_RuntimeAbiVersion", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_RuntimeAbiVersion_Args, abi_version)));
    PJRT_Client_RuntimeAbiVersion_Args inner{};
    inner.struct_size = PJRT_Client_RuntimeAbiVersion_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.client, InnerClient(fn, "client", args->client));
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->client_runtime_abi_version(&inner)));
    args->abi_version = inner.abi_version;
    return OkStatus();
  });
}

PJRT_Error* ExecutableGetAbiVersion(PJRT_Executable_GetAbiVersion_Args* args) {
  return Guard("PJRT_Executable_GetAbiVersion", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_GetAbiVersion_Args, abi_version)));
    PJRT_Executable_GetAbiVersion_Args inner{};
    inner.struct_size = PJRT_Executable_GetAbiVersion_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.executable,
                             InnerExecutable(fn, "executable", args->executable));
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->executable_get_abi_version(&inner)));
    args->abi_version = inner.abi_version;
    return OkStatus();
  });
}

// The entry points whose arguments hold only the inner plugin's version objects and data.
#define PJRTKIT_PASS_THROUGH(name, member)                                         \
  PJRT_Error* Forward##member(name##_Args* args) {                                 \
    return Guard(#name, [&](const char* fn) -> Status {                            \
      PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, sizeof(size_t)));                \
      return FromInner(fn, inner_extension->member(args));                         \
    });                                                                            \
  }
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_Destroy, runtime_abi_version_destroy)
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_IsCompatibleWithRuntime,
                     runtime_abi_version_is_compatible_with_runtime)
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_IsCompatibleWithExecutable,
                     runtime_abi_version_is_compatible_with_executable)
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_ToProto, runtime_abi_version_to_proto)
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_PlatformId, runtime_abi_version_platform_id)
PJRTKIT_PASS_THROUGH(PJRT_ExecutableAbiVersion_Destroy, executable_abi_version_destroy)
PJRTKIT_PASS_THROUGH(PJRT_ExecutableAbiVersion_ToProto, executable_abi_version_to_proto)
PJRTKIT_PASS_THROUGH(PJRT_ExecutableAbiVersion_PlatformId, executable_abi_version_platform_id)
PJRTKIT_PASS_THROUGH(PJRT_RuntimeAbiVersion_FromProto, runtime_abi_version_from_proto)
PJRTKIT_PASS_THROUGH(PJRT_ExecutableAbiVersion_FromProto, executable_abi_version_from_proto)
#undef PJRTKIT_PASS_THROUGH

}  // namespace

PJRT_Extension_Base* ForwardAbiVersion(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner = FindInner(
      PJRT_Extension_Type_AbiVersion,
      PJRTKIT_ARGS_SIZE(PJRT_AbiVersion_Extension, executable_get_abi_version));
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_AbiVersion_Extension*>(inner);
  static PJRT_AbiVersion_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, client_runtime_abi_version,
                        &ClientRuntimeAbiVersion);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, executable_get_abi_version,
                        &ExecutableGetAbiVersion);
#define PJRTKIT_IF_PRESENT(member) \
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, member, &Forward##member);
  PJRTKIT_IF_PRESENT(runtime_abi_version_destroy)
  PJRTKIT_IF_PRESENT(runtime_abi_version_is_compatible_with_runtime)
  PJRTKIT_IF_PRESENT(runtime_abi_version_is_compatible_with_executable)
  PJRTKIT_IF_PRESENT(runtime_abi_version_to_proto)
  PJRTKIT_IF_PRESENT(runtime_abi_version_platform_id)
  PJRTKIT_IF_PRESENT(executable_abi_version_destroy)
  PJRTKIT_IF_PRESENT(executable_abi_version_to_proto)
  PJRTKIT_IF_PRESENT(executable_abi_version_platform_id)
  PJRTKIT_IF_PRESENT(runtime_abi_version_from_proto)
  PJRTKIT_IF_PRESENT(executable_abi_version_from_proto)
#undef PJRTKIT_IF_PRESENT
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
