#include "xla_plugin/devices/xla_cpu/xla_cpu_buffer.h"

#include <string>
#include <utility>

#include "xla_plugin/devices/xla_cpu/host_layout.h"
#include "xla_plugin/devices/xla_cpu/inner_layout.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_client.h"

namespace pjrtkit {
namespace xla_cpu {

StatusOr<std::unique_ptr<XlaCpuBuffer>> XlaCpuBuffer::Wrap(XlaCpuClient* client,
                                                           PJRT_Buffer* inner) {
  if (inner == nullptr) return Internal("XLA:CPU returned a null buffer");
  std::unique_ptr<XlaCpuBuffer> buffer(new XlaCpuBuffer(client, inner));
  PJRTKIT_RETURN_IF_ERROR(buffer->Init());  // On error the destructor destroys `inner`.
  return buffer;
}

XlaCpuBuffer::XlaCpuBuffer(XlaCpuClient* client, PJRT_Buffer* inner)
    : client_(client), inner_(inner) {}

XlaCpuBuffer::~XlaCpuBuffer() {
  ReleaseMemoryCount();
  client_->inner().DestroyBuffer(inner_);
}

Status XlaCpuBuffer::Init() {
  const InnerApi& api = client_->inner();
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Device, device_args);
  device_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Device, &device_args));
  device_ = client_->FromInner(device_args.device);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Memory, memory_args);
  memory_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Memory, &memory_args));
  memory_ = client_->FromInner(memory_args.memory);
  if (device_ == nullptr || memory_ == nullptr) {
    return Internal("XLA:CPU returned a buffer on a device or memory pjrtkit does not know");
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ElementType, type_args);
  type_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_ElementType, &type_args));
  PJRTKIT_ASSIGN_OR_RETURN(element_type_, FromInnerType(type_args.type));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Dimensions, dims_args);
  dims_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_Dimensions, &dims_args));
  dims_.assign(dims_args.dims, dims_args.dims + dims_args.num_dims);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_OnDeviceSizeInBytes, size_args);
  size_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_OnDeviceSizeInBytes, &size_args));
  on_device_size_ = size_args.on_device_size_in_bytes;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_IsOnCpu, cpu_args);
  cpu_args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_IsOnCpu, &cpu_args));
  is_on_cpu_ = cpu_args.is_on_cpu;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_GetMemoryLayout, layout_args);
  layout_args.buffer = inner_;
  Status layout_status = PJRTKIT_INNER_CALL(api, PJRT_Buffer_GetMemoryLayout, &layout_args);
  layout_ = layout_status.ok() ? InnerLayout::FromInner(layout_args.layout)
                               : StatusOr<MemoryLayout>(layout_status);
  if (memory_->is_device_kind()) {
    device_->counter()->Allocate(static_cast<int64_t>(on_device_size_));
    counted_ = true;
  }
  return OkStatus();
}

void XlaCpuBuffer::ReleaseMemoryCount() const {
  if (counted_.exchange(false)) device_->counter()->Free(static_cast<int64_t>(on_device_size_));
}

bool XlaCpuBuffer::IsDeleted() const {
  bool deleted = deleted_.load();
  if (!deleted) {
    PJRTKIT_INNER_ARGS(PJRT_Buffer_IsDeleted, args);
    args.buffer = inner_;
    // An inner error leaves the buffer unusable too.
    Status status = PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_IsDeleted, &args);
    deleted = !status.ok() || args.is_deleted;
  }
  if (deleted) ReleaseMemoryCount();  // Donated buffers are deleted by the inner plugin.
  return deleted;
}

Status XlaCpuBuffer::CheckLive(const char* operation) const {
  if (!IsDeleted()) return OkStatus();
  return FailedPrecondition(std::string(operation) + " called on a buffer that was deleted or " +
                            "donated (" + ElementTypeName(element_type_) + " on " +
                            device_->description().debug_string() + ")");
}

void XlaCpuBuffer::Delete() {
  if (deleted_.exchange(true)) return;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Delete, args);
  args.buffer = inner_;
  PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_Delete, &args);
  ReleaseMemoryCount();
}

std::shared_ptr<Event> XlaCpuBuffer::ReadyEvent() {
  Status live = CheckLive("Buffer::ReadyEvent");
  if (!live.ok()) return Event::CreateReady(live);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ReadyEvent, args);
  args.buffer = inner_;
  Status status = PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ReadyEvent, &args);
  if (!status.ok()) return Event::CreateReady(status);
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ReadyEvent");
}

StatusOr<size_t> XlaCpuBuffer::HostBufferSize(const MemoryLayout* host_layout) const {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::HostBufferSize"));
  if (host_layout != nullptr && !IsRowMajor(*host_layout, dims_.size())) {
    PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout(*host_layout, dims_.size()));
    return DenseByteSize(element_type_, dims_);  // A permutation is as dense as row-major.
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.dst = nullptr;  // Asks for the size only.
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  client_->inner().DestroyEvent(args.event);  // None is expected for a size query.
  return args.dst_size;
}

StatusOr<std::shared_ptr<Event>> XlaCpuBuffer::ToHostBuffer(void* dst, size_t dst_size,
                                                            const MemoryLayout* host_layout) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::ToHostBuffer"));
  if (dst == nullptr) return InvalidArgument("Buffer::ToHostBuffer: dst is null");
  if (host_layout != nullptr && !IsRowMajor(*host_layout, dims_.size())) {
    return ToHostBufferPermuted(dst, dst_size, *host_layout);
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.dst = dst;
  args.dst_size = dst_size;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
}

StatusOr<std::shared_ptr<Event>> XlaCpuBuffer::ToHostBufferPermuted(void* dst, size_t dst_size,
                                                                    const MemoryLayout& layout) {
  PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout(layout, dims_.size()));
  const int bits = ElementTypeBits(element_type_);
  if (bits == 0 || bits % 8 != 0) {
    return Unimplemented(std::string("ToHostBuffer: non-default host layouts of ") +
                         ElementTypeName(element_type_) + " are not supported");
  }
  const size_t bytes = DenseByteSize(element_type_, dims_);
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
  copied->OnReady([staging, dst, dims = dims_, element_bytes = static_cast<size_t>(bits / 8),
                   minor_to_major = layout.minor_to_major, done](Status status) {
    if (status.ok()) {
      CopyRowMajorToLayout(staging->data(), static_cast<char*>(dst), dims, element_bytes,
                           minor_to_major);
    }
    done->Set(status);
  });
  return done;
}

StatusOr<std::unique_ptr<Buffer>> XlaCpuBuffer::CopyToDevice(Device* dst_device) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyToDevice"));
  PJRTKIT_ASSIGN_OR_RETURN(XlaCpuDevice * device,
                           client_->OwnDevice(dst_device, "Buffer::CopyToDevice destination"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToDevice, args);
  args.buffer = inner_;
  args.dst_device = device->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyToDevice, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<XlaCpuBuffer> copy, Wrap(client_, args.dst_buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

StatusOr<std::unique_ptr<Buffer>> XlaCpuBuffer::CopyToMemory(Memory* dst_memory) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyToMemory"));
  PJRTKIT_ASSIGN_OR_RETURN(XlaCpuMemory * memory,
                           client_->OwnMemory(dst_memory, "Buffer::CopyToMemory destination"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToMemory, args);
  args.buffer = inner_;
  args.dst_memory = memory->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyToMemory, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<XlaCpuBuffer> copy, Wrap(client_, args.dst_buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

StatusOr<std::shared_ptr<Event>> XlaCpuBuffer::CopyRawToHost(void* dst, int64_t offset,
                                                             int64_t size) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyRawToHost"));
  if (dst == nullptr && size > 0) return InvalidArgument("Buffer::CopyRawToHost: dst is null");
  if (offset < 0 || size < 0 || static_cast<uint64_t>(offset) + static_cast<uint64_t>(size) >
                                    static_cast<uint64_t>(on_device_size_)) {
    return OutOfRange("Buffer::CopyRawToHost: bytes [" + std::to_string(offset) + ", " +
                      std::to_string(offset) + " + " + std::to_string(size) +
                      ") are outside the buffer's " + std::to_string(on_device_size_) +
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

StatusOr<uintptr_t> XlaCpuBuffer::UnsafePointer() {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::UnsafePointer"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_UnsafePointer, args);
  args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_UnsafePointer, &args));
  return args.buffer_pointer;
}

StatusOr<void*> XlaCpuBuffer::OpaqueDeviceMemoryDataPointer() {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::OpaqueDeviceMemoryDataPointer"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, args);
  args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_OpaqueDeviceMemoryDataPointer, &args));
  return args.device_memory_ptr;
}

}  // namespace xla_cpu
}  // namespace pjrtkit
