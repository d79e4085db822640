#include "xla_plugin/c_api/error.h"

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {

void ErrorDestroy(PJRT_Error_Destroy_Args* args) {
  if (args == nullptr || args->struct_size < PJRTKIT_ARGS_SIZE(PJRT_Error_Destroy_Args, error)) {
    return;
  }
  if (args->error == EmergencyError()) return;  // Preallocated; never freed.
  delete args->error;
}

void ErrorMessage(PJRT_Error_Message_Args* args) {
  if (args == nullptr ||
      args->struct_size < PJRTKIT_ARGS_SIZE(PJRT_Error_Message_Args, message_size)) {
    return;
  }
  if (args->error == nullptr) {
    args->message = "";
    args->message_size = 0;
    return;
  }
  const std::string& message = args->error->status.message();
  args->message = message.c_str();
  args->message_size = message.size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  return Guard("PJRT_Error_GetCode", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Error_GetCode_Args, code)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "error", args->error));
    args->code = ToPjrtErrorCode(args->error->status.code());
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
