#include "tools/api_coverage/probe_buffers.h"

// C++ standard library.
#include <cstdint>
#include <cstring>

#include "tools/api_coverage/probe_fixtures.h"

namespace api_coverage {

void ProbeBuffers(ProbeRecorder* probe, PJRT_Client* client, PJRT_Device* device,
                  PJRT_Memory* memory) {
  PJRT_Client_BufferFromHostBuffer_Args from_host = ProbeF32Buffer(probe, client, device);
  if (from_host.buffer == nullptr) return;
  PJRT_Buffer* buffer = from_host.buffer;
  if (PJRT_Event* done = from_host.done_with_host_buffer) {
    PROBE_ARGS(PJRT_Event_IsReady_Args, is_ready);
    is_ready.event = done;
    PROBE_CALL(PJRT_Event_IsReady, is_ready);
    PROBE_ARGS(PJRT_Event_OnReady_Args, on_ready);
    on_ready.event = done;
    on_ready.callback = [](PJRT_Error* error, void* user_arg) {
      // The callback owns `error`; the probe only needs it to run.
      if (error != nullptr) {
        const PJRT_Api* api = static_cast<const PJRT_Api*>(user_arg);
        PROBE_ARGS(PJRT_Error_Destroy_Args, destroy);
        destroy.error = error;
        api->PJRT_Error_Destroy(&destroy);
      }
    };
    on_ready.user_arg = const_cast<PJRT_Api*>(probe->api());
    PROBE_CALL(PJRT_Event_OnReady, on_ready);
    PROBE_ARGS(PJRT_Event_Await_Args, await);
    await.event = done;
    PROBE_CALL(PJRT_Event_Await, await);
    PROBE_ARGS(PJRT_Event_Error_Args, event_error);
    event_error.event = done;
    PROBE_CALL(PJRT_Event_Error, event_error);
    PROBE_ARGS(PJRT_Event_Destroy_Args, destroy);
    destroy.event = done;
    PROBE_CALL(PJRT_Event_Destroy, destroy);
  }
  PROBE_ARGS(PJRT_Buffer_ElementType_Args, element_type);
  element_type.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_ElementType, element_type);
  PROBE_ARGS(PJRT_Buffer_Dimensions_Args, dimensions);
  dimensions.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Dimensions, dimensions);
  PROBE_ARGS(PJRT_Buffer_UnpaddedDimensions_Args, unpadded);
  unpadded.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_UnpaddedDimensions, unpadded);
  PROBE_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args, dynamic);
  dynamic.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_DynamicDimensionIndices, dynamic);
  PROBE_ARGS(PJRT_Buffer_GetMemoryLayout_Args, layout);
  layout.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_GetMemoryLayout, layout);
  PROBE_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args, size);
  size.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_OnDeviceSizeInBytes, size);
  PROBE_ARGS(PJRT_Buffer_Device_Args, buffer_device);
  buffer_device.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Device, buffer_device);
  PROBE_ARGS(PJRT_Buffer_Memory_Args, buffer_memory);
  buffer_memory.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Memory, buffer_memory);
  PROBE_ARGS(PJRT_Buffer_IsOnCpu_Args, on_cpu);
  on_cpu.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_IsOnCpu, on_cpu);
  PROBE_ARGS(PJRT_Buffer_ReadyEvent_Args, ready);
  ready.buffer = buffer;
  if (PROBE_CALL(PJRT_Buffer_ReadyEvent, ready)) probe->AwaitAndDestroy(ready.event);
  PROBE_ARGS(PJRT_Buffer_UnsafePointer_Args, unsafe);
  unsafe.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_UnsafePointer, unsafe);
  PROBE_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, increase);
  increase.buffer = buffer;
  if (PROBE_CALL(PJRT_Buffer_IncreaseExternalReferenceCount, increase)) {
    PROBE_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, opaque);
    opaque.buffer = buffer;
    PROBE_CALL(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, opaque);
    PROBE_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, decrease);
    decrease.buffer = buffer;
    PROBE_CALL(PJRT_Buffer_DecreaseExternalReferenceCount, decrease);
  }
  float values[4] = {0, 0, 0, 0};
  if (probe->Read(buffer, values) && values[3] != 4.0f) {
    probe->Record("PJRT_Buffer_ToHostBuffer (values)", "error: wrong values", "");
  }
  PROBE_ARGS(PJRT_Buffer_CopyToDevice_Args, to_device);
  to_device.buffer = buffer;
  to_device.dst_device = device;
  if (PROBE_CALL(PJRT_Buffer_CopyToDevice, to_device)) probe->DestroyBuffer(to_device.dst_buffer);
  if (memory != nullptr) {
    PROBE_ARGS(PJRT_Buffer_CopyToMemory_Args, to_memory);
    to_memory.buffer = buffer;
    to_memory.dst_memory = memory;
    if (PROBE_CALL(PJRT_Buffer_CopyToMemory, to_memory)) probe->DestroyBuffer(to_memory.dst_buffer);
  }
  const int64_t dims[1] = {4};
  PROBE_ARGS(PJRT_Client_CreateUninitializedBuffer_Args, uninitialized);
  uninitialized.client = client;
  uninitialized.shape_dims = dims;
  uninitialized.shape_num_dims = 1;
  uninitialized.shape_element_type = PJRT_Buffer_Type_F32;
  uninitialized.device = device;
  if (PROBE_CALL(PJRT_Client_CreateUninitializedBuffer, uninitialized)) {
    probe->DestroyBuffer(uninitialized.buffer);
  }
  PROBE_ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Delete, del);
  PROBE_ARGS(PJRT_Buffer_IsDeleted_Args, is_deleted);
  is_deleted.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_IsDeleted, is_deleted);
  probe->DestroyBuffer(buffer);
}

}  // namespace api_coverage
