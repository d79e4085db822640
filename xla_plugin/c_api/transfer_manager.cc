#include "xla_plugin/c_api/transfer_manager.h"

// C++ standard library.
#include <memory>
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/buffer.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/layout_codec.h"

namespace pjrtkit {
namespace capi {
namespace {

// "f32[2,3]", for messages.
std::string ShapeText(ElementType type, const std::vector<int64_t>& dims) {
  std::string out = std::string(ElementTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// INVALID_ARGUMENT naming `fn` unless 0 <= `index` < the manager's buffer count.
Status CheckIndex(const char* fn, const PJRT_AsyncHostToDeviceTransferManager& manager,
                  int index) {
  const size_t count = manager.manager->buffer_count();
  if (index >= 0 && static_cast<size_t>(index) < count) return OkStatus();
  return InvalidArgument(std::string(fn) + ": buffer_index " + std::to_string(index) +
                         " is out of range; the transfer has " + std::to_string(count) +
                         " buffer(s)");
}

}  // namespace

PJRT_Error* TransferManagerDestroy(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args, transfer_manager)));
    delete args->transfer_manager;
    return OkStatus();
  });
}

PJRT_Error* TransferManagerTransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_TransferData", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args,
                          done_with_h2d_transfer)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
    PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, *args->transfer_manager, args->buffer_index));
    if (args->offset < 0 || args->transfer_size < 0) {
      return InvalidArgument(std::string(fn) + ": offset (" + std::to_string(args->offset) +
                             ") and transfer_size (" + std::to_string(args->transfer_size) +
                             ") must be >= 0");
    }
    if (args->transfer_size > 0) PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "data", args->data));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::shared_ptr<Event> done,
        args->transfer_manager->manager->TransferData(args->buffer_index, args->data,
                                                      args->offset, args->transfer_size,
                                                      args->is_last_transfer));
    args->done_with_h2d_transfer = WrapEvent(std::move(done));
    return OkStatus();
  });
}

PJRT_Error* TransferManagerRetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args* args) {
  return Guard(
      "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer", [&](const char* fn) -> Status {
        PJRTKIT_RETURN_IF_ERROR(CheckArgs(
            fn, args,
            PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args,
                              buffer_out)));
        PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
        PJRT_AsyncHostToDeviceTransferManager& manager = *args->transfer_manager;
        PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, manager, args->buffer_index));
        PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer,
                                 manager.manager->RetrieveBuffer(args->buffer_index));
        if (buffer == nullptr) {
          return Internal(std::string(fn) + ": the transfer returned a null buffer");
        }
        args->buffer_out = WrapBuffer(manager.client, std::move(buffer));
        return OkStatus();
      });
}

PJRT_Error* TransferManagerDevice(PJRT_AsyncHostToDeviceTransferManager_Device_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_Device", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_Device_Args, device_out)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
    const PJRT_AsyncHostToDeviceTransferManager& manager = *args->transfer_manager;
    PJRT_Device* device = manager.client->FindDevice(manager.manager->device());
    if (device == nullptr) {
      return Internal(std::string(fn) + ": the transfer's device is not one of its client's");
    }
    args->device_out = device;
    return OkStatus();
  });
}

PJRT_Error* TransferManagerBufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_BufferCount", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args, buffer_count)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
    args->buffer_count = args->transfer_manager->manager->buffer_count();
    return OkStatus();
  });
}

PJRT_Error* TransferManagerBufferSize(
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_BufferSize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args, buffer_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
    PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, *args->transfer_manager, args->buffer_index));
    PJRTKIT_ASSIGN_OR_RETURN(args->buffer_size,
                             args->transfer_manager->manager->buffer_size(args->buffer_index));
    return OkStatus();
  });
}

PJRT_Error* TransferManagerSetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args* args) {
  return Guard(
      "PJRT_AsyncHostToDeviceTransferManager_SetBufferError", [&](const char* fn) -> Status {
        PJRTKIT_RETURN_IF_ERROR(CheckArgs(
            fn, args,
            PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args,
                              error_message_size)));
        PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
        PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, *args->transfer_manager, args->buffer_index));
        const int code = RawEnumValue(args->error_code);
        if (code <= 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
          return InvalidArgument(std::string(fn) + ": error_code " + std::to_string(code) +
                                 " is not an error (give a PJRT_Error_Code from 1 to 16)");
        }
        PJRTKIT_ASSIGN_OR_RETURN(std::string message,
                                 ToString(fn, "error_message", args->error_message,
                                          args->error_message_size));
        return args->transfer_manager->manager->SetBufferError(
            args->buffer_index, Status(ToStatusCode(args->error_code), std::move(message)));
      });
}

PJRT_Error* TransferManagerAddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args* args) {
  return Guard("PJRT_AsyncHostToDeviceTransferManager_AddMetadata", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args, num_metadata)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap metadata,
                             ToAttributeMap(fn, args->transfer_metadata, args->num_metadata));
    return args->transfer_manager->manager->AddMetadata(metadata);
  });
}

PJRT_Error* TransferManagerTransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args) {
  return Guard(
      "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral", [&](const char* fn) -> Status {
        PJRTKIT_RETURN_IF_ERROR(CheckArgs(
            fn, args,
            PJRTKIT_ARGS_SIZE(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args,
                              done_with_h2d_transfer)));
        PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "transfer_manager", args->transfer_manager));
        const PJRT_AsyncHostToDeviceTransferManager& manager = *args->transfer_manager;
        PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, manager, args->buffer_index));
        const BufferShape& shape = manager.shapes[args->buffer_index];
        PJRTKIT_ASSIGN_OR_RETURN(ElementType type,
                                 FromPjrtBufferType(fn, args->shape_element_type));
        if (args->shape_num_dims > 0 && args->shape_dims == nullptr) {
          return NullHandleError(fn, "shape_dims");
        }
        const std::vector<int64_t> dims(args->shape_dims, args->shape_dims + args->shape_num_dims);
        if (type != shape.type || dims != shape.dims) {
          return InvalidArgument(std::string(fn) + ": the literal's shape is " +
                                 ShapeText(type, dims) + " but buffer " +
                                 std::to_string(args->buffer_index) + " is " +
                                 ShapeText(shape.type, shape.dims));
        }
        MemoryLayout buffer_layout = RowMajorLayout(dims.size());
        if (!manager.layouts.empty() && manager.layouts[args->buffer_index].has_value()) {
          buffer_layout = *manager.layouts[args->buffer_index];
        }
        MemoryLayout literal_layout = RowMajorLayout(dims.size());
        if (args->shape_layout != nullptr) {
          PJRTKIT_ASSIGN_OR_RETURN(literal_layout,
                                   FromPjrtLayout(fn, *args->shape_layout, type, dims));
        }
        if (literal_layout.minor_to_major != buffer_layout.minor_to_major ||
            literal_layout.tiles != buffer_layout.tiles ||
            literal_layout.element_size_in_bits != buffer_layout.element_size_in_bits) {
          return Unimplemented(std::string(fn) + ": the literal is laid out as " +
                               EncodeXlaLayout(literal_layout) + " but buffer " +
                               std::to_string(args->buffer_index) + " as " +
                               EncodeXlaLayout(buffer_layout) +
                               "; pjrtkit copies literals in the buffer's own layout only");
        }
        PJRTKIT_ASSIGN_OR_RETURN(size_t bytes, manager.manager->buffer_size(args->buffer_index));
        if (bytes > 0) PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "data", args->data));
        PJRTKIT_ASSIGN_OR_RETURN(
            std::shared_ptr<Event> done,
            manager.manager->TransferData(args->buffer_index, args->data, 0,
                                          static_cast<int64_t>(bytes), /*is_last=*/true));
        args->done_with_h2d_transfer = WrapEvent(std::move(done));
        return OkStatus();
      });
}

}  // namespace capi
}  // namespace pjrtkit
