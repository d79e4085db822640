#include "xla_plugin/c_api/plugin.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"

namespace pjrtkit {
namespace capi {

PJRT_Error* PluginInitializeWith(PJRT_Plugin_Initialize_Args* args, Status (*initialize)()) {
  return Guard("PJRT_Plugin_Initialize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Plugin_Initialize_Args, extension_start)));
    return initialize();
  });
}

PJRT_Error* PluginAttributesFrom(PJRT_Plugin_Attributes_Args* args,
                                 const NamedValueList& (*attributes)()) {
  return Guard("PJRT_Plugin_Attributes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Plugin_Attributes_Args, num_attributes)));
    const NamedValueList& list = attributes();
    args->attributes = list.data();
    args->num_attributes = list.size();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
