#include "xla_plugin/devices/sim/sim_client.h"

#include "xla_plugin/devices/sim/sim_stablehlo.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "xla_plugin/devices/sim/array_layout.h"
#include "xla_plugin/devices/sim/sim_buffer.h"
#include "xla_plugin/devices/sim/sim_compile.h"
#include "xla_plugin/devices/sim/sim_platform.h"
#include "xla_plugin/devices/sim/sim_transfer_manager.h"

namespace pjrtkit {
namespace sim {

StatusOr<std::unique_ptr<SimClient>> SimClient::Create(const SimOptions& options) {
  std::unique_ptr<SimClient> client(new SimClient(options));
  for (int id = 0; id < options.device_count(); ++id) {
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> memory,
                             DeviceMemory::Create(id, options.memory_bytes()));
    auto queue = std::make_unique<Queue>("sim-" + std::to_string(id));
    auto device = std::make_unique<SimDevice>(id, memory.get(), queue.get(), options.device_kind(),
                                              options.backend_name());
    auto memory_space = std::make_unique<SimMemory>(device.get());
    device->set_memory_space(memory_space.get());
    device->set_launch_mutex(&client->launch_mutex_);
    client->sim_devices_.push_back(device.get());
    client->devices_.push_back(device.get());
    client->memories_.push_back(memory_space.get());
    client->device_memories_.push_back(std::move(memory));
    client->queues_.push_back(std::move(queue));
    client->owned_devices_.push_back(std::move(device));
    client->owned_memories_.push_back(std::move(memory_space));
  }
  return client;
}

SimClient::SimClient(SimOptions options)
    : options_(std::move(options)),
      platform_name_(kPlatformName),
      platform_version_(kPlatformVersion),
      topology_(SimTopology::Create(options_)),
      workers_(std::make_unique<WorkerPool>(
          std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1), "sim-helper")) {}

SimClient::~SimClient() {
  // Work still queued runs first (it holds its allocations, so memories may go in any order
  // after that); it may use the helpers, which go last.
  queues_.clear();
  device_memories_.clear();
  workers_.reset();
}

SimDevice* SimClient::sim_device(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= sim_devices_.size()) return nullptr;
  return sim_devices_[id];
}

StatusOr<HostBufferResult> SimClient::BufferFromHostBuffer(const HostBufferArgs& args) {
  const char* fn = "PJRT_Client_BufferFromHostBuffer";
  auto* device = static_cast<SimDevice*>(args.device);
  if (device == nullptr) return InvalidArgument(std::string(fn) + ": no destination device");
  if (args.memory != nullptr && args.memory != device->memory_space()) {
    return InvalidArgument(std::string(fn) + ": memory " + args.memory->debug_string() +
                           " is not the memory of " + device->description().debug_string());
  }
  PJRTKIT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(args.type, args.dims, fn));
  if (args.device_layout.has_value()) {
    PJRTKIT_RETURN_IF_ERROR(CheckDeviceLayout(*args.device_layout, args.type, args.dims, fn));
  }
  const int64_t element_bytes = ElementTypeBits(args.type) / 8;
  if (args.byte_strides.has_value() && args.byte_strides->size() != args.dims.size()) {
    return InvalidArgument(std::string(fn) + ": " + std::to_string(args.byte_strides->size()) +
                           " byte strides for " + std::to_string(args.dims.size()) + " dimensions");
  }
  const bool dense = !args.byte_strides.has_value() ||
                     IsDenseRowMajor(element_bytes, args.dims, *args.byte_strides);
  const std::vector<int64_t> strides = dense ? std::vector<int64_t>() : *args.byte_strides;
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<Allocation> allocation,
      device->memory().Allocate(bytes, "buffer " + ShapeString(args.type, args.dims)));
  HostBufferResult result;
  std::shared_ptr<Event> ready;
  // Copied during the call: kImmutableOnlyDuringCall (the host data may change once the call
  // returns) and the zero-copy semantics, which offer the device the host array to use in place:
  // the device's memory is its own, and jaxlib passes NumPy arrays that way, which their owner may
  // change right after device_put. kImmutableUntilTransferCompletes is copied on the queue.
  const bool copy_in_call = args.semantics == HostBufferSemantics::kImmutableOnlyDuringCall ||
                            args.semantics == HostBufferSemantics::kImmutableZeroCopy ||
                            args.semantics == HostBufferSemantics::kMutableZeroCopy;
  if (copy_in_call) {
    // Straight into the device memory, on this thread: the allocation is new, so no queued work
    // can use it yet, and the buffer is ready when the call returns. (A copy queued behind the
    // device's other work held the memory after a Delete() that did not wait for it:
    // `x = device_put(a); x.delete()` still counted x's bytes until the queue got to the copy.)
    if (bytes > 0) {
      const auto* src = static_cast<const uint8_t*>(args.data);
      auto* dst = static_cast<uint8_t*>(allocation->data());
      if (dense) {
        std::memcpy(dst, src, static_cast<size_t>(bytes));
      } else {
        CopyStridedToDense(element_bytes, args.dims, src, strides, dst);
      }
    }
    ready = Event::CreateReady();
    result.done_with_host_buffer = Event::CreateReady();
  } else {
    // The host data stays valid until done_with_host_buffer (kImmutableUntilTransferCompletes):
    // copy it in on the queue. The piece holds the memory weakly: a buffer deleted before the
    // piece runs gives its memory back at once (the piece then has nothing to fill), and one that
    // is kept is filled before `ready`, which everything that reads it waits for.
    ready = Event::Create();
    std::shared_ptr<Event> done = Event::Create();
    const auto* src = static_cast<const uint8_t*>(args.data);
    std::weak_ptr<Allocation> target = allocation;
    device->queue().Enqueue(
        [target, src, bytes, strides, element_bytes, dims = args.dims, ready, done] {
          if (std::shared_ptr<Allocation> allocation = target.lock()) {
            auto* dst = static_cast<uint8_t*>(allocation->data());
            if (bytes > 0 && strides.empty()) {
              std::memcpy(dst, src, static_cast<size_t>(bytes));
            } else if (bytes > 0) {
              CopyStridedToDense(element_bytes, dims, src, strides, dst);
            }
          }  // The memory is let go of here, before the events, as in every queued piece.
          ready->Set(OkStatus());
          done->Set(OkStatus());
        });
    result.done_with_host_buffer = std::move(done);
  }
  result.buffer = std::make_unique<SimBuffer>(device, args.type, args.dims, std::move(allocation),
                                              std::move(ready));
  return result;
}

StatusOr<std::unique_ptr<LoadedExecutable>> SimClient::Compile(const Program& program,
                                                               const std::string& compile_options) {
  if (!options_.compiler()) return NoCompiler("PJRT_Client_Compile", options_.backend_name());
  return CompileAndLoad(*this, program, compile_options);
}

StatusOr<std::unique_ptr<LoadedExecutable>> SimClient::DeserializeAndLoad(
    const std::string& serialized, const std::optional<std::string>& compile_options) {
  if (!options_.compiler()) {
    return NoCompiler("PJRT_Executable_DeserializeAndLoad", options_.backend_name());
  }
  return ::pjrtkit::sim::DeserializeAndLoad(*this, serialized, compile_options);
}

StatusOr<std::unique_ptr<Buffer>> SimClient::CreateUninitializedBuffer(
    ElementType type, const std::vector<int64_t>& dims, Memory* memory) {
  const char* fn = "PJRT_Client_CreateUninitializedBuffer";
  PJRTKIT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(type, dims, fn));
  SimDevice* device = static_cast<SimMemory*>(memory)->sim_device();
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<Allocation> allocation,
      device->memory().Allocate(bytes, "uninitialized buffer " + ShapeString(type, dims)));
  return std::unique_ptr<Buffer>(
      new SimBuffer(device, type, dims, std::move(allocation), Event::CreateReady()));
}

StatusOr<std::unique_ptr<Buffer>> SimClient::CreateViewOfDeviceBuffer(
    const DeviceBufferViewArgs& /*args*/) {
  return Unimplemented(
      "PJRT_Client_CreateViewOfDeviceBuffer: a sim device's memory is its own region, handed out "
      "by its allocator, so a buffer cannot alias memory the device did not allocate; copy the "
      "data in with PJRT_Client_BufferFromHostBuffer instead");
}

StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>>
SimClient::CreateBuffersForAsyncHostToDevice(
    const std::vector<BufferShape>& shapes, const std::vector<std::optional<MemoryLayout>>& layouts,
    Memory* memory) {
  const char* fn = "PJRT_Client_CreateBuffersForAsyncHostToDevice";
  for (size_t i = 0; i < layouts.size() && i < shapes.size(); ++i) {
    if (layouts[i].has_value()) {
      PJRTKIT_RETURN_IF_ERROR(CheckDeviceLayout(*layouts[i], shapes[i].type, shapes[i].dims, fn));
    }
  }
  SimDevice* device = static_cast<SimMemory*>(memory)->sim_device();
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<SimTransferManager> manager,
                           SimTransferManager::Create(device, shapes));
  return std::unique_ptr<AsyncHostToDeviceTransferManager>(std::move(manager));
}

StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> SimClient::stablehlo_library() {
  std::lock_guard<std::mutex> lock(library_mutex_);
  if (!library_.has_value()) library_ = LoadStablehloLibrary(options_.stablehlo_library_path());
  return *library_;
}

Status SimClient::RegisterFfiHandler(const FfiHandlerRegistration& registration) {
  return ffi_handlers_.Register(registration, platform_name_);
}

Status SimClient::RegisterFfiType(const FfiTypeRegistration& registration) {
  if (registration.type_name.empty() || registration.type_id == 0) {
    return InvalidArgument("an FFI type needs a name and an id");
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
