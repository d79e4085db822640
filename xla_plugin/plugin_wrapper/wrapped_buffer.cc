#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"

#include <string>
#include <utility>

#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/plugin_wrapper/host_layout.h"
#include "xla_plugin/plugin_wrapper/inner_layout.h"
#include "xla_plugin/plugin_wrapper/inner_layouts.h"
#include "xla_plugin/plugin_wrapper/pinned_host_read.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace plugin_wrapper {

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
    // PJRT_Buffer_GetMemoryLayout has no element size, and XLA:CPU packs sub-byte types
    // ("{0:E(4)}" for s4): ask its Layouts extension for the whole layout of those.
    const int bits = ElementTypeBits(info->element_type);
    if (bits > 0 && bits < 8) {
      StatusOr<InnerLayouts> layouts = InnerLayouts::Find(client->shared_inner());
      StatusOr<MemoryLayout> full =
          layouts.ok() ? layouts->BufferLayout(inner) : StatusOr<MemoryLayout>(layouts.status());
      if (full.ok()) info->layout = std::move(full);
    }
    info->row_major = !info->layout.ok() || IsRowMajor(*info->layout, info->dims.size());
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

bool WrappedBuffer::FixesLayouts() const {
  return client_->policy().moves_bytes_ignoring_layouts();
}

StatusOr<size_t> WrappedBuffer::HostBufferSize(const MemoryLayout* host_layout) const {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::HostBufferSize"));
  if (!FixesLayouts() && host_layout != nullptr) {
    // The inner plugin lays the data out itself: it knows the size.
    InnerLayout inner_layout(*host_layout);
    PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
    args.src = inner_;
    args.host_layout = inner_layout.get();
    args.dst = nullptr;  // Asks for the size only.
    PJRTKIT_RETURN_IF_ERROR(
        PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
    client_->inner().DestroyEvent(args.event);
    return args.dst_size;
  }
  if (host_layout != nullptr && !IsRowMajor(*host_layout, info_->dims.size())) {
    PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout("ToHostBuffer", "host layout", *host_layout,
                                                   info_->element_type, info_->dims.size(),
                                                   client_->policy().backend()));
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
  const size_t rank = info_->dims.size();
  const bool row_major_host = host_layout == nullptr || IsRowMajor(*host_layout, rank);
  // XLA:CPU writes the buffer's bytes as they are (a null host_layout: "the source's layout"),
  // whatever layout is asked for. When the buffer's layout already orders the elements as the
  // caller wants, that is the answer; otherwise pjrtkit permutes (ToHostBufferPermuted).
  bool as_stored = info_->row_major && row_major_host;  // The common case, without a lookup.
  if (!as_stored && !FixesLayouts()) {
    // The inner plugin honours host layouts (XLA:GPU): it lays the data out itself.
    InnerLayout inner_layout(row_major_host ? RowMajorLayout(rank) : *host_layout);
    PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
    args.src = inner_;
    args.host_layout = inner_layout.get();
    args.dst = dst;
    args.dst_size = dst_size;
    PJRTKIT_RETURN_IF_ERROR(
        PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
    return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
  }
  if (!as_stored) {
    const MemoryLayout wanted = row_major_host ? RowMajorLayout(rank) : *host_layout;
    as_stored = info_->layout.ok() && SameElementOrder(*info_->layout, wanted, info_->dims);
    if (!as_stored) return ToHostBufferPermuted(dst, dst_size, wanted);
  }
  if (PJRT_Memory* pinned = PinnedHostForReads(dst_size)) {
    StatusOr<std::shared_ptr<Event>> staged =
        ReadThroughPinnedHost(*client_, inner_, pinned, dst, DenseByteSize(info_->element_type,
                                                                           info_->dims));
    if (staged.ok()) return staged;  // Otherwise (pinned memory exhausted, ...) read directly.
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.host_layout = nullptr;  // The buffer's own layout, which orders elements as asked.
  args.dst = dst;
  args.dst_size = dst_size;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
}

PJRT_Memory* WrappedBuffer::PinnedHostForReads(size_t dst_size) const {
  if (!client_->policy().reads_through_pinned_host() || info_->memory == nullptr ||
      !static_cast<const WrappedMemory*>(info_->memory)->is_device_kind() ||
      info_->device == nullptr || ElementTypeBits(info_->element_type) % 8 != 0) {
    return nullptr;
  }
  const size_t bytes = DenseByteSize(info_->element_type, info_->dims);
  if (bytes < kMinPinnedReadBytes || dst_size < bytes || info_->on_device_size != bytes) {
    return nullptr;  // Small, a short destination (the inner plugin says so), or padded.
  }
  for (Memory* memory : info_->device->memories()) {
    if (memory->kind() == "pinned_host") return static_cast<WrappedMemory*>(memory)->inner();
  }
  return nullptr;
}

StatusOr<std::shared_ptr<Event>> WrappedBuffer::ReadAsStored(std::vector<char>* staging) {
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = inner_;
  args.host_layout = nullptr;  // The buffer's own layout: its bytes as they are.
  args.dst = staging->data();
  args.dst_size = staging->size();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_ToHostBuffer, &args));
  return client_->inner().WrapEvent(args.event, "PJRT_Buffer_ToHostBuffer");
}

StatusOr<std::shared_ptr<Event>> WrappedBuffer::ToHostBufferPermuted(void* dst, size_t dst_size,
                                                                    const MemoryLayout& layout) {
  const size_t rank = info_->dims.size();
  PJRTKIT_RETURN_IF_ERROR(
      CheckPermutationLayout("ToHostBuffer", "host layout", layout, info_->element_type, rank,
                             client_->policy().backend()));
  // A buffer whose layout XLA:CPU did not say is row-major (row_major is set for it).
  const MemoryLayout source = info_->layout.ok() ? *info_->layout : RowMajorLayout(rank);
  PJRTKIT_RETURN_IF_ERROR(
      CheckPermutationLayout("ToHostBuffer", "buffer layout", source, info_->element_type, rank,
                             client_->policy().backend()));
  const size_t bytes = DenseByteSize(info_->element_type, info_->dims);
  if (dst_size < bytes) {
    return InvalidArgument("Buffer::ToHostBuffer: dst has " + std::to_string(dst_size) +
                           " bytes, the array needs " + std::to_string(bytes));
  }
  // Read the bytes as stored into a staging copy, then permute it into `dst` when that is done.
  const size_t element_bytes = static_cast<size_t>(ElementTypeBits(info_->element_type) / 8);
  auto staging = std::make_shared<std::vector<char>>(bytes);
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Event> copied, ReadAsStored(staging.get()));
  std::shared_ptr<Event> done = Event::Create();
  copied->OnReady([staging, dst, dims = info_->dims, element_bytes,
                   src_strides = DenseByteStrides(info_->dims, element_bytes,
                                                  source.minor_to_major),
                   dst_strides = DenseByteStrides(info_->dims, element_bytes,
                                                  layout.minor_to_major),
                   done](Status status) {
    if (status.ok()) {
      CopyStrided(staging->data(), src_strides, static_cast<char*>(dst), dst_strides, dims,
                  element_bytes);
    }
    done->Set(status);
  });
  return done;
}

StatusOr<std::unique_ptr<Buffer>> WrappedBuffer::CopyPreservingLayout(WrappedDevice* device,
                                                                      WrappedMemory* memory) {
  // XLA:CPU copies the bytes but labels the copy row-major: copy them through the host instead,
  // into a buffer created with this buffer's layout (which XLA:CPU fills with the bytes as they
  // are). Synchronous: it waits until this buffer is ready.
  const size_t rank = info_->dims.size();
  PJRTKIT_RETURN_IF_ERROR(info_->layout.status());
  PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout("CopyToDevice", "buffer layout", *info_->layout,
                                                 info_->element_type, rank,
                                                 client_->policy().backend()));
  std::vector<char> staging(DenseByteSize(info_->element_type, info_->dims));
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Event> copied, ReadAsStored(&staging));
  PJRTKIT_RETURN_IF_ERROR(copied->Await());
  InnerLayout layout(*info_->layout);
  PJRTKIT_INNER_ARGS(PJRT_Client_BufferFromHostBuffer, args);
  args.client = client_->inner_client();
  args.data = staging.data();
  PJRTKIT_ASSIGN_OR_RETURN(args.type, client_->inner().ToInnerType(info_->element_type));
  args.dims = info_->dims.data();
  args.num_dims = rank;
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = device->inner();
  args.memory = memory != nullptr ? memory->inner() : nullptr;
  args.device_layout = layout.get();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client_->inner(), PJRT_Client_BufferFromHostBuffer, &args));
  // The bytes were copied during the call; the event says nothing more.
  client_->inner().DestroyEvent(args.done_with_host_buffer);
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> copy, Wrap(client_, args.buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

StatusOr<std::unique_ptr<Buffer>> WrappedBuffer::CopyToDevice(Device* dst_device) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::CopyToDevice"));
  PJRTKIT_ASSIGN_OR_RETURN(WrappedDevice * device,
                           client_->OwnDevice(dst_device, "Buffer::CopyToDevice destination"));
  if (!info_->row_major && FixesLayouts()) {
    return CopyPreservingLayout(device, /*memory=*/nullptr);
  }
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
  if (!info_->row_major && FixesLayouts()) {
    const std::vector<Device*>& by = memory->addressable_by_devices();
    if (by.empty()) {
      return InvalidArgument("Buffer::CopyToMemory: memory " + memory->debug_string() +
                             " is addressable by no device");
    }
    return CopyPreservingLayout(static_cast<WrappedDevice*>(by[0]), memory);
  }
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToMemory, args);
  args.buffer = inner_;
  args.dst_memory = memory->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_CopyToMemory, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> copy, Wrap(client_, args.dst_buffer));
  return std::unique_ptr<Buffer>(std::move(copy));
}

NativeHandle WrappedBuffer::native_handle() const {
  return {client_->inner().api(), inner_};
}

StatusOr<std::unique_ptr<Buffer>> WrappedBuffer::Bitcast(
    ElementType type, const std::vector<int64_t>& dims,
    const std::optional<MemoryLayout>& layout) {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::Bitcast"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Bitcast, args);
  args.buffer = inner_;
  PJRTKIT_ASSIGN_OR_RETURN(args.element_type, client_->inner().ToInnerType(type));
  args.dims = dims.data();
  args.num_dims = dims.size();
  std::optional<InnerLayout> inner_layout;
  if (layout.has_value()) args.device_layout = inner_layout.emplace(*layout).get();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_Bitcast, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> cast, Wrap(client_, args.out_buffer));
  return std::unique_ptr<Buffer>(std::move(cast));
}

StatusOr<ControlledDonation> WrappedBuffer::DonateWithControlDependency() {
  PJRTKIT_RETURN_IF_ERROR(CheckLive("Buffer::DonateWithControlDependency"));
  PJRTKIT_INNER_ARGS(PJRT_Buffer_DonateWithControlDependency, args);
  args.buffer = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client_->inner(), PJRT_Buffer_DonateWithControlDependency, &args));
  if (args.dependency_ready_callback == nullptr) {
    client_->inner().DestroyBuffer(args.out_buffer);
    return Internal(client_->inner().name() +
                    " returned no dependency callback for a donation with a control dependency");
  }
  // The memory now belongs to the new buffer: this one reads as donated.
  deleted_.store(true, std::memory_order_release);
  ReleaseMemoryCount();
  ControlledDonation donation;
  auto* callback = args.dependency_ready_callback;
  void* data = args.callback_data;
  donation.dependency_ready = [callback, data](Status status) {
    PJRT_Buffer_DonateWithControlDependency_Callback_Args ready{};
    ready.struct_size = PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE;
    ready.callback_data = data;
    ready.error_code = static_cast<PJRT_Error_Code>(status.code());
    ready.error_message = status.message().data();
    ready.error_message_size = status.message().size();
    callback(&ready);
  };
  StatusOr<std::unique_ptr<WrappedBuffer>> out = Wrap(client_, args.out_buffer);
  if (!out.ok()) {
    donation.dependency_ready(out.status());  // Lets the inner plugin release its state.
    return out.status();
  }
  donation.buffer = std::move(out).value();
  return donation;
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

}  // namespace plugin_wrapper
}  // namespace pjrtkit
