// PJRT_Error_* entry points.
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

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_ERROR_H_
