// PJRT_ExecuteContext_* entry points. A context carries per-execution data (FFI user data) and is
// passed in PJRT_ExecuteOptions::context; it belongs to no client.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_EXECUTE_CONTEXT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_EXECUTE_CONTEXT_H_

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_ExecuteContext_Create: a new, empty context.
PJRT_Error* ExecuteContextCreate(PJRT_ExecuteContext_Create_Args* args);
// PJRT_ExecuteContext_Destroy: frees a context (nullptr is fine).
PJRT_Error* ExecuteContextDestroy(PJRT_ExecuteContext_Destroy_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_EXECUTE_CONTEXT_H_
