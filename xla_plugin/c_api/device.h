// PJRT_DeviceDescription_* and PJRT_Device_* entry points.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_DEVICE_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_DeviceDescription_Id: the global device id.
PJRT_Error* DeviceDescriptionId(PJRT_DeviceDescription_Id_Args* args);
// PJRT_DeviceDescription_ProcessIndex: the index of the process owning the device.
PJRT_Error* DeviceDescriptionProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args* args);
// PJRT_DeviceDescription_Attributes: vendor attributes (owned by the description handle).
PJRT_Error* DeviceDescriptionAttributes(PJRT_DeviceDescription_Attributes_Args* args);
// PJRT_DeviceDescription_Kind: the device kind string.
PJRT_Error* DeviceDescriptionKind(PJRT_DeviceDescription_Kind_Args* args);
// PJRT_DeviceDescription_DebugString: the short name.
PJRT_Error* DeviceDescriptionDebugString(PJRT_DeviceDescription_DebugString_Args* args);
// PJRT_DeviceDescription_ToString: the verbose name.
PJRT_Error* DeviceDescriptionToString(PJRT_DeviceDescription_ToString_Args* args);

// PJRT_Device_GetDescription: the device's description handle (owned by the device).
PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args);
// PJRT_Device_IsAddressable: whether this process can use the device.
PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args);
// PJRT_Device_LocalHardwareId: the local hardware id (-1 when not addressable).
PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args);
// PJRT_Device_AddressableMemories: the memories the device can address.
PJRT_Error* DeviceAddressableMemories(PJRT_Device_AddressableMemories_Args* args);
// PJRT_Device_DefaultMemory: the device's default memory (NOT_FOUND when it has none).
PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args);
// PJRT_Device_MemoryStats: allocator statistics; unset optionals map to `*_is_set = false`.
PJRT_Error* DeviceMemoryStats(PJRT_Device_MemoryStats_Args* args);

// PJRT_Device_GetAttributes: the device's attributes now (Device::GetAttributes), in an array
// the caller frees with the returned deleter.
PJRT_Error* DeviceGetAttributes(PJRT_Device_GetAttributes_Args* args);
// PJRT_Device_ClearMemoryStats: resets the device's peak memory figures.
PJRT_Error* DeviceClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args);
// PJRT_Device_PoisonExecution: fails the earliest unfinished execution of `launch_id` with the
// given error (Device::PoisonExecution); `poisoned` says whether there was one.
PJRT_Error* DevicePoisonExecution(PJRT_Device_PoisonExecution_Args* args);
// PJRT_Device_CreateAsyncTrackingEvent: the device's marker of asynchronous work; `event` is null
// when the device tracks none.
PJRT_Error* DeviceCreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args* args);
// PJRT_AsyncTrackingEvent_Destroy: ends and frees such a marker (nullptr is fine).
PJRT_Error* AsyncTrackingEventDestroy(PJRT_AsyncTrackingEvent_Destroy_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_DEVICE_H_
