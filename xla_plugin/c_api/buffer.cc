#include "xla_plugin/c_api/buffer.h"

// C++ standard library.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {
namespace capi {
namespace {

// FAILED_PRECONDITION when the buffer's memory is gone (PJRT_Buffer_Delete or donation).
Status CheckNotDeleted(const char* fn, const PJRT_Buffer* buffer) {
  if (!buffer->IsDeleted()) return OkStatus();
  return FailedPrecondition(std::string(fn) + ": the buffer has been deleted or donated");
}

// The handle of the buffer's device.
StatusOr<PJRT_Device*> DeviceHandle(const char* fn, const PJRT_Buffer* buffer) {
  if (buffer->device_handle != nullptr) return buffer->device_handle;
  PJRT_Device* device = buffer->client->FindDevice(buffer->buffer->device());
  if (device == nullptr) {
    return Internal(std::string(fn) + ": the buffer's device is not one of its client's devices");
  }
  return device;
}

// The handle of the buffer's memory.
StatusOr<PJRT_Memory*> MemoryHandle(const char* fn, const PJRT_Buffer* buffer) {
  if (buffer->memory_handle != nullptr) return buffer->memory_handle;
  PJRT_Memory* memory = buffer->client->FindMemory(buffer->buffer->memory());
  if (memory == nullptr) {
    return Internal(std::string(fn) + ": the buffer's memory is not one of its client's memories");
  }
  return memory;
}

}  // namespace

PJRT_Buffer* WrapBuffer(PJRT_Client* client, std::unique_ptr<Buffer> buffer) {
  auto* handle = new PJRT_Buffer();
  handle->client_reference.Reset(client);
  handle->buffer = std::move(buffer);
  handle->client = client;
  return handle;
}

PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* args) {
  return Guard("PJRT_Buffer_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Destroy_Args, buffer)));
    std::unique_ptr<PJRT_Buffer> handle(args->buffer);
    if (handle == nullptr) return OkStatus();
    std::lock_guard<std::mutex> lock(handle->references_mu);
    if (handle->buffer->external_reference_count() > 0) {
      // Memory shared with another framework must stay valid (PJRT_Buffer_Delete's rule); the
      // references can no longer be dropped through this handle, so the client keeps it.
      handle->client->RetainReferenced(std::move(handle->buffer));
    }
    return OkStatus();
  });
}

PJRT_Error* BufferElementType(PJRT_Buffer_ElementType_Args* args) {
  return Guard("PJRT_Buffer_ElementType", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_ElementType_Args, type)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    args->type = ToPjrtBufferType(args->buffer->buffer->element_type());
    return OkStatus();
  });
}

PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args) {
  return Guard("PJRT_Buffer_Dimensions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Dimensions_Args, num_dims)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    const std::vector<int64_t>& dims = args->buffer->buffer->dimensions();
    args->dims = dims.data();
    args->num_dims = dims.size();
    return OkStatus();
  });
}

PJRT_Error* BufferUnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args) {
  return Guard("PJRT_Buffer_UnpaddedDimensions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_UnpaddedDimensions_Args, num_dims)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    const std::vector<int64_t>& dims = args->buffer->buffer->dimensions();
    args->unpadded_dims = dims.data();
    args->num_dims = dims.size();
    return OkStatus();
  });
}

PJRT_Error* BufferDynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args* args) {
  return Guard("PJRT_Buffer_DynamicDimensionIndices", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    args->dynamic_dim_indices = nullptr;
    args->num_dynamic_dims = 0;
    return OkStatus();
  });
}

PJRT_Error* BufferGetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args) {
  return Guard("PJRT_Buffer_GetMemoryLayout", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_GetMemoryLayout_Args, layout)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    Buffer& buffer = *args->buffer->buffer;
    PJRTKIT_ASSIGN_OR_RETURN(
        const TiledLayoutView* view,
        args->buffer->layout.Get([&]() -> StatusOr<std::unique_ptr<TiledLayoutView>> {
          PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout, buffer.layout());
          return std::make_unique<TiledLayoutView>(std::move(layout));
        }));
    view->Fill(&args->layout);
    return OkStatus();
  });
}

PJRT_Error* BufferOnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args) {
  return Guard("PJRT_Buffer_OnDeviceSizeInBytes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(args->on_device_size_in_bytes,
                             args->buffer->buffer->OnDeviceSizeInBytes());
    return OkStatus();
  });
}

PJRT_Error* BufferDevice(PJRT_Buffer_Device_Args* args) {
  return Guard("PJRT_Buffer_Device", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Device_Args, device)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(args->device, DeviceHandle(fn, args->buffer));
    return OkStatus();
  });
}

PJRT_Error* BufferMemory(PJRT_Buffer_Memory_Args* args) {
  return Guard("PJRT_Buffer_Memory", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Memory_Args, memory)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(args->memory, MemoryHandle(fn, args->buffer));
    return OkStatus();
  });
}

PJRT_Error* BufferDelete(PJRT_Buffer_Delete_Args* args) {
  return Guard("PJRT_Buffer_Delete", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Delete_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRT_Buffer& handle = *args->buffer;
    std::lock_guard<std::mutex> lock(handle.references_mu);
    handle.delete_requested.store(true, std::memory_order_release);
    // While the framework holds external references the memory stays (jaxlib reads a NumPy view
    // or a DLPack tensor after Array.delete()); the last DecreaseExternalReferenceCount deletes.
    if (handle.buffer->external_reference_count() == 0) handle.buffer->Delete();
    return OkStatus();
  });
}

PJRT_Error* BufferIsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  return Guard("PJRT_Buffer_IsDeleted", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_IsDeleted_Args, is_deleted)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    args->is_deleted = args->buffer->IsDeleted();
    return OkStatus();
  });
}

PJRT_Error* BufferCopyToDevice(PJRT_Buffer_CopyToDevice_Args* args) {
  return Guard("PJRT_Buffer_CopyToDevice", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_CopyToDevice_Args, dst_buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "dst_device", args->dst_device));
    PJRTKIT_RETURN_IF_ERROR(
        CheckSameClient(fn, "args->dst_device", args->buffer->client, args->dst_device->client));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> copy,
                             args->buffer->buffer->CopyToDevice(args->dst_device->device));
    if (copy == nullptr) return Internal(std::string(fn) + ": the device returned a null buffer");
    args->dst_buffer = WrapBuffer(args->buffer->client, std::move(copy));
    return OkStatus();
  });
}

PJRT_Error* BufferCopyToMemory(PJRT_Buffer_CopyToMemory_Args* args) {
  return Guard("PJRT_Buffer_CopyToMemory", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_CopyToMemory_Args, dst_buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "dst_memory", args->dst_memory));
    PJRTKIT_RETURN_IF_ERROR(
        CheckSameClient(fn, "args->dst_memory", args->buffer->client,
                        Impl(args->dst_memory)->client));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> copy,
                             args->buffer->buffer->CopyToMemory(Impl(args->dst_memory)->memory));
    if (copy == nullptr) return Internal(std::string(fn) + ": the device returned a null buffer");
    args->dst_buffer = WrapBuffer(args->buffer->client, std::move(copy));
    return OkStatus();
  });
}

PJRT_Error* BufferToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  return Guard("PJRT_Buffer_ToHostBuffer", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_ToHostBuffer_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "src", args->src));
    Buffer& buffer = *args->src->buffer;
    std::optional<MemoryLayout> layout;
    if (args->host_layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(layout, FromPjrtLayout(fn, *args->host_layout, buffer.element_type(),
                                                      buffer.dimensions()));
      if (IsRowMajor(*layout)) layout.reset();  // The default; devices need not look at it.
    }
    const MemoryLayout* host_layout = layout.has_value() ? &*layout : nullptr;
    PJRTKIT_ASSIGN_OR_RETURN(size_t needed, buffer.HostBufferSize(host_layout));
    if (args->dst == nullptr) {  // A size query.
      args->dst_size = needed;
      args->event = nullptr;
      return OkStatus();
    }
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->src));
    if (args->dst_size < needed) {
      return InvalidArgument(std::string(fn) + ": dst_size is " + std::to_string(args->dst_size) +
                             " bytes but the buffer needs " + std::to_string(needed));
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Event> event,
                             buffer.ToHostBuffer(args->dst, args->dst_size, host_layout));
    args->event = WrapEvent(std::move(event));
    return OkStatus();
  });
}

PJRT_Error* BufferIsOnCpu(PJRT_Buffer_IsOnCpu_Args* args) {
  return Guard("PJRT_Buffer_IsOnCpu", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_IsOnCpu_Args, is_on_cpu)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    args->is_on_cpu = args->buffer->buffer->IsOnCpu();
    return OkStatus();
  });
}

PJRT_Error* BufferReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  return Guard("PJRT_Buffer_ReadyEvent", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_ReadyEvent_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    Status deleted = CheckNotDeleted(fn, args->buffer);
    args->event = WrapEvent(deleted.ok() ? args->buffer->buffer->ReadyEvent()
                                         : Event::CreateReady(std::move(deleted)));
    return OkStatus();
  });
}

PJRT_Error* BufferUnsafePointer(PJRT_Buffer_UnsafePointer_Args* args) {
  return Guard("PJRT_Buffer_UnsafePointer", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_UnsafePointer_Args, buffer_pointer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(args->buffer_pointer, args->buffer->buffer->UnsafePointer());
    return OkStatus();
  });
}

PJRT_Error* BufferIncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args* args) {
  return Guard("PJRT_Buffer_IncreaseExternalReferenceCount", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    std::lock_guard<std::mutex> lock(args->buffer->references_mu);
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    return args->buffer->buffer->IncreaseExternalReferenceCount();
  });
}

PJRT_Error* BufferDecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args* args) {
  return Guard("PJRT_Buffer_DecreaseExternalReferenceCount", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRT_Buffer& handle = *args->buffer;
    std::lock_guard<std::mutex> lock(handle.references_mu);
    Status status = handle.buffer->DecreaseExternalReferenceCount();
    if (!status.ok()) return Status(status.code(), std::string(fn) + ": " + status.message());
    // The last reference to a buffer deleted meanwhile: its memory goes now.
    if (handle.buffer->external_reference_count() == 0 &&
        handle.delete_requested.load(std::memory_order_acquire) && !handle.buffer->IsDeleted()) {
      handle.buffer->Delete();
    }
    return OkStatus();
  });
}

PJRT_Error* BufferOpaqueDeviceMemoryDataPointer(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args) {
  return Guard("PJRT_Buffer_OpaqueDeviceMemoryDataPointer", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(args->device_memory_ptr,
                             args->buffer->buffer->OpaqueDeviceMemoryDataPointer());
    return OkStatus();
  });
}

PJRT_Error* BufferCopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args) {
  return Guard("PJRT_Buffer_CopyRawToHost", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_CopyRawToHost_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "dst", args->dst));
    if (args->offset < 0 || args->transfer_size < 0) {
      return InvalidArgument(std::string(fn) + ": offset (" + std::to_string(args->offset) +
                             ") and transfer_size (" + std::to_string(args->transfer_size) +
                             ") must be >= 0");
    }
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::shared_ptr<Event> event,
        args->buffer->buffer->CopyRawToHost(args->dst, args->offset, args->transfer_size));
    args->event = WrapEvent(std::move(event));
    return OkStatus();
  });
}

namespace {

// The StatusCode of an error code a framework's callback reports (read as an int: any value may
// be there); UNKNOWN for one that is not a PJRT_Error_Code.
StatusCode CallbackCode(int code) {
  return code > 0 && code <= static_cast<int>(StatusCode::kUnauthenticated)
             ? static_cast<StatusCode>(code)
             : StatusCode::kUnknown;
}

// What PJRT_Buffer_CopyRawToHostFuture hands the framework as callback_data.
struct RawCopyFuture {
  ClientReference client;        // Keeps the client alive until the copy is issued.
  PJRT_Buffer* buffer;           // The framework keeps it alive until the callback.
  int64_t offset;                // Bytes to copy: [offset, offset + size).
  int64_t size;
  std::shared_ptr<Event> done;   // The event handed out.
};

// PJRT_Buffer_CopyRawToHostFuture's future_ready_callback: issues the copy (or fails the event).
void RawCopyFutureReady(PJRT_Buffer_CopyRawToHostFuture_Callback_Args* args) {
  if (args == nullptr || args->callback_data == nullptr) return;  // Nothing to report it to.
  std::unique_ptr<RawCopyFuture> future(static_cast<RawCopyFuture*>(args->callback_data));
  const char* fn = "PJRT_Buffer_CopyRawToHostFuture";
  Status status;
  try {
    if (args->struct_size < PJRTKIT_ARGS_SIZE(PJRT_Buffer_CopyRawToHostFuture_Callback_Args, dst)) {
      status = InvalidArgument(std::string(fn) + ": the callback's struct_size is " +
                               std::to_string(args->struct_size));
    } else if (RawEnumValue(args->error_code) != PJRT_Error_Code_OK) {
      status = Status(CallbackCode(RawEnumValue(args->error_code)),
                      std::string(fn) + ": the destination failed: " +
                          (args->error_message == nullptr
                               ? std::string()
                               : std::string(args->error_message, args->error_message_size)));
    } else if (args->dst == nullptr && future->size > 0) {
      status = InvalidArgument(std::string(fn) + ": the callback's dst is null");
    } else if (future->buffer->IsDeleted()) {
      status = FailedPrecondition(std::string(fn) + ": the buffer was deleted or donated before "
                                  "the destination was ready");
    } else {
      StatusOr<std::shared_ptr<Event>> copied =
          future->buffer->buffer->CopyRawToHost(args->dst, future->offset, future->size);
      if (copied.ok()) {
        std::shared_ptr<Event> done = future->done;
        (*copied)->OnReady([done](Status s) { done->Set(std::move(s)); });
        return;
      }
      status = copied.status();
    }
  } catch (const std::exception& e) {
    status = Internal(std::string(fn) + ": unexpected exception: " + e.what());
  }
  future->done->Set(std::move(status));
}

// What PJRT_Buffer_DonateWithControlDependency hands the framework as callback_data.
struct DonationDependency {
  std::function<void(Status)> ready;  // The device's Buffer::DonateWithControlDependency answer.
};

// PJRT_Buffer_DonateWithControlDependency's dependency_ready_callback.
void DonationDependencyReady(PJRT_Buffer_DonateWithControlDependency_Callback_Args* args) {
  if (args == nullptr || args->callback_data == nullptr) return;
  std::unique_ptr<DonationDependency> dependency(
      static_cast<DonationDependency*>(args->callback_data));
  Status status;
  if (RawEnumValue(args->error_code) != PJRT_Error_Code_OK) {
    status = Status(CallbackCode(RawEnumValue(args->error_code)),
                    args->error_message == nullptr
                        ? std::string("the donation's dependency failed")
                        : std::string(args->error_message, args->error_message_size));
  }
  try {
    dependency->ready(std::move(status));
  } catch (...) {
    // No caller to report to: the device's callback owns what happens to the new buffer.
  }
}

}  // namespace

PJRT_Error* BufferCopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args) {
  return Guard("PJRT_Buffer_CopyRawToHostFuture", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_CopyRawToHostFuture_Args, future_ready_callback)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    if (args->offset < 0 || args->transfer_size < 0) {
      return InvalidArgument(std::string(fn) + ": offset (" + std::to_string(args->offset) +
                             ") and transfer_size (" + std::to_string(args->transfer_size) +
                             ") must be >= 0");
    }
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    if (args->buffer->error != nullptr) return *args->buffer->error;
    PJRTKIT_ASSIGN_OR_RETURN(size_t bytes, args->buffer->buffer->OnDeviceSizeInBytes());
    if (static_cast<uint64_t>(args->offset) + static_cast<uint64_t>(args->transfer_size) > bytes) {
      return InvalidArgument(std::string(fn) + ": [offset, offset + transfer_size) = [" +
                             std::to_string(args->offset) + ", " +
                             std::to_string(args->offset + args->transfer_size) +
                             ") is outside the buffer's " + std::to_string(bytes) + " bytes");
    }
    auto future = std::make_unique<RawCopyFuture>();
    future->client.Reset(args->buffer->client);
    future->buffer = args->buffer;
    future->offset = args->offset;
    future->size = args->transfer_size;
    future->done = Event::Create();
    args->event = WrapEvent(future->done);
    args->callback_data = future.release();
    args->future_ready_callback = &RawCopyFutureReady;
    return OkStatus();
  });
}

PJRT_Error* BufferBitcast(PJRT_Buffer_Bitcast_Args* args) {
  return Guard("PJRT_Buffer_Bitcast", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Bitcast_Args, out_buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    if (args->buffer->error != nullptr) return *args->buffer->error;
    PJRTKIT_ASSIGN_OR_RETURN(ElementType type, FromPjrtBufferType(fn, args->element_type));
    if (args->num_dims > 0 && args->dims == nullptr) return NullHandleError(fn, "dims");
    std::vector<int64_t> dims(args->dims, args->dims + args->num_dims);
    PJRTKIT_RETURN_IF_ERROR(CheckDimensions(fn, "args->dims", dims));
    std::optional<MemoryLayout> layout;
    if (args->device_layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(layout, FromPjrtLayout(fn, *args->device_layout, type, dims));
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> cast,
                             args->buffer->buffer->Bitcast(type, dims, layout));
    if (cast == nullptr) return Internal(std::string(fn) + ": the device returned a null buffer");
    args->out_buffer = WrapBuffer(args->buffer->client, std::move(cast));
    return OkStatus();
  });
}

PJRT_Error* BufferDonateWithControlDependency(
    PJRT_Buffer_DonateWithControlDependency_Args* args) {
  return Guard("PJRT_Buffer_DonateWithControlDependency", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_DonateWithControlDependency_Args, out_buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    PJRTKIT_RETURN_IF_ERROR(CheckNotDeleted(fn, args->buffer));
    if (args->buffer->error != nullptr) return *args->buffer->error;
    std::lock_guard<std::mutex> lock(args->buffer->references_mu);
    if (args->buffer->buffer->external_reference_count() > 0) {
      return FailedPrecondition(std::string(fn) +
                                ": the buffer has external references (NumPy or DLPack views); "
                                "memory in use elsewhere cannot be donated");
    }
    PJRTKIT_ASSIGN_OR_RETURN(ControlledDonation donation,
                             args->buffer->buffer->DonateWithControlDependency());
    if (donation.buffer == nullptr || !donation.dependency_ready) {
      return Internal(std::string(fn) + ": the device returned no buffer or no callback");
    }
    auto dependency = std::make_unique<DonationDependency>();
    dependency->ready = std::move(donation.dependency_ready);
    args->out_buffer = WrapBuffer(args->buffer->client, std::move(donation.buffer));
    args->callback_data = dependency.release();
    args->dependency_ready_callback = &DonationDependencyReady;
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
