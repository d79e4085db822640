#include "xla_plugin/c_api/device.h"

// C++ standard library.
#include <memory>
#include <optional>
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// Writes an optional statistic into its value / `_is_set` pair.
void SetOptional(const std::optional<int64_t>& value, int64_t* out, bool* is_set) {
  *is_set = value.has_value();
  *out = value.value_or(0);
}

// Frees what PJRT_Device_GetAttributes returned.
void DeleteDeviceAttributes(PJRT_Device_Attributes* attributes) { delete attributes; }

}  // namespace

// ---- PJRT_DeviceDescription -------------------------------------------------------------------

PJRT_Error* DeviceDescriptionId(PJRT_DeviceDescription_Id_Args* args) {
  return Guard("PJRT_DeviceDescription_Id", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_Id_Args, id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    args->id = args->device_description->description->id();
    return OkStatus();
  });
}

PJRT_Error* DeviceDescriptionProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args* args) {
  return Guard("PJRT_DeviceDescription_ProcessIndex", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_ProcessIndex_Args, process_index)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    args->process_index = args->device_description->description->process_index();
    return OkStatus();
  });
}

PJRT_Error* DeviceDescriptionAttributes(PJRT_DeviceDescription_Attributes_Args* args) {
  return Guard("PJRT_DeviceDescription_Attributes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_Attributes_Args, attributes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    const NamedValueList& attributes = args->device_description->attributes;
    args->attributes = attributes.data();
    args->num_attributes = attributes.size();
    return OkStatus();
  });
}

PJRT_Error* DeviceDescriptionKind(PJRT_DeviceDescription_Kind_Args* args) {
  return Guard("PJRT_DeviceDescription_Kind", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_Kind_Args, device_kind_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    const std::string& kind = args->device_description->description->kind();
    args->device_kind = kind.c_str();
    args->device_kind_size = kind.size();
    return OkStatus();
  });
}

PJRT_Error* DeviceDescriptionDebugString(PJRT_DeviceDescription_DebugString_Args* args) {
  return Guard("PJRT_DeviceDescription_DebugString", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_DebugString_Args, debug_string_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    const std::string& text = args->device_description->description->debug_string();
    args->debug_string = text.c_str();
    args->debug_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* DeviceDescriptionToString(PJRT_DeviceDescription_ToString_Args* args) {
  return Guard("PJRT_DeviceDescription_ToString", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_ToString_Args, to_string_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    const std::string& text = args->device_description->description->to_string();
    args->to_string = text.c_str();
    args->to_string_size = text.size();
    return OkStatus();
  });
}

// ---- PJRT_Device ------------------------------------------------------------------------------

PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args) {
  return Guard("PJRT_Device_GetDescription", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_GetDescription_Args, device_description)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    args->device_description = &args->device->description;
    return OkStatus();
  });
}

PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args) {
  return Guard("PJRT_Device_IsAddressable", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_IsAddressable_Args, is_addressable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    args->is_addressable = args->device->device->IsAddressable();
    return OkStatus();
  });
}

PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  return Guard("PJRT_Device_LocalHardwareId", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_LocalHardwareId_Args, local_hardware_id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    args->local_hardware_id = args->device->device->local_hardware_id();
    return OkStatus();
  });
}

PJRT_Error* DeviceAddressableMemories(PJRT_Device_AddressableMemories_Args* args) {
  return Guard("PJRT_Device_AddressableMemories", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_AddressableMemories_Args, num_memories)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    const std::vector<PJRT_Memory*>& memories = args->device->memories;
    args->memories = memories.empty() ? nullptr : memories.data();
    args->num_memories = memories.size();
    return OkStatus();
  });
}

PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  return Guard("PJRT_Device_DefaultMemory", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_DefaultMemory_Args, memory)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    if (args->device->default_memory == nullptr) {
      return NotFound(std::string(fn) + ": device " +
                      args->device->description.description->debug_string() +
                      " has no default memory");
    }
    args->memory = args->device->default_memory;
    return OkStatus();
  });
}

PJRT_Error* DeviceMemoryStats(PJRT_Device_MemoryStats_Args* args) {
  return Guard("PJRT_Device_MemoryStats", [&](const char* fn) -> Status {
    // The pool_* fields are newer than the rest: written only when the caller has them.
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Device_MemoryStats_Args, largest_free_block_bytes_is_set)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    PJRTKIT_ASSIGN_OR_RETURN(MemoryStats stats, args->device->device->GetMemoryStats());
    args->bytes_in_use = stats.bytes_in_use;
    SetOptional(stats.peak_bytes_in_use, &args->peak_bytes_in_use, &args->peak_bytes_in_use_is_set);
    SetOptional(stats.num_allocs, &args->num_allocs, &args->num_allocs_is_set);
    SetOptional(stats.largest_alloc_size, &args->largest_alloc_size,
                &args->largest_alloc_size_is_set);
    SetOptional(stats.bytes_limit, &args->bytes_limit, &args->bytes_limit_is_set);
    SetOptional(stats.bytes_reserved, &args->bytes_reserved, &args->bytes_reserved_is_set);
    SetOptional(stats.peak_bytes_reserved, &args->peak_bytes_reserved,
                &args->peak_bytes_reserved_is_set);
    SetOptional(stats.bytes_reservable_limit, &args->bytes_reservable_limit,
                &args->bytes_reservable_limit_is_set);
    SetOptional(stats.largest_free_block_bytes, &args->largest_free_block_bytes,
                &args->largest_free_block_bytes_is_set);
    if (args->struct_size >=
        PJRTKIT_ARGS_SIZE(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set)) {
      SetOptional(stats.pool_bytes, &args->pool_bytes, &args->pool_bytes_is_set);
      SetOptional(stats.peak_pool_bytes, &args->peak_pool_bytes, &args->peak_pool_bytes_is_set);
    }
    if (args->struct_size >=
        PJRTKIT_ARGS_SIZE(PJRT_Device_MemoryStats_Args, peak_allocated_bytes_is_set)) {
      SetOptional(stats.peak_allocated_bytes, &args->peak_allocated_bytes,
                  &args->peak_allocated_bytes_is_set);
    }
    return OkStatus();
  });
}

PJRT_Error* DeviceClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args) {
  return Guard("PJRT_Device_ClearMemoryStats", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_ClearMemoryStats_Args, device)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    return args->device->device->ClearMemoryStats();
  });
}

PJRT_Error* DeviceGetAttributes(PJRT_Device_GetAttributes_Args* args) {
  return Guard("PJRT_Device_GetAttributes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_GetAttributes_Args, attributes_deleter)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap attributes, args->device->device->GetAttributes());
    auto* out = new PJRT_Device_Attributes{NamedValueList(attributes)};
    args->attributes = out->attributes.data();
    args->num_attributes = out->attributes.size();
    args->device_attributes = out;
    args->attributes_deleter = &DeleteDeviceAttributes;
    return OkStatus();
  });
}

PJRT_Error* DevicePoisonExecution(PJRT_Device_PoisonExecution_Args* args) {
  return Guard("PJRT_Device_PoisonExecution", [&](const char* fn) -> Status {
    // payload / num_payload are newer than `poisoned`: read only when the caller has them.
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_PoisonExecution_Args, poisoned)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    const size_t num_payload =
        args->struct_size >= PJRTKIT_ARGS_SIZE(PJRT_Device_PoisonExecution_Args, num_payload)
            ? args->num_payload
            : 0;
    Status error;
    PJRTKIT_RETURN_IF_ERROR(ErrorFromFields(fn, args->error_code, args->error_message,
                                            args->error_message_size, args->payload, num_payload,
                                            &error));
    PJRTKIT_ASSIGN_OR_RETURN(args->poisoned,
                             args->device->device->PoisonExecution(args->launch_id, error));
    return OkStatus();
  });
}

PJRT_Error* DeviceCreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args* args) {
  return Guard("PJRT_Device_CreateAsyncTrackingEvent", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Device_CreateAsyncTrackingEvent_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device", args->device));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::string description,
        ToString(fn, "description", args->description, args->description_size));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<AsyncTrackingEvent> event,
                             args->device->device->CreateAsyncTrackingEvent(description));
    // No event: the device tracks nothing (the caller then has nothing to destroy).
    args->event = event == nullptr ? nullptr : new PJRT_AsyncTrackingEvent{std::move(event)};
    return OkStatus();
  });
}

PJRT_Error* AsyncTrackingEventDestroy(PJRT_AsyncTrackingEvent_Destroy_Args* args) {
  return Guard("PJRT_AsyncTrackingEvent_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_AsyncTrackingEvent_Destroy_Args, event)));
    delete args->event;
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
