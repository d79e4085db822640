#include "xla_plugin/devices/sim/sim_topology.h"

#include <string>
#include <utility>

#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_platform.h"

namespace pjrtkit {
namespace sim {

std::unique_ptr<SimTopology> SimTopology::Create(const SimOptions& options) {
  std::vector<DeviceDescription> devices;
  devices.reserve(options.device_count());
  for (int id = 0; id < options.device_count(); ++id) {
    devices.push_back(SimDevice::Describe(id, options.memory_bytes()));
  }
  AttributeMap attributes;
  attributes["backend"] = std::string(kBackendName);
  attributes["device_count"] = static_cast<int64_t>(options.device_count());
  attributes["memory_capacity_bytes"] = options.memory_bytes();
  return std::unique_ptr<SimTopology>(
      new SimTopology(kPlatformName, kPlatformVersion, std::move(devices), std::move(attributes)));
}

StatusOr<std::vector<int>> SimTopology::MemorySpaceKindIds() const {
  return std::vector<int>{kMemoryKindId};
}

}  // namespace sim
}  // namespace pjrtkit
