// SimClient: the client of the sim device: its devices, memories, topology, and each device's
// simulated hardware (DeviceMemory and Queue).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CLIENT_H_

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/runtime/device_memory.h"
#include "xla_plugin/devices/sim/runtime/queue.h"
#include "xla_plugin/devices/sim/runtime/worker_pool.h"
#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_ffi_handlers.h"
#include "xla_plugin/devices/sim/sim_memory.h"
#include "xla_plugin/devices/sim/sim_options.h"
#include "xla_plugin/devices/sim/sim_topology.h"
#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace sim {

// Platform "pjrtkit", version "pjrtkit sim 0.1.0"; device_count devices of memory_mib each, all
// addressable, in process 0. Host data is always copied into device memory (no host aliasing,
// whatever the host buffer semantics), so changing a host array after the call changes no buffer.
// Compile and DeserializeAndLoad are sim_compile.h's. Destruction runs the work still queued on
// every device (the queues go first, then the memories); the framework destroys buffers and
// executables before the client (the C-API layer keeps the client alive until then).
class SimClient : public Client {
 public:
  // A client of `options`' devices; RESOURCE_EXHAUSTED when a device's memory cannot be reserved.
  static StatusOr<std::unique_ptr<SimClient>> Create(const SimOptions& options);
  ~SimClient() override;

  // The options the client was created with (the compiler reads stablehlo_library_path).
  const SimOptions& options() const { return options_; }
  // The devices, by id.
  const std::vector<SimDevice*>& sim_devices() const { return sim_devices_; }
  // Device `id`, or null when there is none.
  SimDevice* sim_device(int id) const;
  // Held exclusively while the work of one multi-device execution is enqueued on all its
  // devices' queues, so that every queue sees launches in the same order (collectives cannot
  // deadlock), and shared while other work (single-device executions, copies) is enqueued, so
  // that none lands between the pieces of a multi-device launch.
  std::shared_mutex& launch_mutex() { return launch_mutex_; }
  // The XLA FFI handlers registered for this client's platform (programs' custom calls).
  const SimFfiHandlers& ffi_handlers() const { return ffi_handlers_; }
  // Helper threads (one fewer than the machine's cores) that take parts of large fusions from
  // the devices' queue threads.
  WorkerPool* workers() const { return workers_.get(); }
  // The StableHLO library this client's compiles read programs with: the option
  // stablehlo_library_path when set, else the process's (sim_stablehlo.h). Loaded at the first
  // call; a failure is returned again by later calls.
  StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> stablehlo_library();

  // Client:
  const std::string& platform_name() const override { return platform_name_; }
  const std::string& platform_version() const override { return platform_version_; }
  const std::vector<Device*>& devices() const override { return devices_; }
  const std::vector<Device*>& addressable_devices() const override { return devices_; }
  const std::vector<Memory*>& memories() const override { return memories_; }
  // Copies the host data (dense or with any byte strides) into a new allocation of the device's
  // memory: synchronously into a host staging block for kImmutableOnlyDuringCall and the zero-copy
  // semantics (the host data may change when the call returns), else
  // (kImmutableUntilTransferCompletes) on the device's queue straight from the host data
  // (done_with_host_buffer is ready after that copy). RESOURCE_EXHAUSTED when the device is full;
  // UNIMPLEMENTED for tokens and device layouts other than dense row-major; element types of less
  // than a byte are held one element per byte.
  StatusOr<HostBufferResult> BufferFromHostBuffer(const HostBufferArgs& args) override;
  // sim::CompileAndLoad (sim_compile.h).
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(const Program& program,
                                                      const std::string& compile_options) override;
  // sim::DeserializeAndLoad (sim_compile.h).
  StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
      const std::string& serialized, const std::optional<std::string>& compile_options) override;
  StatusOr<const Topology*> topology() const override { return topology_.get(); }
  // Keeps the handler for programs' custom calls of its target (SimFfiHandlers::Register: the
  // platform must be "pjrtkit" or "Host").
  Status RegisterFfiHandler(const FfiHandlerRegistration& registration) override;
  // Accepted: the C-API layer fixes the type's id, which is all custom calls need (user data
  // arrives keyed by it).
  Status RegisterFfiType(const FfiTypeRegistration& registration) override;
  // A buffer whose contents are whatever its memory held, ready at once.
  StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(ElementType type,
                                                              const std::vector<int64_t>& dims,
                                                              Memory* memory) override;
  // UNIMPLEMENTED: a sim device's memory is its own region, so it cannot alias memory it did not
  // allocate.
  StatusOr<std::unique_ptr<Buffer>> CreateViewOfDeviceBuffer(
      const DeviceBufferViewArgs& args) override;
  // A SimTransferManager on the device of `memory`; layouts other than dense row-major are
  // UNIMPLEMENTED.
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> CreateBuffersForAsyncHostToDevice(
      const std::vector<BufferShape>& shapes,
      const std::vector<std::optional<MemoryLayout>>& layouts, Memory* memory) override;

 private:
  explicit SimClient(SimOptions options);

  SimOptions options_;                                          // Creation options.
  std::string platform_name_;                                   // "pjrtkit".
  std::string platform_version_;                                // "pjrtkit sim 0.1.0".
  std::unique_ptr<SimTopology> topology_;                       // The devices' topology.
  std::vector<std::unique_ptr<DeviceMemory>> device_memories_;  // One per device.
  std::vector<std::unique_ptr<Queue>> queues_;                  // One per device.
  std::vector<std::unique_ptr<SimDevice>> owned_devices_;       // The devices.
  std::vector<std::unique_ptr<SimMemory>> owned_memories_;      // One per device.
  std::vector<SimDevice*> sim_devices_;                         // The devices, by id.
  std::vector<Device*> devices_;                                // The same, as Device.
  std::vector<Memory*> memories_;                               // The memories, by id.
  std::mutex library_mutex_;                                    // Guards library_.
  // The library once loaded (or why not); empty before the first stablehlo_library() call.
  std::optional<StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>>> library_;
  std::shared_mutex launch_mutex_;                              // See launch_mutex().
  SimFfiHandlers ffi_handlers_;                                 // See ffi_handlers().
  std::unique_ptr<WorkerPool> workers_;                         // See workers().
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CLIENT_H_
