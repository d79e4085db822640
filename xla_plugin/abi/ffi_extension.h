// The PJRT FFI extension (PJRT_Extension_Type_FFI), declared by pjrtkit.
//
// OpenXLA defines this extension in xla/pjrt/c/pjrt_c_api_ffi_extension.h, which the xla-cpu-pjrt
// wheel does not install. These are our own declarations of the same C ABI, written from the
// documented layout of PJRT C API 0.81 (the version of the XLA:CPU plugin the reference device
// runs on; its extension reports the sizes asserted below). pjrtkit serves this extension
// (xla_plugin/c_api/ffi_extension.h) and the reference device calls the inner plugin's one
// (xla_plugin/plugin_wrapper/inner_ffi.h).
//
// Layout (x86-64 / aarch64 LP64):
//   FfiExtension          base (24) | type_register | user_data_add | register_handler  = 48
//   FfiTypeRegisterArgs   struct_size | extension_start | type_name | type_name_size |
//                         type_id (in-out) | type_info                                   = 48
//   FfiTypeInfo           deleter | serialize | deserialize                               = 24
//   FfiUserDataAddArgs    struct_size | extension_start | context | user_data{type_id,data} = 40
//   FfiRegisterHandlerArgs struct_size | target_name | target_name_size | handler |
//                         platform_name | platform_name_size | traits (uint32)           = 52
// `handler` is an XLA_FFI_Handler* (typed FFI, the execute stage); there is no api_version field:
// only typed handlers can be registered through this extension.
#ifndef PJRTKIT_XLA_PLUGIN_ABI_FFI_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_ABI_FFI_EXTENSION_H_

// C and C++ standard library.
#include <cstddef>
#include <cstdint>

// PJRT C API (PJRT_Extension_Base, PJRT_Error, PJRT_ExecuteContext).
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace abi {

// Optional callbacks of an FFI type (XLA: PJRT_FFI_Type_Info). Any may be null.
struct FfiTypeInfo {
  void (*deleter)(void* object);  // Destroys an object of the type.
  void* serialize;                // Reserved by XLA; passed through.
  void* deserialize;              // Reserved by XLA; passed through.
};

// Arguments of FfiExtension::type_register (XLA: PJRT_FFI_Type_Register_Args).
struct FfiTypeRegisterArgs {
  size_t struct_size;                    // kFfiTypeRegisterArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  const char* type_name;                 // Unique name of the type (not NUL-terminated).
  size_t type_name_size;                 // Bytes of type_name.
  int64_t type_id;                       // In: 0 (assign one) or the id to register. Out: the id.
  const FfiTypeInfo* type_info;          // May be null (no callbacks).
};

// A user-data entry for an execute context (XLA: PJRT_FFI_UserData).
struct FfiUserData {
  int64_t type_id;  // A registered type id.
  void* data;       // Borrowed by the context.
};

// Arguments of FfiExtension::user_data_add (XLA: PJRT_FFI_UserData_Add_Args).
struct FfiUserDataAddArgs {
  size_t struct_size;                    // kFfiUserDataAddArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_ExecuteContext* context;          // The context to add to.
  FfiUserData user_data;                 // What to add.
};

// Arguments of FfiExtension::register_handler (XLA: PJRT_FFI_Register_Handler_Args).
struct FfiRegisterHandlerArgs {
  size_t struct_size;          // kFfiRegisterHandlerArgsSize or more.
  const char* target_name;     // Custom-call target name (not NUL-terminated).
  size_t target_name_size;     // Bytes of target_name.
  void* handler;               // XLA_FFI_Handler* (typed FFI); never null.
  const char* platform_name;   // Platform the handler is for (e.g. "pjrtkit", "Host").
  size_t platform_name_size;   // Bytes of platform_name.
  uint32_t traits;             // XLA_FFI_Handler_TraitsBits (bit 0: command-buffer compatible).
};

// Entry points of the extension; each returns nullptr or an error of the plugin that serves it.
using FfiTypeRegisterFn = PJRT_Error* (*)(FfiTypeRegisterArgs* args);
using FfiUserDataAddFn = PJRT_Error* (*)(FfiUserDataAddArgs* args);
using FfiRegisterHandlerFn = PJRT_Error* (*)(FfiRegisterHandlerArgs* args);

// The extension struct found in a PJRT_Api's extension chain with type PJRT_Extension_Type_FFI
// (XLA: PJRT_FFI_Extension).
struct FfiExtension {
  PJRT_Extension_Base base;           // type == PJRT_Extension_Type_FFI.
  FfiTypeRegisterFn type_register;    // Registers an FFI type, assigning its id when asked.
  FfiUserDataAddFn user_data_add;     // Adds user data to an execute context.
  FfiRegisterHandlerFn register_handler;  // Registers a typed FFI handler for a platform.
};

// The struct sizes of PJRT C API 0.81 (offset of the last field + its size, as XLA computes them).
inline constexpr size_t kFfiTypeRegisterArgsSize =
    offsetof(FfiTypeRegisterArgs, type_info) + sizeof(FfiTypeRegisterArgs::type_info);
inline constexpr size_t kFfiUserDataAddArgsSize =
    offsetof(FfiUserDataAddArgs, user_data) + sizeof(FfiUserDataAddArgs::user_data);
inline constexpr size_t kFfiRegisterHandlerArgsSize =
    offsetof(FfiRegisterHandlerArgs, traits) + sizeof(FfiRegisterHandlerArgs::traits);
inline constexpr size_t kFfiExtensionSize =
    offsetof(FfiExtension, register_handler) + sizeof(FfiExtension::register_handler);

// Bit 0 of FfiRegisterHandlerArgs::traits (XLA: PJRT_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE).
inline constexpr uint32_t kFfiTraitCommandBufferCompatible = 1u;

#if defined(__LP64__)
static_assert(kFfiTypeRegisterArgsSize == 48, "PJRT_FFI_Type_Register_Args is 48 bytes");
static_assert(kFfiUserDataAddArgsSize == 40, "PJRT_FFI_UserData_Add_Args is 40 bytes");
static_assert(kFfiRegisterHandlerArgsSize == 52, "PJRT_FFI_Register_Handler_Args is 52 bytes");
static_assert(kFfiExtensionSize == 48, "PJRT_FFI_Extension is 48 bytes");
static_assert(sizeof(FfiTypeInfo) == 24, "PJRT_FFI_Type_Info is 24 bytes");
#endif

}  // namespace abi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_ABI_FFI_EXTENSION_H_
