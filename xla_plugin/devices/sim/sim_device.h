// SimDevice: one simulated device: its description, its memory space, and the simulated hardware
// behind them (DeviceMemory and Queue, owned by SimClient).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_DEVICE_H_

#include <cstdint>
#include <shared_mutex>
#include <vector>

#include "xla_plugin/client/device.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/runtime/device_memory.h"
#include "xla_plugin/devices/sim/runtime/queue.h"

namespace pjrtkit {
namespace sim {

class SimMemory;

// Device `id` of process 0, always addressable (local hardware id = id), kind "pjrtkit_sim",
// debug string "PJRTKIT_SIM_<id>", attributes {backend: "sim", memory_capacity_bytes: <bytes>},
// one memory (kind "device"). Memory statistics are its DeviceMemory's. Owned by SimClient.
class SimDevice : public Device {
 public:
  // The description of device `id` with `capacity_bytes` of memory (also what SimTopology lists).
  // `kind` and `backend` are the device kind and "backend" attribute (SimOptions::device_kind()
  // and backend_name(); the debug string is PJRTKIT_<BACKEND>_<id>).
  static DeviceDescription Describe(int id, int64_t capacity_bytes,
                                    const std::string& kind = "pjrtkit_sim",
                                    const std::string& backend = "sim");

  // Device `id` working on `memory` and `queue` (not null; both outlive the device's use).
  SimDevice(int id, DeviceMemory* memory, Queue* queue, const std::string& kind = "pjrtkit_sim",
            const std::string& backend = "sim");

  // Attaches the device's memory space (SimClient does, once, right after creation).
  void set_memory_space(SimMemory* memory_space);
  // Attaches the client's launch mutex (SimClient::launch_mutex(); SimClient does, once).
  void set_launch_mutex(std::shared_mutex* launch_mutex) { launch_mutex_ = launch_mutex; }
  // The client's launch mutex held shared (not held when none is attached): what work other
  // than a multi-device launch holds while it is enqueued on the device's queue.
  std::shared_lock<std::shared_mutex> SharedLaunchLock() const {
    return launch_mutex_ != nullptr ? std::shared_lock<std::shared_mutex>(*launch_mutex_)
                                    : std::shared_lock<std::shared_mutex>();
  }

  // Global id.
  int id() const { return description_.id(); }
  // The device's memory (allocations for its buffers and temporaries).
  DeviceMemory& memory() const { return *memory_; }
  // The device's in-order work queue (copies and executions on the device run there).
  Queue& queue() const { return *queue_; }
  // The device's memory space.
  SimMemory* memory_space() const { return memory_space_; }

  // Device:
  const DeviceDescription& description() const override { return description_; }
  bool IsAddressable() const override { return true; }
  int local_hardware_id() const override { return id(); }
  const std::vector<Memory*>& memories() const override { return memories_; }
  Memory* default_memory() const override;
  // DeviceMemory::Stats().
  StatusOr<MemoryStats> GetMemoryStats() const override;
  // DeviceMemory::ClearPeaks().
  Status ClearMemoryStats() override;

 private:
  DeviceDescription description_;      // Id, kind, strings, attributes.
  DeviceMemory* memory_;               // Owned by SimClient.
  Queue* queue_;                       // Owned by SimClient.
  SimMemory* memory_space_ = nullptr;  // Owned by SimClient.
  std::shared_mutex* launch_mutex_ = nullptr;  // SimClient's.
  std::vector<Memory*> memories_;      // {memory_space_}.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_DEVICE_H_
