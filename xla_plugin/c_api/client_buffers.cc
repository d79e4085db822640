// The PJRT_Client_* entry points that create buffers (declared in client.h): from host data,
// uninitialized, views of foreign device memory, and the buffers of asynchronous transfers.

// C++ standard library.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/buffer.h"
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/error_buffer.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {
namespace capi {
namespace {

// Reads `num_dims` dimensions at `dims`, the parameter `what` ("args->dims"); INVALID_ARGUMENT
// for a null array or a negative size (CheckDimensions).
StatusOr<std::vector<int64_t>> ReadDims(const char* fn, const std::string& what,
                                        const int64_t* dims, size_t num_dims) {
  if (num_dims > 0 && dims == nullptr) {
    return InvalidArgument(std::string(fn) + ": dims is null but num_dims is " +
                           std::to_string(num_dims));
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensions(fn, what, dims, num_dims));
  return std::vector<int64_t>(dims, dims + num_dims);
}

// Where a new buffer goes: a device and (optionally) a memory of `client`.
struct Destination {
  Device* device = nullptr;  // Never null once resolved.
  Memory* memory = nullptr;  // nullptr: the device's default memory.
};

// Resolves the `device` / `memory` pair of a buffer-creating call: handles of `client`, not both
// null; which device, and addressability, as ResolveDestinationDevice (call_checks.h) says.
StatusOr<Destination> ResolveDestination(const char* fn, PJRT_Client* client, PJRT_Device* device,
                                         PJRT_Memory* memory) {
  Destination out;
  if (device != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(CheckSameClient(fn, "args->device", client, device->client));
    out.device = device->device;
  }
  if (memory != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(CheckSameClient(fn, "args->memory", client, Impl(memory)->client));
    out.memory = Impl(memory)->memory;
  }
  if (out.device == nullptr && out.memory == nullptr) {
    return InvalidArgument(std::string(fn) + ": args->device and args->memory are both null");
  }
  // Which device a memory means, and addressability: the client layer's (call_checks.h).
  PJRTKIT_ASSIGN_OR_RETURN(out.device, ResolveDestinationDevice(fn, out.device, out.memory));
  return out;
}

}  // namespace

PJRT_Error* ClientBufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args) {
  return Guard("PJRT_Client_BufferFromHostBuffer", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_BufferFromHostBuffer_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    HostBufferArgs host;
    PJRTKIT_ASSIGN_OR_RETURN(host.type, FromPjrtBufferType(fn, args->type));
    PJRTKIT_ASSIGN_OR_RETURN(host.dims, ReadDims(fn, "args->dims", args->dims, args->num_dims));
    if (args->num_byte_strides != 0) {
      if (args->num_byte_strides != args->num_dims) {
        return InvalidArgument(std::string(fn) + ": num_byte_strides is " +
                               std::to_string(args->num_byte_strides) + " but num_dims is " +
                               std::to_string(args->num_dims) +
                               " (give one stride per dimension"
                               " or none for a dense array)");
      }
      PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "byte_strides", args->byte_strides));
      host.byte_strides.emplace(args->byte_strides, args->byte_strides + args->num_byte_strides);
    }
    if (args->data == nullptr && DenseByteSize(host.type, host.dims) > 0) {
      return InvalidArgument(std::string(fn) + ": args->data is null, but the array has " +
                             std::to_string(DenseByteSize(host.type, host.dims)) +
                             " bytes (null is accepted only for an array of 0 bytes)");
    }
    host.data = args->data;
    const int semantics = RawEnumValue(args->host_buffer_semantics);
    if (semantics < 0 || semantics > static_cast<int>(HostBufferSemantics::kMutableZeroCopy)) {
      return InvalidArgument(std::string(fn) + ": unknown host_buffer_semantics " +
                             std::to_string(semantics));
    }
    host.semantics = static_cast<HostBufferSemantics>(semantics);
    PJRTKIT_ASSIGN_OR_RETURN(Destination destination,
                             ResolveDestination(fn, args->client, args->device, args->memory));
    host.device = destination.device;
    host.memory = destination.memory;
    if (args->device_layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(host.device_layout,
                               FromPjrtLayout(fn, *args->device_layout, host.type, host.dims));
    }
    PJRTKIT_ASSIGN_OR_RETURN(HostBufferResult result,
                             args->client->client->BufferFromHostBuffer(host));
    if (result.buffer == nullptr) {
      return Internal(std::string(fn) + ": the client returned a null buffer");
    }
    std::unique_ptr<PJRT_Event> done(WrapEvent(std::move(result.done_with_host_buffer)));
    args->buffer = WrapBuffer(args->client, std::move(result.buffer));
    args->done_with_host_buffer = done.release();
    return OkStatus();
  });
}

PJRT_Error* ClientCreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args) {
  return Guard("PJRT_Client_CreateErrorBuffer", [&](const char* fn) -> Status {
    // payload/num_payload and device_layout are newer than `buffer`: read only when present.
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_CreateErrorBuffer_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    const size_t num_payload =
        args->struct_size >= PJRTKIT_ARGS_SIZE(PJRT_Client_CreateErrorBuffer_Args, num_payload)
            ? args->num_payload
            : 0;
    Status error;
    PJRTKIT_RETURN_IF_ERROR(ErrorFromFields(fn, args->error_code, args->error_message,
                                            args->error_message_size, args->payload, num_payload,
                                            &error));
    PJRTKIT_ASSIGN_OR_RETURN(ElementType type, FromPjrtBufferType(fn, args->shape_element_type));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::vector<int64_t> dims,
        ReadDims(fn, "args->shape_dims", args->shape_dims, args->shape_num_dims));
    PJRTKIT_ASSIGN_OR_RETURN(Destination destination,
                             ResolveDestination(fn, args->client, nullptr, args->memory));
    const PJRT_Buffer_MemoryLayout* layout = args->shape_layout;
    if (args->struct_size >=
            PJRTKIT_ARGS_SIZE(PJRT_Client_CreateErrorBuffer_Args, device_layout) &&
        args->device_layout != nullptr) {
      layout = args->device_layout;
    }
    MemoryLayout device_layout;
    if (layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(device_layout, FromPjrtLayout(fn, *layout, type, dims));
    } else {
      PJRTKIT_ASSIGN_OR_RETURN(device_layout, args->client->client->DefaultLayout(
                                                  type, dims, destination.memory));
    }
    auto buffer = std::make_unique<ErrorBuffer>(std::move(error), type, std::move(dims),
                                                std::move(device_layout), destination.device,
                                                destination.memory);
    const Status* held = &buffer->error();
    PJRT_Buffer* handle = WrapBuffer(args->client, std::move(buffer));
    handle->error = held;
    args->buffer = handle;
    return OkStatus();
  });
}

PJRT_Error* ClientCreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args* args) {
  return Guard("PJRT_Client_CreateUninitializedBuffer", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_CreateUninitializedBuffer_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(ElementType type, FromPjrtBufferType(fn, args->shape_element_type));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::vector<int64_t> dims,
        ReadDims(fn, "args->shape_dims", args->shape_dims, args->shape_num_dims));
    if (args->shape_layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout,
                               FromPjrtLayout(fn, *args->shape_layout, type, dims));
      if (!IsRowMajor(layout)) {
        return Unimplemented(std::string(fn) +
                             ": layouts other than dense row-major are not supported by pjrtkit "
                             "for uninitialized buffers");
      }
    }
    PJRTKIT_ASSIGN_OR_RETURN(Destination destination,
                             ResolveDestination(fn, args->client, args->device, args->memory));
    Memory* memory = destination.memory;
    if (memory == nullptr) memory = destination.device->default_memory();
    if (memory == nullptr) {
      return InvalidArgument(std::string(fn) + ": the device has no default memory");
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer,
                             args->client->client->CreateUninitializedBuffer(type, dims, memory));
    if (buffer == nullptr) return Internal(std::string(fn) + ": the client returned a null buffer");
    args->buffer = WrapBuffer(args->client, std::move(buffer));
    return OkStatus();
  });
}

PJRT_Error* ClientCreateViewOfDeviceBuffer(PJRT_Client_CreateViewOfDeviceBuffer_Args* args) {
  return Guard("PJRT_Client_CreateViewOfDeviceBuffer", [&](const char* fn) -> Status {
    // `memory` is newer than `buffer`: read only when the caller's struct has it.
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_CreateViewOfDeviceBuffer_Args, buffer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    DeviceBufferViewArgs view;
    view.data = args->device_buffer_ptr;
    view.stream = args->stream;
    PJRTKIT_ASSIGN_OR_RETURN(view.type, FromPjrtBufferType(fn, args->element_type));
    PJRTKIT_ASSIGN_OR_RETURN(view.dims, ReadDims(fn, "args->dims", args->dims, args->num_dims));
    // A shape without elements has no memory to point at: DLPack producers (PyTorch, CuPy) give
    // a null data pointer for it, and JAX passes it on.
    bool empty = false;
    for (int64_t dim : view.dims) empty = empty || dim == 0;
    if (args->device_buffer_ptr == nullptr && !empty) {
      return InvalidArgument(std::string(fn) +
                             ": args->device_buffer_ptr is null (allowed only for a shape with "
                             "no elements)");
    }
    if (args->layout != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(view.layout,
                               FromPjrtLayout(fn, *args->layout, view.type, view.dims));
    }
    PJRT_Memory* memory = nullptr;
    if (args->struct_size >= PJRTKIT_ARGS_SIZE(PJRT_Client_CreateViewOfDeviceBuffer_Args, memory)) {
      memory = args->memory;
    }
    PJRTKIT_ASSIGN_OR_RETURN(Destination destination,
                             ResolveDestination(fn, args->client, args->device, memory));
    view.device = destination.device;
    view.memory = destination.memory;
    if (args->on_delete_callback != nullptr) {
      void (*callback)(void*, void*) = args->on_delete_callback;
      void* pointer = args->device_buffer_ptr;
      void* user_arg = args->on_delete_callback_arg;
      view.on_delete = [callback, pointer, user_arg] { callback(pointer, user_arg); };
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer,
                             args->client->client->CreateViewOfDeviceBuffer(view));
    if (buffer == nullptr) return Internal(std::string(fn) + ": the client returned a null buffer");
    args->buffer = WrapBuffer(args->client, std::move(buffer));
    return OkStatus();
  });
}

PJRT_Error* ClientCreateBuffersForAsyncHostToDevice(
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args* args) {
  return Guard("PJRT_Client_CreateBuffersForAsyncHostToDevice", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, transfer_manager)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory", args->memory));
    PJRTKIT_RETURN_IF_ERROR(
        CheckSameClient(fn, "args->memory", args->client, Impl(args->memory)->client));
    if (args->num_shape_specs == 0) {
      return InvalidArgument(std::string(fn) + ": num_shape_specs is 0 (give at least one)");
    }
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "shape_specs", args->shape_specs));
    if (args->num_device_layouts != 0 && args->num_device_layouts != args->num_shape_specs) {
      return InvalidArgument(std::string(fn) + ": num_device_layouts is " +
                             std::to_string(args->num_device_layouts) + " but num_shape_specs is " +
                             std::to_string(args->num_shape_specs) +
                             " (give one per spec or none)");
    }
    if (args->num_device_layouts != 0) {
      PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_layouts", args->device_layouts));
    }
    std::vector<BufferShape> shapes;
    std::vector<std::optional<MemoryLayout>> layouts;
    for (size_t i = 0; i < args->num_shape_specs; ++i) {
      // PJRT_ShapeSpec's struct_size is not read: XLA's plugins never read it and XLA's own
      // callers leave it unset (as they do for layouts, see FromPjrtLayout); the fields are
      // checked instead.
      const PJRT_ShapeSpec& spec = args->shape_specs[i];
      BufferShape shape;
      PJRTKIT_ASSIGN_OR_RETURN(shape.type, FromPjrtBufferType(fn, spec.element_type));
      PJRTKIT_ASSIGN_OR_RETURN(
          shape.dims, ReadDims(fn, "args->shape_specs[" + std::to_string(i) + "].dims", spec.dims,
                               spec.num_dims));
      if (args->num_device_layouts != 0 && args->device_layouts[i] != nullptr) {
        PJRTKIT_ASSIGN_OR_RETURN(
            MemoryLayout layout,
            FromPjrtLayout(fn, *args->device_layouts[i], shape.type, shape.dims));
        layouts.emplace_back(std::move(layout));
      } else if (args->num_device_layouts != 0) {
        layouts.emplace_back(std::nullopt);
      }
      shapes.push_back(std::move(shape));
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<AsyncHostToDeviceTransferManager> manager,
                             args->client->client->CreateBuffersForAsyncHostToDevice(
                                 shapes, layouts, Impl(args->memory)->memory));
    if (manager == nullptr) {
      return Internal(std::string(fn) + ": the client returned a null transfer manager");
    }
    if (manager->buffer_count() != shapes.size()) {
      return Internal(std::string(fn) + ": the client's transfer manager has " +
                      std::to_string(manager->buffer_count()) + " buffers for " +
                      std::to_string(shapes.size()) + " shape specs");
    }
    auto* handle = new PJRT_AsyncHostToDeviceTransferManager();
    handle->client_reference.Reset(args->client);
    handle->manager = std::move(manager);
    handle->shapes = std::move(shapes);
    handle->layouts = std::move(layouts);
    handle->client = args->client;
    args->transfer_manager = handle;
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
