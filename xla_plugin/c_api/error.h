// PJRT_Error_* entry points, and the function table every pjrtkit PJRT_Error starts with.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_ERROR_H_
#define PJRTKIT_XLA_PLUGIN_C_API_ERROR_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_Error_Destroy: frees `args->error` (nullptr is fine). Bad args are ignored (no way to
// report them).
void ErrorDestroy(PJRT_Error_Destroy_Args* args);

// PJRT_Error_Message: points `args->message` into the error (valid until it is destroyed). Bad
// args leave the outputs untouched.
void ErrorMessage(PJRT_Error_Message_Args* args);

// PJRT_Error_GetCode: the error's code.
PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args);

// PJRT_Error_ForEachPayload: calls `args->visitor(key, value, user_arg)` for each payload of the
// error, in the order they were set.
PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args);

// The function table at the start of every pjrtkit PJRT_Error (PJRT C API 0.117's
// PJRT_Error::vtable): destroy, message, code and payloads without going through PJRT_Api, so an
// error can be handled by code that does not know which plugin made it.
const PJRT_Error_FunctionTable* ErrorFunctionTable();

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_ERROR_H_
