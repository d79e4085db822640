#include "xla_plugin/c_api/memory.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {

PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args) {
  return Guard("PJRT_Memory_Id", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_Id_Args, id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    args->id = args->memory->memory->id();
    return OkStatus();
  });
}

PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args) {
  return Guard("PJRT_Memory_Kind", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_Kind_Args, kind_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::string& kind = args->memory->memory->kind();
    args->kind = kind.c_str();
    args->kind_size = kind.size();
    return OkStatus();
  });
}

PJRT_Error* MemoryKindId(PJRT_Memory_Kind_Id_Args* args) {
  return Guard("PJRT_Memory_Kind_Id", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_Kind_Id_Args, kind_id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    args->kind_id = args->memory->memory->kind_id();
    return OkStatus();
  });
}

PJRT_Error* MemoryDebugString(PJRT_Memory_DebugString_Args* args) {
  return Guard("PJRT_Memory_DebugString", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_DebugString_Args, debug_string_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::string& text = args->memory->memory->debug_string();
    args->debug_string = text.c_str();
    args->debug_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* MemoryToString(PJRT_Memory_ToString_Args* args) {
  return Guard("PJRT_Memory_ToString", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_ToString_Args, to_string_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::string& text = args->memory->memory->to_string();
    args->to_string = text.c_str();
    args->to_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* MemoryAddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args) {
  return Guard("PJRT_Memory_AddressableByDevices", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_AddressableByDevices_Args, num_devices)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::vector<PJRT_Device*>& devices = args->memory->devices;
    args->devices = devices.empty() ? nullptr : devices.data();
    args->num_devices = devices.size();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
