#include "xla_plugin/devices/sim/testing/runtime_only_factory.h"

#include "xla_plugin/devices/sim/sim_factory.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr char kKind[] = "pjrtkit_runtime_only";  // PJRT_DeviceDescription_Kind.
constexpr char kBackend[] = "runtime_only";       // The devices' "backend" attribute.

}  // namespace

Status RuntimeOnlyFactory::Initialize() { return SimFactory::Initialize(); }

AttributeMap RuntimeOnlyFactory::PluginAttributes() { return SimFactory::PluginAttributes(); }

std::vector<OptionSpec> RuntimeOnlyFactory::OptionSpecs() { return SimFactory::OptionSpecs(); }

StatusOr<std::unique_ptr<Client>> RuntimeOnlyFactory::CreateClient(const AttributeMap& options,
                                                                   const MultiProcess& job) {
  return SimFactory::CreateClientWith(options, job, kKind, kBackend, /*compiler=*/false);
}

StatusOr<std::unique_ptr<Topology>> RuntimeOnlyFactory::CreateTopology(
    const std::string& /*name*/, const AttributeMap& options) {
  return SimFactory::CreateTopologyWith(options, kKind, kBackend, /*compiler=*/false);
}

}  // namespace sim
}  // namespace pjrtkit
