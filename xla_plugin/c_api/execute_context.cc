#include "xla_plugin/c_api/execute_context.h"

// C++ standard library.
#include <memory>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {

PJRT_Error* ExecuteContextCreate(PJRT_ExecuteContext_Create_Args* args) {
  return Guard("PJRT_ExecuteContext_Create", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_ExecuteContext_Create_Args, context)));
    args->context = new PJRT_ExecuteContext{std::make_unique<ExecuteContext>()};
    return OkStatus();
  });
}

PJRT_Error* ExecuteContextDestroy(PJRT_ExecuteContext_Destroy_Args* args) {
  return Guard("PJRT_ExecuteContext_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_ExecuteContext_Destroy_Args, context)));
    delete args->context;
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
