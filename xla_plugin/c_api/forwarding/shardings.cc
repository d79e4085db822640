// PJRT_Extension_Type_Shardings, forwarded: an executable's parameter and output shardings (HLO
// sharding strings owned by the inner executable, which pjrtkit's PJRT_Executable keeps alive).
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_Shardings_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* ParameterShardings(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args) {
  return Guard("PJRT_Shardings_PJRT_Executable_ParameterShardings", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args, sharding_sizes)));
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args inner{};
    inner.struct_size = PJRT_Shardings_PJRT_Executable_ParameterShardings_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.executable,
                             InnerExecutable(fn, "executable", args->executable));
    PJRTKIT_RETURN_IF_ERROR(
        FromInner(fn, inner_extension->PJRT_Shardings_PJRT_Executable_ParameterShardings(&inner)));
    args->num_parameters = inner.num_parameters;
    args->shardings = inner.shardings;
    args->sharding_sizes = inner.sharding_sizes;
    return OkStatus();
  });
}

PJRT_Error* OutputShardings(PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args) {
  return Guard("PJRT_Shardings_PJRT_Executable_OutputShardings", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Shardings_PJRT_Executable_OutputShardings_Args, sharding_sizes)));
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args inner{};
    inner.struct_size = PJRT_Shardings_PJRT_Executable_OutputShardings_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.executable,
                             InnerExecutable(fn, "executable", args->executable));
    PJRTKIT_RETURN_IF_ERROR(
        FromInner(fn, inner_extension->PJRT_Shardings_PJRT_Executable_OutputShardings(&inner)));
    args->num_outputs = inner.num_outputs;
    args->shardings = inner.shardings;
    args->sharding_sizes = inner.sharding_sizes;
    return OkStatus();
  });
}

}  // namespace

PJRT_Extension_Base* ForwardShardings(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner =
      FindInner(PJRT_Extension_Type_Shardings, PJRT_Shardings_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_Shardings_Extension*>(inner);
  static PJRT_Shardings_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, PJRT_Shardings_PJRT_Executable_ParameterShardings,
                        &ParameterShardings);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, PJRT_Shardings_PJRT_Executable_OutputShardings,
                        &OutputShardings);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
