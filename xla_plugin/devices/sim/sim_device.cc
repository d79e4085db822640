#include "xla_plugin/devices/sim/sim_device.h"

#include <cctype>
#include <string>

#include "xla_plugin/devices/sim/sim_memory.h"
#include "xla_plugin/devices/sim/sim_platform.h"

namespace pjrtkit {
namespace sim {

DeviceDescription SimDevice::Describe(int id, int64_t capacity_bytes, const std::string& kind,
                                      const std::string& backend) {
  std::string upper = backend;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string name = "PJRTKIT_" + upper + "_" + std::to_string(id);
  const std::string to_string = "SimDevice(id=" + std::to_string(id) +
                                ", process_index=0, kind=" + kind +
                                ", memory_capacity_bytes=" + std::to_string(capacity_bytes) + ")";
  AttributeMap attributes;
  attributes["backend"] = backend;
  attributes["memory_capacity_bytes"] = capacity_bytes;
  return DeviceDescription(id, 0, kind, name, to_string, std::move(attributes));
}

SimDevice::SimDevice(int id, DeviceMemory* memory, Queue* queue, const std::string& kind,
                     const std::string& backend)
    : description_(Describe(id, memory->capacity(), kind, backend)),
      memory_(memory),
      queue_(queue) {}

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
