// SimTopology: the devices a sim client of given options has, known without creating one.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TOPOLOGY_H_

#include <memory>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/devices/sim/sim_options.h"

namespace pjrtkit {
namespace sim {

// Platform "pjrtkit", version "pjrtkit sim 0.1.0", the device descriptions of SimDevice::Describe,
// attributes {backend: "sim", device_count, memory_capacity_bytes (per device)}, one memory kind
// (id 0, "device"). Compile (ahead of time) compiles for these devices without a client.
class SimTopology : public Topology {
 public:
  // The topology of a client created with `options` (maps no memory).
  static std::unique_ptr<SimTopology> Create(const SimOptions& options);

  // {0}: the "device" memory of every device.
  StatusOr<std::vector<int>> MemorySpaceKindIds() const override;
  // Ahead-of-time compilation: sim::CompileForTopology (sim_compile.h) for this topology's
  // devices, with the StableHLO library of the options it was made with.
  StatusOr<std::shared_ptr<Executable>> Compile(const Program& program,
                                                const std::string& compile_options,
                                                Client* client) const override;

 private:
  SimTopology(std::string platform_name, std::string platform_version,
              std::vector<DeviceDescription> devices, AttributeMap attributes,
              SimOptions options);

  SimOptions options_;  // What the topology was made with (device count, library path).
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TOPOLOGY_H_
