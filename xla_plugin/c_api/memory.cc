#include "xla_plugin/c_api/memory.h"

// C++ standard library.
#include <mutex>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

void* TableGetUserData(PJRT_Memory* memory, const void* key) {
  if (memory == nullptr) return nullptr;
  MemoryImpl* impl = Impl(memory);
  std::lock_guard<std::mutex> lock(impl->user_data_mu);
  auto it = impl->user_data.find(key);
  return it == impl->user_data.end() ? nullptr : it->second.data;
}

void TableSetUserData(PJRT_Memory* memory, const void* key, void* data, void (*dtor)(void*)) {
  if (memory == nullptr) return;
  MemoryImpl* impl = Impl(memory);
  MemoryUserData replaced;
  {
    std::lock_guard<std::mutex> lock(impl->user_data_mu);
    MemoryUserData& entry = impl->user_data[key];
    replaced = entry;
    entry = MemoryUserData{data, dtor};
  }
  // Outside the lock: a destructor may look at the memory's user data.
  if (replaced.dtor != nullptr && replaced.data != data) replaced.dtor(replaced.data);
}

}  // namespace

const PJRT_Memory_FunctionTable* MemoryFunctionTable() {
  static const PJRT_Memory_FunctionTable table = [] {
    PJRT_Memory_FunctionTable t{};
    t.struct_size = PJRT_Memory_FunctionTable_STRUCT_SIZE;
    t.extension_start = nullptr;
    t.instance_struct_size = PJRT_Memory_STRUCT_SIZE;
    t.get_user_data = TableGetUserData;
    t.set_user_data = TableSetUserData;
    return t;
  }();
  return &table;
}

MemoryImpl::MemoryImpl() : PJRT_Memory{MemoryFunctionTable()} {}

MemoryImpl::~MemoryImpl() {
  for (auto& [key, entry] : user_data) {
    if (entry.dtor != nullptr) entry.dtor(entry.data);
  }
}

PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args) {
  return Guard("PJRT_Memory_Id", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_Id_Args, id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    args->id = Impl(args->memory)->memory->id();
    return OkStatus();
  });
}

PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args) {
  return Guard("PJRT_Memory_Kind", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_Kind_Args, kind_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::string& kind = Impl(args->memory)->memory->kind();
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
    args->kind_id = Impl(args->memory)->memory->kind_id();
    return OkStatus();
  });
}

PJRT_Error* MemoryDebugString(PJRT_Memory_DebugString_Args* args) {
  return Guard("PJRT_Memory_DebugString", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Memory_DebugString_Args, debug_string_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const std::string& text = Impl(args->memory)->memory->debug_string();
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
    const std::string& text = Impl(args->memory)->memory->to_string();
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
    const std::vector<PJRT_Device*>& devices = Impl(args->memory)->devices;
    args->devices = devices.empty() ? nullptr : devices.data();
    args->num_devices = devices.size();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
