#include "xla_plugin/devices/inner/wrapped_buffer.h"

#include <string>
#include <utility>

#include "xla_plugin/devices/inner/host_layout.h"
#include "xla_plugin/devices/inner/inner_layout.h"
#include "xla_plugin/devices/inner/wrapped_client.h"

namespace pjrtkit {
namespace inner {

StatusOr<std::unique_ptr<WrappedBuffer>> WrappedBuffer::Wrap(WrappedClient* client,
                                                           PJRT_Buffer* inner) {
  if (inner == nullptr) return Internal(client->inner().name() + " returned a null buffer");
  StatusOr<std::shared_ptr<const WrappedBufferInfo>> info = ReadInfo(client, inner);
  if (!info.ok()) {
    client->inner().DestroyBuffer(inner);
    return info.status();
  }
  return WrapWithInfo(client, inner, std::move(info).value());
}

std::unique_ptr<WrappedBuffer> WrappedBuffer::WrapWithInfo(
    WrappedClient* client, PJRT_Buffer* inner, std::shared_ptr<const WrappedBufferInfo> info,
    bool known_ready) {
  return std::unique_ptr<WrappedBuffer>(
      new WrappedBuffer(client, inner, std::move(info), known_ready));
}

StatusOr<std::shared_ptr<const WrappedBufferInfo>> WrappedBuffer::ReadInfo(WrappedClient* client,
                                                                         PJRT_Buffer* inner) {
  const InnerApi& api = client->inner();
  auto info = std::make_shared<WrappedBufferInfo>();
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Device, device_args);
  device_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Device, &device_args));
  info->device = client->FromInner(device_args.device);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Memory, memory_args);
  memory_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Memory, &memory_args));
  info->memory = client->FromInner(memory_args.memory);
  if (info->device == nullptr || info->memory == nullptr) {
    return Internal(api.name() +
                    " returned a buffer on a device or memory pjrtkit does not know");
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ElementType, type_args);
  type_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_ElementType, &type_args));
  PJRTKIT_ASSIGN_OR_RETURN(info->element_type, FromInnerType(type_args.type));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Dimensions, dims_args);
  dims_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Dimensions, &dims_args));
  info->dims.assign(dims_args.dims, dims_args.dims + dims_args.num_dims);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_OnDeviceSizeInBytes, size_args);
  size_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_OnDeviceSizeInBytes, &size_args));
  info->on_device_size = size_args.on_device_size_in_bytes;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_IsOnCpu, cpu_args);
  cpu_args.buffer = inner;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_IsOnCpu, &cpu_args));
  info->is_on_cpu = cpu_args.is_on_cpu;
  // XLA:CPU aborts (CHECK has_layout) when asked for a token's layout; tokens (outputs of
  // programs with ordered effects) have none.
  if (info->element_type == ElementType::kToken) {
    info->layout = StatusOr<MemoryLayout>(Unimplemented("a token buffer has no memory layout"));
  } else {
    PJRTKIT_INNER_ARGS(PJRT_Buffer_GetMemoryLayout, layout_args);
    layout_args.buffer = inner;
    Status layout_status = PJRTKIT_INNER_CALL(api, PJRT_Buffer_GetMemoryLayout, &layout_args);
    info->layout = layout_status.ok() ? InnerLayout::FromInner(layout_args.layout)
                                      : StatusOr<MemoryLayout>(layout_status);
  }
  return std::shared_ptr<const WrappedBufferInfo>(std::move(info));
}

WrappedBuffer::WrappedBuffer(WrappedClient* client, PJRT_Buffer* inner,
                           std::shared_ptr<const WrappedBufferInfo> info, bool known_ready)
    : client_(client), inner_(inner), info_(std::move(info)), known_ready_(known_ready) {
  if (info_->memory->is_device_kind()) {
    info_->device->counter()->Allocate(static_cast<int64_t>(info_->on_device_size));
    counted_ = true;
  }
}

WrappedBuffer::~WrappedBuffer() {
  // Nothing else can touch the buffer now: a plain load instead of ReleaseMemoryCount's exchange.
  if (counted_.load(std::memory_order_relaxed)) {
    info_->device->counter()->Free(static_cast<int64_t>(info_->on_device_size));
  }
  client_->inner().DestroyBuffer(inner_);
}

void WrappedBuffer::ReleaseMemoryCount() const {
  if (counted_.exchange(false)) {
    info_->device->counter()->Free(static_cast<int64_t>(info_->on_device_size));
  }
}

bool WrappedBuffer::RefreshDeleted() {
  if (IsDeleted()) return true;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_IsDeleted, args);
  args.buffer = inner_;
  // An inner error leaves the buffer unusable too.
  Status status = PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_IsDeleted, &args);
  if (status.ok() && !args.is_deleted) return false;
  deleted_.store(true, std::memory_order_release);
  ReleaseMemoryCount();  // Donated buffers are deleted by the inner plugin.
  return true;
}

Status WrappedBuffer::CheckLive(const char* operation) const {
  if (!IsDeleted()) return OkStatus();
  return FailedPrecondition(std::string(operation) + " called on a buffer that was deleted or " +
                            "donated (" + ElementTypeName(info_->element_type) + " on " +
                            info_->device->description().debug_string() + ")");
}

void WrappedBuffer::Delete() {
  if (deleted_.exchange(true)) return;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Delete, args);
  args.buffer = inner_;
  PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_Delete, &args);
  ReleaseMemoryCount();
}

std::shared_ptr<Event> WrappedBuffer::ReadyEvent() {
  Status live = CheckLive("Buffer::ReadyEvent");
  if (!live.ok()) return Event::CreateReady(live);
  if (known_ready_) return client_->inner().ready_event();
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ReadyEvent, args);
  args.buffer = inner_;
  Status status = PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ReadyEvent, &args);
  if (!status.ok()) return Event::CreateReady(status);
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ReadyEvent");
}

StatusOr<size_t> WrappedBuffer::HostBufferSize(const MemoryLayout* host_layout) const {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::HostBufferSize"));
  if (host_layout != nullptr && !IsRowMajor(*host_layout, info_->dims.size())) {
    PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout(*host_layout, info_->dims.size()));
    // A permutation is as dense as row-major.
    return DenseByteSize(info_->element_type, info_->dims);
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.dst = nullptr;  // Asks for the size only.
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  client_->inner().DestroyEvent(args.event);  // None is expected for a size query.
  return args.dst_size;
}

StatusOr<std::shared_ptr<Event>> WrappedBuffer::ToHostBuffer(void* dst, size_t dst_size,
                                                            const MemoryLayout* host_layout) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::ToHostBuffer"));
  if (dst == nullptr) return InvalidArgument("Buffer::ToHostBuffer: dst is null");
  if (host_layout != nullptr && !IsRowMajor(*host_layout, info_->dims.size())) {
    return ToHostBufferPermuted(dst, dst_size, *host_layout);
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.dst = dst;
  args.dst_size = dst_size;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
}

StatusOr<std::shared_ptr<Event>> WrappedBuffer::ToHostBufferPermuted(void* dst, size_t dst_size,
                                                                    const MemoryLayout& layout) {
  PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout(layout, info_->dims.size()));
  const int bits = ElementTypeBits(info_->element_type);
  if (bits == 0 || bits % 8 != 0) {
    return Unimplemented(std::string("ToHostBuffer: non-default host layouts of ") +
                         ElementTypeName(info_->element_type) + " are not supported");
  }
  const size_t bytes = DenseByteSize(info_->element_type, info_->dims);
  if (dst_size < bytes) {
    return InvalidArgument("Buffer::ToHostBuffer: dst has " + std::to_string(dst_size) +
                           " bytes, the array needs " + std::to_string(bytes));
  }
  // Read row-major into a staging copy, then permute it into `dst` when the copy is done.
  auto staging = std::make_shared<std::vector<char>>(bytes);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.dst = staging->data();
  args.dst_size = bytes;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  std::shared_ptr<Event> copied = client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
  std::shared_ptr<Event> done = Event::Create();
  copied->OnReady([staging, dst, dims = info_->dims, element_bytes = static_cast<size_t>(bits / 8),
                   minor_to_major = layout.minor_to_major, done](Status status) {
    if (status.ok()) {
      CopyRowMajorToLayout(staging->data(), static_cast<char*>(dst), dims, element_bytes,
                           minor_to_major);
    }
    done->Set(status);
  });
  return done;
}

StatusOr<std::unique_ptr<Buffer>> WrappedBuffer::CopyToDevice(Device* dst_device) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyToDevice"));
  PJRTKIT_ASSIGN_OR_RETURN(WrappedDevice * device,
                           client_->OwnDevice(dst_device, "Buffer::CopyToDevice destination"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToDevice, args);
  args.buffer = inner_;
  args.dst_device = device->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyToDevice, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> copy, Wrap(client_, args.dst_buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

StatusOr<std::unique_ptr<Buffer>> WrappedBuffer::CopyToMemory(Memory* dst_memory) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyToMemory"));
  PJRTKIT_ASSIGN_OR_RETURN(WrappedMemory * memory,
                           client_->OwnMemory(dst_memory, "Buffer::CopyToMemory destination"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToMemory, args);
  args.buffer = inner_;
  args.dst_memory = memory->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyToMemory, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> copy, Wrap(client_, args.dst_buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

StatusOr<std::shared_ptr<Event>> WrappedBuffer::CopyRawToHost(void* dst, int64_t offset,
                                                             int64_t size) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyRawToHost"));
  if (dst == nullptr && size > 0) return InvalidArgument("Buffer::CopyRawToHost: dst is null");
  if (offset < 0 || size < 0 || static_cast<uint64_t>(offset) + static_cast<uint64_t>(size) >
                                    static_cast<uint64_t>(info_->on_device_size)) {
    return OutOfRange("Buffer::CopyRawToHost: bytes [" + std::to_string(offset) + ", " +
                      std::to_string(offset) + " + " + std::to_string(size) +
                      ") are outside the buffer's " + std::to_string(info_->on_device_size) +
                      " bytes");
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyRawToHost, args);
  args.buffer = inner_;
  args.dst = dst;
  args.offset = offset;
  args.transfer_size = size;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyRawToHost, &args));
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_CopyRawToHost");
}

StatusOr<uintptr_t> WrappedBuffer::UnsafePointer() {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::UnsafePointer"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_UnsafePointer, args);
  args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_UnsafePointer, &args));
  return args.buffer_pointer;
}

StatusOr<void*> WrappedBuffer::OpaqueDeviceMemoryDataPointer() {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::OpaqueDeviceMemoryDataPointer"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, args);
  args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_OpaqueDeviceMemoryDataPointer, &args));
  return args.device_memory_ptr;
}

}  // namespace inner
}  // namespace pjrtkit
