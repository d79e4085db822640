#include "xla_plugin/c_api/ffi_extension.h"

// C++ standard library.
#include <string>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/ffi_registry.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace capi {
namespace {

// A (pointer, size) string argument; INVALID_ARGUMENT "<fn>: args-><what> is empty" when the
// pointer is null or the size is 0.
StatusOr<std::string> NonEmpty(const char* fn, const char* what, const char* data, size_t size) {
  if (data == nullptr || size == 0) {
    return InvalidArgument(std::string(fn) + ": args->" + what + " is empty");
  }
  return std::string(data, size);
}

// `status` with "<fn>: " in front of its message (registry messages do not name the entry point).
Status InEntryPoint(const char* fn, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), std::string(fn) + ": " + status.message());
}

}  // namespace

PJRT_Error* FfiTypeRegister(abi::FfiTypeRegisterArgs* args) {
  return Guard("PJRT_FFI_Type_Register", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kFfiTypeRegisterArgsSize));
    FfiTypeRegistration registration;
    PJRTKIT_ASSIGN_OR_RETURN(registration.type_name,
                             NonEmpty(fn, "type_name", args->type_name, args->type_name_size));
    registration.type_id = args->type_id;
    if (args->type_info != nullptr) {
      registration.deleter = args->type_info->deleter;
      registration.serialize = args->type_info->serialize;
      registration.deserialize = args->type_info->deserialize;
    }
    StatusOr<int64_t> id = FfiRegistry::Global().AddType(registration);
    if (!id.ok()) return InEntryPoint(fn, id.status());
    args->type_id = *id;
    return OkStatus();
  });
}

PJRT_Error* FfiUserDataAdd(abi::FfiUserDataAddArgs* args) {
  return Guard("PJRT_FFI_UserData_Add", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kFfiUserDataAddArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "context", args->context));
    if (args->user_data.type_id == 0) {
      return InvalidArgument(std::string(fn) + ": args->user_data.type_id is 0 (not a type id)");
    }
    return InEntryPoint(fn, args->context->context->AddUserData(args->user_data.type_id,
                                                                args->user_data.data));
  });
}

PJRT_Error* FfiRegisterHandler(abi::FfiRegisterHandlerArgs* args) {
  return Guard("PJRT_FFI_Register_Handler", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kFfiRegisterHandlerArgsSize));
    FfiHandlerRegistration registration;
    PJRTKIT_ASSIGN_OR_RETURN(
        registration.target_name,
        NonEmpty(fn, "target_name", args->target_name, args->target_name_size));
    PJRTKIT_ASSIGN_OR_RETURN(
        registration.platform_name,
        NonEmpty(fn, "platform_name", args->platform_name, args->platform_name_size));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "handler", args->handler));
    registration.handler = args->handler;
    registration.traits = args->traits;
    return InEntryPoint(fn, FfiRegistry::Global().AddHandler(registration));
  });
}

PJRT_Extension_Base* FfiExtensionBase(PJRT_Extension_Base* next) {
  static abi::FfiExtension extension = [next] {
    abi::FfiExtension e{};
    e.base.struct_size = abi::kFfiExtensionSize;
    e.base.type = PJRT_Extension_Type_FFI;
    e.base.next = next;
    e.type_register = &FfiTypeRegister;
    e.user_data_add = &FfiUserDataAdd;
    e.register_handler = &FfiRegisterHandler;
    return e;
  }();
  return &extension.base;
}

}  // namespace capi
}  // namespace pjrtkit
