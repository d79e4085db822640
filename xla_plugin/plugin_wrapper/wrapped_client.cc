#include "xla_plugin/plugin_wrapper/wrapped_client.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "xla_plugin/client/shape_checks.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/host_layout.h"
#include "xla_plugin/plugin_wrapper/host_memory.h"
#include "xla_plugin/plugin_wrapper/inner_ffi.h"
#include "xla_plugin/plugin_wrapper/inner_layout.h"
#include "xla_plugin/plugin_wrapper/inner_layouts.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"
#include "xla_plugin/plugin_wrapper/pooled_host_copy.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_loaded_executable.h"
#include "xla_plugin/plugin_wrapper/wrapped_topology.h"
#include "xla_plugin/plugin_wrapper/wrapped_transfer_manager.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<std::unique_ptr<WrappedClient>> WrappedClient::Create(
    std::shared_ptr<InnerApi> inner, std::shared_ptr<const DevicePolicy> policy, int device_count,
    size_t host_buffer_cache_bytes, ProcessPlacement placement) {
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<InnerClient> inner_client,
      InnerClient::Create(inner, std::move(policy), device_count, placement.forward));
  std::unique_ptr<WrappedClient> client(
      new WrappedClient(std::move(inner), std::move(inner_client)));
  PJRTKIT_RETURN_IF_ERROR(client->Init(device_count, placement));
  if (host_buffer_cache_bytes > 0) {
    client->host_buffer_pool_ =
        std::make_shared<HostBufferPool>(HostBufferPool::DefaultOptions(host_buffer_cache_bytes));
  }
  if (client->policy().memory_stats_source() == MemoryStatsSource::kCounted) {
    // The devices of this process share the host's memory: each reports an equal part, so the
    // limits add up to what exists (code that sizes work from bytes_limit, as JAX's tests do,
    // does not oversubscribe the machine).
    client->host_memory_bytes_ = HostPhysicalMemoryBytes();
    const int64_t share =
        client->host_memory_bytes_ /
        std::max<int64_t>(1, static_cast<int64_t>(client->addressable_ptrs_.size()));
    for (const std::unique_ptr<WrappedDevice>& device : client->devices_) {
      device->SetHostMemory(share, client->host_buffer_pool_);
    }
  }
  return client;
}

WrappedClient::WrappedClient(std::shared_ptr<InnerApi> inner,
                           std::shared_ptr<InnerClient> inner_client)
    : inner_(std::move(inner)), inner_client_(std::move(inner_client)) {}

WrappedClient::~WrappedClient() {
  // Let go of the inner client first (as before devices and memories), unless executables
  // still share it.
  topology_.reset();
  inner_client_.reset();
}

Status WrappedClient::RegisterFfiHandler(const FfiHandlerRegistration& registration) {
  PJRTKIT_ASSIGN_OR_RETURN(InnerFfi ffi, InnerFfi::Find(inner_));
  return ffi.RegisterHandler(registration, policy().ffi_platform());
}

Status WrappedClient::RegisterFfiType(const FfiTypeRegistration& registration) {
  PJRTKIT_ASSIGN_OR_RETURN(InnerFfi ffi, InnerFfi::Find(inner_));
  return ffi.RegisterType(registration);
}

StatusOr<std::shared_ptr<PJRT_ExecuteContext>> WrappedClient::EmptyInnerContext() const {
  std::lock_guard<std::mutex> lock(empty_context_mu_);
  if (empty_inner_context_ == nullptr) {
    PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Create, create);
    PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_ExecuteContext_Create, &create));
    if (create.context == nullptr) {
      return Internal(inner_->name() + " PJRT_ExecuteContext_Create returned no context");
    }
    std::shared_ptr<const InnerApi> inner = inner_;
    empty_inner_context_.reset(create.context, [inner](PJRT_ExecuteContext* context) {
      PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Destroy, destroy);
      destroy.context = context;
      PJRTKIT_INNER_CALL(*inner, PJRT_ExecuteContext_Destroy, &destroy);  // Nothing to do on error.
    });
  }
  return empty_inner_context_;
}

StatusOr<MemoryLayout> WrappedClient::DefaultLayout(ElementType type,
                                                   const std::vector<int64_t>& dims,
                                                   const Memory* /*memory*/) const {
  PJRTKIT_ASSIGN_OR_RETURN(InnerLayouts layouts, InnerLayouts::Find(inner_));
  return layouts.DefaultLayout(inner_client(), type, dims);
}

Status WrappedClient::Init(int device_count, const ProcessPlacement& placement) {
  const DevicePolicy& policy = this->policy();
  PJRTKIT_INNER_ARGS(PJRT_Client_PlatformVersion, version_args);
  version_args.client = inner_client();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Client_PlatformVersion, &version_args));
  platform_name_ = kPlatformName;
  platform_version_ = PlatformVersion(
      policy.backend(),
      std::string(version_args.platform_version, version_args.platform_version_size));

  // Our device ids equal the inner ones, so check that those are exactly 0..n-1.
  PJRTKIT_INNER_ARGS(PJRT_Client_Devices, devices_args);
  devices_args.client = inner_client();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Client_Devices, &devices_args));
  if (device_count > 0 && devices_args.num_devices != static_cast<size_t>(device_count)) {
    return Internal(inner_->name() + " created " + std::to_string(devices_args.num_devices) +
                    " devices for " + std::to_string(device_count) + " requested");
  }
  if (devices_args.num_devices == 0) return Internal(inner_->name() + " created no devices");
  const int count = static_cast<int>(devices_args.num_devices);
  const bool placed = placement.process_index >= 0;  // pjrtkit places the devices (CPU).
  if (placed && placement.device_process.size() != devices_args.num_devices) {
    return Internal(inner_->name() + " created " + std::to_string(count) + " devices for " +
                    std::to_string(placement.device_process.size()) + " placed in processes");
  }
  if (placed) {
    process_index_ = placement.process_index;
  } else if (placement.forward.is_multi_process()) {
    PJRTKIT_INNER_ARGS(PJRT_Client_ProcessIndex, process_args);
    process_args.client = inner_client();
    PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Client_ProcessIndex, &process_args));
    process_index_ = process_args.process_index;
  }
  std::vector<PJRT_Device*> by_id(count, nullptr);
  std::vector<InnerDeviceInfo> infos(count);
  for (size_t i = 0; i < devices_args.num_devices; ++i) {
    PJRT_Device* device = devices_args.devices[i];
    PJRTKIT_ASSIGN_OR_RETURN(InnerDeviceInfo info, ReadDeviceInfo(device));
    if (info.id < 0 || info.id >= count || by_id[info.id] != nullptr) {
      return Internal(inner_->name() + " device ids are not 0.." + std::to_string(count - 1) +
                      " (saw id " + std::to_string(info.id) + "); pjrtkit maps devices by id");
    }
    if (placed) {
      info.process_index = placement.device_process[info.id];
      info.addressable = info.process_index == process_index_;
    } else {
      PJRTKIT_INNER_ARGS(PJRT_Device_IsAddressable, addressable_args);
      addressable_args.device = device;
      PJRTKIT_RETURN_IF_ERROR(
          PJRTKIT_INNER_CALL(*inner_, PJRT_Device_IsAddressable, &addressable_args));
      info.addressable = addressable_args.is_addressable;
    }
    by_id[info.id] = device;
    infos[info.id] = std::move(info);
  }
  const MemoryStatsSource stats = policy.memory_stats_source();
  int local_index = 0;  // Placed devices: local hardware ids 0..n-1 in this process.
  for (int id = 0; id < count; ++id) {
    const int hardware_id = placed ? local_index : infos[id].local_hardware_id;
    devices_.push_back(std::make_unique<WrappedDevice>(
        policy.Describe(id, infos[id]), by_id[id], hardware_id, inner_.get(),
        stats == MemoryStatsSource::kInner, infos[id].addressable));
    device_ptrs_.push_back(devices_.back().get());
    if (infos[id].addressable) {
      addressable_ptrs_.push_back(devices_.back().get());
      ++local_index;
    }
    device_of_inner_[by_id[id]] = devices_.back().get();
  }
  if (addressable_ptrs_.empty()) {
    return Internal(inner_->name() + " gave this process (" + std::to_string(process_index_) +
                    ") no addressable device");
  }
  PJRTKIT_RETURN_IF_ERROR(InitMemories());
  std::vector<DeviceDescription> descriptions;
  for (const std::unique_ptr<WrappedDevice>& device : devices_) {
    descriptions.push_back(device->description());
  }
  topology_ = WrappedTopology::OfClient(inner_client_, platform_version_, std::move(descriptions));
  return OkStatus();
}

StatusOr<InnerDeviceInfo> WrappedClient::ReadDeviceInfo(PJRT_Device* device) const {
  PJRTKIT_INNER_ARGS(PJRT_Device_GetDescription, description_args);
  description_args.device = device;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*inner_, PJRT_Device_GetDescription, &description_args));
  PJRTKIT_ASSIGN_OR_RETURN(InnerDeviceInfo info,
                           ReadInnerDescription(*inner_, description_args.device_description));
  PJRTKIT_INNER_ARGS(PJRT_Device_LocalHardwareId, hardware_args);
  hardware_args.device = device;
  // Optional: a plugin without it keeps -1, and the device's id stands in.
  if (PJRTKIT_INNER_CALL(*inner_, PJRT_Device_LocalHardwareId, &hardware_args).ok()) {
    info.local_hardware_id = hardware_args.local_hardware_id;
  }
  return info;
}

Status WrappedClient::InitMemories() {
  // pjrtkit's kind ids; kinds an inner plugin adds get the next numbers.
  std::map<std::string, int> kind_ids = {{"device", 0}, {"pinned_host", 1}, {"unpinned_host", 2}};
  for (const std::unique_ptr<WrappedDevice>& device : devices_) {
    if (!device->IsAddressable()) continue;  // Another process's: no memories here.
    PJRTKIT_INNER_ARGS(PJRT_Device_DefaultMemory, default_args);
    default_args.device = device->inner();
    PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Device_DefaultMemory, &default_args));
    PJRTKIT_INNER_ARGS(PJRT_Device_AddressableMemories, memories_args);
    memories_args.device = device->inner();
    PJRTKIT_RETURN_IF_ERROR(
        PJRTKIT_INNER_CALL(*inner_, PJRT_Device_AddressableMemories, &memories_args));
    std::vector<PJRT_Memory*> ordered = {default_args.memory};  // Default first.
    for (size_t i = 0; i < memories_args.num_memories; ++i) {
      if (memories_args.memories[i] != default_args.memory) {
        ordered.push_back(memories_args.memories[i]);
      }
    }
    std::vector<Memory*> ours;
    for (PJRT_Memory* inner_memory : ordered) {
      WrappedMemory* memory = FromInner(inner_memory);
      if (memory == nullptr) {
        PJRTKIT_INNER_ARGS(PJRT_Memory_Kind, kind_args);
        kind_args.memory = inner_memory;
        PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Memory_Kind, &kind_args));
        std::string kind(kind_args.kind, kind_args.kind_size);
        auto it = kind_ids.emplace(kind, static_cast<int>(kind_ids.size())).first;
        memories_.push_back(std::make_unique<WrappedMemory>(static_cast<int>(memories_.size()),
                                                           kind, it->second, inner_memory));
        memory = memories_.back().get();
        memory_ptrs_.push_back(memory);
        memory_of_inner_[inner_memory] = memory;
      }
      ours.push_back(memory);
    }
    device->SetMemories(std::move(ours));
  }
  for (const std::unique_ptr<WrappedMemory>& memory : memories_) {
    PJRTKIT_INNER_ARGS(PJRT_Memory_AddressableByDevices, by_args);
    by_args.memory = memory->inner();
    PJRTKIT_RETURN_IF_ERROR(
        PJRTKIT_INNER_CALL(*inner_, PJRT_Memory_AddressableByDevices, &by_args));
    std::vector<Device*> devices;
    for (size_t i = 0; i < by_args.num_devices; ++i) {
      WrappedDevice* device = FromInner(by_args.devices[i]);
      if (device == nullptr) {
        return Internal(inner_->name() + " memory is addressable by an unknown device");
      }
      if (device->IsAddressable()) devices.push_back(device);
    }
    memory->SetDevices(std::move(devices));
  }
  return OkStatus();
}

WrappedDevice* WrappedClient::FromInner(PJRT_Device* inner) const {
  auto it = device_of_inner_.find(inner);
  return it == device_of_inner_.end() ? nullptr : it->second;
}

WrappedMemory* WrappedClient::FromInner(PJRT_Memory* inner) const {
  auto it = memory_of_inner_.find(inner);
  return it == memory_of_inner_.end() ? nullptr : it->second;
}

StatusOr<WrappedDevice*> WrappedClient::OwnDevice(const Device* device, const char* what) const {
  if (device == nullptr) return InvalidArgument(std::string(what) + " is null");
  for (const std::unique_ptr<WrappedDevice>& own : devices_) {
    if (own.get() == device) return own.get();
  }
  return InvalidArgument(std::string(what) + " is not a device of this pjrtkit client");
}

StatusOr<WrappedMemory*> WrappedClient::OwnMemory(const Memory* memory, const char* what) const {
  if (memory == nullptr) return InvalidArgument(std::string(what) + " is null");
  for (const std::unique_ptr<WrappedMemory>& own : memories_) {
    if (own.get() == memory) return own.get();
  }
  return InvalidArgument(std::string(what) + " is not a memory of this pjrtkit client");
}

StatusOr<WrappedBuffer*> WrappedClient::OwnBuffer(Buffer* buffer, const std::string& what) const {
  if (buffer == nullptr) return InvalidArgument(what + " is null");
  auto* own = dynamic_cast<WrappedBuffer*>(buffer);
  if (own == nullptr || own->client() != this) {
    return InvalidArgument(what + " is not a buffer of this pjrtkit client");
  }
  return own;
}

StatusOr<HostBufferResult> WrappedClient::BufferFromHostBuffer(const HostBufferArgs& args) {
  constexpr const char* kWhat = "BufferFromHostBuffer";
  PJRTKIT_RETURN_IF_ERROR(CheckShape(kWhat, args.type, args.dims));
  if (policy().memory_stats_source() == MemoryStatsSource::kCounted) {
    PJRTKIT_RETURN_IF_ERROR(CheckFitsInHostMemory(kWhat, args.type, args.dims, host_memory_bytes_));
  }
  // The caller resolved the destination (ResolveDestinationDevice, call_checks.h: the C layer
  // does): args.device is set and addressable, args.memory (if set) is one of its memories.
  PJRTKIT_ASSIGN_OR_RETURN(WrappedDevice * device,
                           OwnDevice(args.device, "BufferFromHostBuffer device"));
  WrappedMemory* memory = nullptr;
  if (args.memory != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(memory, OwnMemory(args.memory, "BufferFromHostBuffer memory"));
  }
  if (args.device_layout.has_value() && !IsRowMajor(*args.device_layout, args.dims.size()) &&
      policy().moves_bytes_ignoring_layouts()) {
    return BufferFromHostBufferInLayout(args, device, memory);
  }
  if (host_buffer_pool_ != nullptr) {
    const size_t pooled_bytes = PooledCopyBytes(args, memory, policy().host_copy_pooling());
    if (pooled_bytes > 0) {
      return CopyThroughPool(this, host_buffer_pool_, args, device, memory, pooled_bytes);
    }
  }
  std::optional<InnerLayout> layout;
  if (args.device_layout.has_value()) layout.emplace(*args.device_layout);

  PJRTKIT_INNER_ARGS(PJRT_Client_BufferFromHostBuffer, inner_args);
  inner_args.client = inner_client();
  inner_args.data = args.data;
  PJRTKIT_ASSIGN_OR_RETURN(inner_args.type, inner_->ToInnerType(args.type));
  inner_args.dims = args.dims.data();
  inner_args.num_dims = args.dims.size();
  if (args.byte_strides.has_value()) {
    inner_args.byte_strides = args.byte_strides->data();
    inner_args.num_byte_strides = args.byte_strides->size();
  }
  inner_args.host_buffer_semantics = static_cast<PJRT_HostBufferSemantics>(args.semantics);
  inner_args.device = device->inner();
  inner_args.memory = memory != nullptr ? memory->inner() : nullptr;
  inner_args.device_layout = layout ? layout->get() : nullptr;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*inner_, PJRT_Client_BufferFromHostBuffer, &inner_args));
  HostBufferResult result;
  result.done_with_host_buffer =
      inner_->WrapEvent(inner_args.done_with_host_buffer, "PJRT_Client_BufferFromHostBuffer");
  PJRTKIT_ASSIGN_OR_RETURN(result.buffer, WrappedBuffer::Wrap(this, inner_args.buffer));
  return result;
}

StatusOr<HostBufferResult> WrappedClient::BufferFromHostBufferInLayout(const HostBufferArgs& args,
                                                                      WrappedDevice* device,
                                                                      WrappedMemory* memory) {
  const MemoryLayout& layout = *args.device_layout;
  const size_t rank = args.dims.size();
  PJRTKIT_RETURN_IF_ERROR(CheckPermutationLayout("BufferFromHostBuffer", "device layout", layout,
                                                 args.type, rank, policy().backend()));
  // XLA:CPU copies dense host bytes into the buffer as they are and labels them with the device
  // layout (host_layout.h), so hand it bytes already in that layout.
  const size_t element_bytes = static_cast<size_t>(ElementTypeBits(args.type) / 8);
  std::vector<char> staging(DenseByteSize(args.type, args.dims));
  const std::vector<int64_t> src_strides =
      args.byte_strides.has_value() ? *args.byte_strides
                                    : DenseByteStrides(args.dims, element_bytes,
                                                       RowMajorLayout(rank).minor_to_major);
  CopyStrided(static_cast<const char*>(args.data), src_strides, staging.data(),
              DenseByteStrides(args.dims, element_bytes, layout.minor_to_major), args.dims,
              element_bytes);
  InnerLayout inner_layout(layout);
  PJRTKIT_INNER_ARGS(PJRT_Client_BufferFromHostBuffer, inner_args);
  inner_args.client = inner_client();
  inner_args.data = staging.data();
  PJRTKIT_ASSIGN_OR_RETURN(inner_args.type, inner_->ToInnerType(args.type));
  inner_args.dims = args.dims.data();
  inner_args.num_dims = rank;
  inner_args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  inner_args.device = device->inner();
  inner_args.memory = memory != nullptr ? memory->inner() : nullptr;
  inner_args.device_layout = inner_layout.get();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*inner_, PJRT_Client_BufferFromHostBuffer, &inner_args));
  // The caller's data was read during this call (into `staging`, which XLA:CPU copied).
  inner_->DestroyEvent(inner_args.done_with_host_buffer);
  HostBufferResult result;
  result.done_with_host_buffer = inner_->ready_event();
  PJRTKIT_ASSIGN_OR_RETURN(result.buffer, WrappedBuffer::Wrap(this, inner_args.buffer));
  return result;
}

StatusOr<std::unique_ptr<Buffer>> WrappedClient::CreateUninitializedBuffer(
    ElementType type, const std::vector<int64_t>& dims, Memory* memory) {
  PJRTKIT_RETURN_IF_ERROR(CheckShape("CreateUninitializedBuffer", type, dims));
  if (policy().memory_stats_source() == MemoryStatsSource::kCounted) {
    PJRTKIT_RETURN_IF_ERROR(CheckFitsInHostMemory("CreateUninitializedBuffer", type, dims,
                                                  host_memory_bytes_));
  }
  PJRTKIT_ASSIGN_OR_RETURN(WrappedMemory * own,
                           OwnMemory(memory, "CreateUninitializedBuffer memory"));
  if (own->addressable_by_devices().empty()) {
    return InvalidArgument("CreateUninitializedBuffer: memory " + own->debug_string() +
                           " is addressable by no device");
  }
  PJRTKIT_INNER_ARGS(PJRT_Client_CreateUninitializedBuffer, args);
  args.client = inner_client();
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  PJRTKIT_ASSIGN_OR_RETURN(args.shape_element_type, inner_->ToInnerType(type));
  args.device = static_cast<WrappedDevice*>(own->addressable_by_devices()[0])->inner();
  args.memory = own->inner();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*inner_, PJRT_Client_CreateUninitializedBuffer, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> buffer,
                           WrappedBuffer::Wrap(this, args.buffer));
  return std::unique_ptr<Buffer>(std::move(buffer));
}

namespace {

// The inner on-delete callback of a view: runs the pjrtkit callback `arg` owns, then frees it.
void RunViewOnDelete(void* /*device_buffer_ptr*/, void* arg) {
  std::unique_ptr<std::function<void()>> on_delete(static_cast<std::function<void()>*>(arg));
  (*on_delete)();
}

}  // namespace

StatusOr<std::unique_ptr<Buffer>> WrappedClient::CreateViewOfDeviceBuffer(
    const DeviceBufferViewArgs& args) {
  constexpr const char* kWhat = "CreateViewOfDeviceBuffer";
  PJRTKIT_RETURN_IF_ERROR(CheckShape(kWhat, args.type, args.dims));
  PJRTKIT_ASSIGN_OR_RETURN(WrappedDevice * device,
                           OwnDevice(args.device, "CreateViewOfDeviceBuffer device"));
  WrappedMemory* memory = nullptr;
  if (args.memory != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(memory, OwnMemory(args.memory, "CreateViewOfDeviceBuffer memory"));
  }
  std::optional<InnerLayout> layout;
  if (args.layout.has_value()) layout.emplace(*args.layout);
  PJRTKIT_INNER_ARGS(PJRT_Client_CreateViewOfDeviceBuffer, inner_args);
  inner_args.client = inner_client();
  inner_args.device_buffer_ptr = args.data;
  inner_args.dims = args.dims.data();
  inner_args.num_dims = args.dims.size();
  PJRTKIT_ASSIGN_OR_RETURN(inner_args.element_type, inner_->ToInnerType(args.type));
  inner_args.layout = layout ? layout->get() : nullptr;
  inner_args.device = device->inner();
  inner_args.memory = memory != nullptr ? memory->inner() : nullptr;
  inner_args.stream = args.stream;  // The inner plugin waits for it (XLA:GPU) or refuses it.
  std::unique_ptr<std::function<void()>> on_delete;
  if (args.on_delete) {
    on_delete = std::make_unique<std::function<void()>>(args.on_delete);
    inner_args.on_delete_callback = &RunViewOnDelete;
    inner_args.on_delete_callback_arg = on_delete.get();
  }
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*inner_, PJRT_Client_CreateViewOfDeviceBuffer, &inner_args));
  on_delete.release();  // The inner buffer owns it now: RunViewOnDelete frees it.
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> buffer,
                           WrappedBuffer::Wrap(this, inner_args.buffer));
  return std::unique_ptr<Buffer>(std::move(buffer));
}

StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>>
WrappedClient::CreateBuffersForAsyncHostToDevice(
    const std::vector<BufferShape>& shapes,
    const std::vector<std::optional<MemoryLayout>>& layouts, Memory* memory) {
  for (const BufferShape& shape : shapes) {
    PJRTKIT_RETURN_IF_ERROR(CheckShape("CreateBuffersForAsyncHostToDevice", shape.type,
                                       shape.dims));
  }
  PJRTKIT_ASSIGN_OR_RETURN(WrappedMemory * own,
                           OwnMemory(memory, "CreateBuffersForAsyncHostToDevice memory"));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedTransferManager> manager,
                           WrappedTransferManager::Create(this, shapes, layouts, own));
  return std::unique_ptr<AsyncHostToDeviceTransferManager>(std::move(manager));
}

StatusOr<std::unique_ptr<LoadedExecutable>> WrappedClient::Compile(
    const Program& program, const std::string& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(InnerClient::LoadedPtr loaded,
                           inner_client_->Compile(program, compile_options, "Compile"));
  return WrapExecutable(std::move(loaded), compile_options);
}

StatusOr<std::unique_ptr<LoadedExecutable>> WrappedClient::DeserializeAndLoad(
    const std::string& serialized, const std::optional<std::string>& compile_options) {
  constexpr const char* kWhat = "DeserializeAndLoad";
  PJRTKIT_ASSIGN_OR_RETURN(SerializedExecutable parsed,
                           SerializedExecutable::Decode(serialized, policy().backend(),
                                                       inner_->name(), kWhat));
  PJRTKIT_RETURN_IF_ERROR(parsed.CheckDeviceCount(
      static_cast<int>(devices_.size()), kWhat, policy().DeviceCountRemedy(parsed.device_count())));
  std::string options;
  if (compile_options.has_value()) {
    PJRTKIT_ASSIGN_OR_RETURN(
        options, NormalizeCompileOptions(*compile_options, static_cast<int>(devices_.size())));
  }
  PJRTKIT_INNER_ARGS(PJRT_Executable_DeserializeAndLoad, args);
  args.client = inner_client();
  args.serialized_executable = parsed.inner().data();
  args.serialized_executable_size = parsed.inner().size();
  if (compile_options.has_value()) {
    args.overridden_serialized_compile_options = options.data();
    args.overridden_serialized_compile_options_size = options.size();
  }
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_Executable_DeserializeAndLoad, &args));
  return WrapExecutable(inner_client_->Adopt(args.loaded_executable), compile_options);
}

StatusOr<std::unique_ptr<LoadedExecutable>> WrappedClient::Load(
    const Executable& executable, const std::optional<std::string>& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<LoadedExecutable> loaded,
                           Client::Load(executable, compile_options));
  if (!compile_options.has_value()) {
    StatusOr<std::string> compiled_with = executable.compile_options();
    if (compiled_with.ok()) {
      // DeserializeAndLoad made it: a WrappedLoadedExecutable with no options recorded yet.
      static_cast<WrappedLoadedExecutable*>(loaded.get())
          ->wrapped_executable()
          ->RecordCompileOptions(*compiled_with);
    }
  }
  return loaded;
}

StatusOr<std::unique_ptr<LoadedExecutable>> WrappedClient::WrapExecutable(
    InnerClient::LoadedPtr inner, const std::optional<std::string>& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedLoadedExecutable> loaded,
                           WrappedLoadedExecutable::Wrap(this, std::move(inner)));
  if (compile_options.has_value()) {
    loaded->wrapped_executable()->RecordCompileOptions(*compile_options);
  }
  return std::unique_ptr<LoadedExecutable>(std::move(loaded));
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
