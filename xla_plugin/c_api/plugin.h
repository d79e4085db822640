// PJRT_Plugin_* entry points. The Factory-specific parts are thin templates in api.h that pass
// the factory's functions to these.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_PLUGIN_H_
#define PJRTKIT_XLA_PLUGIN_C_API_PLUGIN_H_

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace capi {

// PJRT_Plugin_Initialize: checks `args`, then runs `initialize` (the factory's Initialize).
PJRT_Error* PluginInitializeWith(PJRT_Plugin_Initialize_Args* args, Status (*initialize)());

// PJRT_Plugin_Attributes: checks `args`, then points the outputs at `attributes()` (the
// factory's attributes, which live for the whole process).
PJRT_Error* PluginAttributesFrom(PJRT_Plugin_Attributes_Args* args,
                                 const NamedValueList& (*attributes)());

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_PLUGIN_H_
