// SimLoadedExecutable: a sim program bound to devices of a SimClient: each execution runs it on
// every device of the assignment through that device's queue.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_LOADED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_LOADED_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/devices/sim/sim_client.h"
#include "xla_plugin/devices/sim/sim_executable.h"

namespace pjrtkit {
namespace sim {

// Thread-safe; executions may overlap (each has its own scratch memory and rendezvous).
class SimLoadedExecutable : public LoadedExecutable {
 public:
  // Binds `executable` to the devices of its options on `client`, which outlives it. NOT_FOUND
  // when a custom call of the program has no FFI handler on the client.
  static StatusOr<std::unique_ptr<SimLoadedExecutable>> Load(
      SimClient& client, std::shared_ptr<SimExecutable> executable);

  // LoadedExecutable:
  std::shared_ptr<Executable> executable() const override { return executable_; }
  const std::vector<Device*>& addressable_devices() const override { return devices_; }
  void Delete() override { deleted_.store(true); }
  bool IsDeleted() const override { return deleted_.load(); }
  // Checks every argument against the program's parameters (type, shape, device), allocates
  // each device's outputs and scratch memory (RESOURCE_EXHAUSTED here, naming the device, when
  // it does not fit), takes donated arguments, and enqueues the program on every device's queue
  // after its arguments are ready (a program with custom calls gets the client's FFI handlers
  // and the execute context's user data, copied now); a short single-device program (kInlineBytes) whose arguments
  // are ready runs on the calling thread instead when its device's queue is idle. Outputs are ready when their device finished; an error of the
  // execution (or of an argument) reaches every output's ready event.
  StatusOr<ExecuteResult> Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                  const ExecuteOptions& options) override;
  StatusOr<std::vector<LogicalDeviceId>> addressable_device_logical_ids() const override;
  // An xla.DeviceAssignmentProto of the devices (replica_count, computation_count, one
  // computation_devices entry per partition listing each replica's device).
  StatusOr<std::string> SerializedDeviceAssignment() const override;

  // A single-device program with no loop or branch whose cost model reads and writes at most
  // this many bytes runs on the caller's thread when it can (see Execute): the hand-off to the
  // device's queue thread and back costs two thread switches, more than such a program (x + 1 on
  // f32[8]: 5.4 us per jit call on this machine).
  static constexpr double kInlineBytes = 64 * 1024;

 private:
  SimLoadedExecutable(SimClient& client, std::shared_ptr<SimExecutable> executable,
                      std::vector<SimDevice*> devices);

  // What one device needs for one execution, prepared before anything is enqueued.
  struct DeviceRun;
  StatusOr<DeviceRun> Prepare(SimDevice* device, int64_t logical_id,
                              const std::vector<Buffer*>& arguments,
                              const ExecuteOptions& options);

  SimClient& client_;
  std::shared_ptr<SimExecutable> executable_;
  std::vector<SimDevice*> sim_devices_;  // Per logical id (replica * partitions + partition).
  std::vector<Device*> devices_;         // The same, as Device.
  bool run_inline_ = false;              // Short enough to run on the caller's thread.
  std::set<std::string> custom_calls_;   // Targets of the program's custom calls (FFI handlers).
  std::atomic<bool> deleted_{false};
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_LOADED_EXECUTABLE_H_
