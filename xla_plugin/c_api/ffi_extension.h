// pjrtkit's PJRT FFI extension (PJRT_Extension_Type_FFI; ABI in xla_plugin/abi/ffi_extension.h).
//
// JAX reaches it through jax_plugins.pjrtkit (xla_client.register_custom_call_handler for
// platform "pjrtkit"), so jax.ffi.register_ffi_target(..., platform="pjrtkit") and
// jax.ffi.register_ffi_type(..., platform="pjrtkit") end up here. Registrations go to the
// process-wide FfiRegistry (ffi_registry.h), which forwards them to the device's clients through
// Client::RegisterFfiHandler / RegisterFfiType, replaying earlier ones at PJRT_Client_Create.
//
//   type_register     PJRT_FFI_Type_Register: type_id 0 gets an id assigned (written back).
//   user_data_add     PJRT_FFI_UserData_Add: adds the data to the PJRT_ExecuteContext's
//                     pjrtkit::ExecuteContext (the device reads it in Execute).
//   register_handler  PJRT_FFI_Register_Handler: a typed FFI handler for a target and platform.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_FFI_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_C_API_FFI_EXTENSION_H_

// PJRT C API and the FFI extension ABI.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/ffi_extension.h"

namespace pjrtkit {
namespace capi {

// The three entry points of the extension.
PJRT_Error* FfiTypeRegister(abi::FfiTypeRegisterArgs* args);
PJRT_Error* FfiUserDataAdd(abi::FfiUserDataAddArgs* args);
PJRT_Error* FfiRegisterHandler(abi::FfiRegisterHandlerArgs* args);

// The extension struct (a function-local static, built on first call with `next` as the next
// extension of the chain). Returns its PJRT_Extension_Base, ready to link into the chain.
PJRT_Extension_Base* FfiExtensionBase(PJRT_Extension_Base* next);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_FFI_EXTENSION_H_
