#include "xla_plugin/c_api/error.h"

// C++ standard library.
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// The function table's entries (PJRT_Error_FunctionTable).
void TableDestroy(PJRT_Error* error) { DestroyError(error); }

void TableMessage(const PJRT_Error* error, const char** message, size_t* message_size) {
  static const char kEmpty[] = "";
  const std::string* text = error == nullptr ? nullptr : &Impl(error)->status.message();
  if (message != nullptr) *message = text == nullptr ? kEmpty : text->c_str();
  if (message_size != nullptr) *message_size = text == nullptr ? 0 : text->size();
}

PJRT_Error_Code TableGetCode(const PJRT_Error* error) {
  return error == nullptr ? PJRT_Error_Code_OK : ToPjrtErrorCode(Impl(error)->status.code());
}

void TableForEachPayload(const PJRT_Error* error, PJRT_Error_PayloadVisitor visitor,
                         void* user_arg) {
  if (error == nullptr || visitor == nullptr) return;
  for (const auto& [key, value] : Impl(error)->status.payloads()) {
    visitor(key.data(), key.size(), value.data(), value.size(), user_arg);
  }
}

}  // namespace

const PJRT_Error_FunctionTable* ErrorFunctionTable() {
  static const PJRT_Error_FunctionTable table = [] {
    PJRT_Error_FunctionTable t{};
    t.struct_size = PJRT_Error_FunctionTable_STRUCT_SIZE;
    t.instance_size = sizeof(ErrorImpl);
    t.extension_start = nullptr;
    t.destroy = TableDestroy;
    t.message = TableMessage;
    t.get_code = TableGetCode;
    t.for_each_payload = TableForEachPayload;
    return t;
  }();
  return &table;
}

ErrorImpl::ErrorImpl(Status s) : PJRT_Error{ErrorFunctionTable()}, status(std::move(s)) {}

void ErrorDestroy(PJRT_Error_Destroy_Args* args) {
  if (args == nullptr || args->struct_size < PJRTKIT_ARGS_SIZE(PJRT_Error_Destroy_Args, error)) {
    return;
  }
  DestroyError(args->error);
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
  const std::string& message = Impl(args->error)->status.message();
  args->message = message.c_str();
  args->message_size = message.size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  return Guard("PJRT_Error_GetCode", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Error_GetCode_Args, code)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "error", args->error));
    args->code = ToPjrtErrorCode(Impl(args->error)->status.code());
    return OkStatus();
  });
}

PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  return Guard("PJRT_Error_ForEachPayload", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Error_ForEachPayload_Args, user_arg)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "error", args->error));
    if (args->visitor == nullptr) {
      return InvalidArgument(std::string(fn) + ": args->visitor is null");
    }
    TableForEachPayload(args->error, args->visitor, args->user_arg);
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
