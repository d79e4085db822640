#include "xla_plugin/devices/sim/sim_topology.h"

#include <string>
#include <utility>

#include "xla_plugin/devices/sim/sim_compile.h"
#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_platform.h"

namespace pjrtkit {
namespace sim {

std::unique_ptr<SimTopology> SimTopology::Create(const SimOptions& options) {
  std::vector<DeviceDescription> devices;
  devices.reserve(options.device_count());
  for (int id = 0; id < options.device_count(); ++id) {
    devices.push_back(SimDevice::Describe(id, options.memory_bytes(), options.device_kind(),
                                          options.backend_name()));
  }
  AttributeMap attributes;
  attributes["backend"] = options.backend_name();
  attributes["device_count"] = static_cast<int64_t>(options.device_count());
  attributes["memory_capacity_bytes"] = options.memory_bytes();
  return std::unique_ptr<SimTopology>(new SimTopology(kPlatformName, kPlatformVersion,
                                                      std::move(devices), std::move(attributes),
                                                      options));
}

SimTopology::SimTopology(std::string platform_name, std::string platform_version,
                         std::vector<DeviceDescription> devices, AttributeMap attributes,
                         SimOptions options)
    : Topology(std::move(platform_name), std::move(platform_version), std::move(devices),
               std::move(attributes)),
      options_(std::move(options)) {}

StatusOr<std::shared_ptr<Executable>> SimTopology::Compile(const Program& program,
                                                           const std::string& compile_options,
                                                           Client* client) const {
  if (!options_.compiler()) return NoCompiler("PJRT_Compile", options_.backend_name());
  return CompileForTopology(program, compile_options, options_.device_count(),
                            options_.stablehlo_library_path());
}

StatusOr<std::vector<int>> SimTopology::MemorySpaceKindIds() const {
  return std::vector<int>{kMemoryKindId};
}

}  // namespace sim
}  // namespace pjrtkit
