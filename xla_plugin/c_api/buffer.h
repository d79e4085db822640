// PJRT_Buffer_* entry points and the helper that hands a pjrtkit::Buffer to the framework.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_BUFFER_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/buffer.h"

namespace pjrtkit {
namespace capi {

// A new handle owning `buffer` (non-null), which belongs to `client`. The framework frees it with
// PJRT_Buffer_Destroy.
PJRT_Buffer* WrapBuffer(PJRT_Client* client, std::unique_ptr<Buffer> buffer);

// PJRT_Buffer_Destroy: frees the buffer and its device memory (nullptr is fine).
PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* args);
// PJRT_Buffer_ElementType: the element type.
PJRT_Error* BufferElementType(PJRT_Buffer_ElementType_Args* args);
// PJRT_Buffer_Dimensions: the dimensions (owned by the buffer).
PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args);
// PJRT_Buffer_UnpaddedDimensions: equal to the dimensions (pjrtkit has static shapes only).
PJRT_Error* BufferUnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args);
// PJRT_Buffer_DynamicDimensionIndices: always empty (static shapes only).
PJRT_Error* BufferDynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args* args);
// PJRT_Buffer_GetMemoryLayout: the on-device layout, as a tiled layout owned by the buffer.
PJRT_Error* BufferGetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args);
// PJRT_Buffer_OnDeviceSizeInBytes: bytes used on the device.
PJRT_Error* BufferOnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args);
// PJRT_Buffer_Device: the device holding the buffer.
PJRT_Error* BufferDevice(PJRT_Buffer_Device_Args* args);
// PJRT_Buffer_Memory: the memory holding the buffer.
PJRT_Error* BufferMemory(PJRT_Buffer_Memory_Args* args);
// PJRT_Buffer_Delete: releases the device memory; the handle stays (IsDeleted, Destroy).
PJRT_Error* BufferDelete(PJRT_Buffer_Delete_Args* args);
// PJRT_Buffer_IsDeleted: whether Delete was called (or the buffer was donated).
PJRT_Error* BufferIsDeleted(PJRT_Buffer_IsDeleted_Args* args);
// PJRT_Buffer_CopyToDevice: a copy on another device of the same client.
PJRT_Error* BufferCopyToDevice(PJRT_Buffer_CopyToDevice_Args* args);
// PJRT_Buffer_CopyToMemory: a copy in another memory of the same client.
PJRT_Error* BufferCopyToMemory(PJRT_Buffer_CopyToMemory_Args* args);
// PJRT_Buffer_ToHostBuffer: with dst == nullptr, sets dst_size to the bytes needed; otherwise
// copies the data (dense row-major, or the given compact host layout) and returns an event.
PJRT_Error* BufferToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args);
// PJRT_Buffer_IsOnCpu: whether the data is in host-addressable memory.
PJRT_Error* BufferIsOnCpu(PJRT_Buffer_IsOnCpu_Args* args);
// PJRT_Buffer_ReadyEvent: ready when the contents are (an error event for a deleted buffer).
PJRT_Error* BufferReadyEvent(PJRT_Buffer_ReadyEvent_Args* args);
// PJRT_Buffer_UnsafePointer: the data address, when the device allows it.
PJRT_Error* BufferUnsafePointer(PJRT_Buffer_UnsafePointer_Args* args);
// PJRT_Buffer_IncreaseExternalReferenceCount: records a raw reference held by a framework.
PJRT_Error* BufferIncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args* args);
// PJRT_Buffer_DecreaseExternalReferenceCount: drops one; FAILED_PRECONDITION when none is held.
PJRT_Error* BufferDecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args* args);
// PJRT_Buffer_OpaqueDeviceMemoryDataPointer: an opaque device pointer, when the device allows it.
PJRT_Error* BufferOpaqueDeviceMemoryDataPointer(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args);
// PJRT_Buffer_CopyRawToHost: copies raw on-device bytes [offset, offset + size) to the host.
PJRT_Error* BufferCopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args);
// PJRT_Buffer_CopyRawToHostFuture: CopyRawToHost once the framework knows the destination: the
// copy starts when it calls the returned `future_ready_callback` with `callback_data` and the
// destination (exactly once; an error there fails the event instead); `event` is ready when the
// bytes are there. The buffer handle must live until the callback has been called.
PJRT_Error* BufferCopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args);
// PJRT_Buffer_Bitcast: a new buffer over the same device memory with another element type,
// dimensions and layout (Buffer::Bitcast).
PJRT_Error* BufferBitcast(PJRT_Buffer_Bitcast_Args* args);
// PJRT_Buffer_DonateWithControlDependency: moves the buffer's memory to a new buffer that is ready
// once the framework calls the returned `dependency_ready_callback` (exactly once) with
// `callback_data`; the buffer reads as donated (Buffer::DonateWithControlDependency).
PJRT_Error* BufferDonateWithControlDependency(
    PJRT_Buffer_DonateWithControlDependency_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_BUFFER_H_
