#include "xla_plugin/devices/sim/sim_device.h"

#include <string>

#include "xla_plugin/devices/sim/sim_memory.h"
#include "xla_plugin/devices/sim/sim_platform.h"

namespace pjrtkit {
namespace sim {

DeviceDescription SimDevice::Describe(int id, int64_t capacity_bytes) {
  const std::string name = "PJRTKIT_SIM_" + std::to_string(id);
  const std::string to_string = "SimDevice(id=" + std::to_string(id) +
                                ", process_index=0, kind=" + kDeviceKind +
                                ", memory_capacity_bytes=" + std::to_string(capacity_bytes) + ")";
  AttributeMap attributes;
  attributes["backend"] = std::string(kBackendName);
  attributes["memory_capacity_bytes"] = capacity_bytes;
  return DeviceDescription(id, 0, kDeviceKind, name, to_string, std::move(attributes));
}

SimDevice::SimDevice(int id, DeviceMemory* memory, Queue* queue)
    : description_(Describe(id, memory->capacity())), memory_(memory), queue_(queue) {}

void SimDevice::set_memory_space(SimMemory* memory_space) {
  memory_space_ = memory_space;
  memories_ = {memory_space};
}

Memory* SimDevice::default_memory() const { return memory_space_; }

StatusOr<MemoryStats> SimDevice::GetMemoryStats() const { return memory_->Stats(); }

Status SimDevice::ClearMemoryStats() {
  memory_->ClearPeaks();
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
