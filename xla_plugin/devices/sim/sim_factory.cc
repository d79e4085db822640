#include "xla_plugin/devices/sim/sim_factory.h"

#include <utility>

#include "xla_plugin/devices/sim/sim_client.h"
#include "xla_plugin/devices/sim/sim_compile.h"
#include "xla_plugin/devices/sim/sim_options.h"
#include "xla_plugin/devices/sim/sim_platform.h"
#include "xla_plugin/devices/sim/sim_topology.h"

namespace pjrtkit {
namespace sim {

Status SimFactory::Initialize() { return OkStatus(); }

AttributeMap SimFactory::PluginAttributes() {
  AttributeMap attributes = StablehloAttributesForProcess();
  attributes["xla_version"] = kXlaVersion;
  attributes["pjrtkit_version"] = std::string(kPjrtkitVersion);
  return attributes;
}

std::vector<OptionSpec> SimFactory::OptionSpecs() { return SimOptions::Specs(); }

StatusOr<std::unique_ptr<Client>> SimFactory::CreateClient(const AttributeMap& options,
                                                           const MultiProcess& job) {
  return CreateClientWith(options, job, kDeviceKind, kBackendName);
}

StatusOr<std::unique_ptr<Topology>> SimFactory::CreateTopology(const std::string& /*name*/,
                                                               const AttributeMap& options) {
  return CreateTopologyWith(options, kDeviceKind, kBackendName);
}

StatusOr<std::unique_ptr<Client>> SimFactory::CreateClientWith(const AttributeMap& options,
                                                               const MultiProcess& job,
                                                               const std::string& kind,
                                                               const std::string& backend,
                                                               bool compiler) {
  if (job.is_multi_process()) {
    return Unimplemented(
        "PJRT_Client_Create: the " + backend + " device runs in a single process, but this is "
        "process " + std::to_string(job.process_index()) + " of a job of " +
        std::to_string(job.num_processes()) +
        " (num_nodes); run it without jax.distributed, or use the xla_cpu device");
  }
  PJRTKIT_ASSIGN_OR_RETURN(SimOptions parsed, SimOptions::Parse(options));
  parsed = parsed.WithDeviceModel(kind, backend);
  if (!compiler) parsed = parsed.WithoutCompiler();
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<SimClient> client, SimClient::Create(parsed));
  return std::unique_ptr<Client>(std::move(client));
}

StatusOr<std::unique_ptr<Topology>> SimFactory::CreateTopologyWith(const AttributeMap& options,
                                                                   const std::string& kind,
                                                                   const std::string& backend,
                                                                   bool compiler) {
  PJRTKIT_ASSIGN_OR_RETURN(SimOptions parsed, SimOptions::Parse(options));
  parsed = parsed.WithDeviceModel(kind, backend);
  if (!compiler) parsed = parsed.WithoutCompiler();
  return std::unique_ptr<Topology>(SimTopology::Create(parsed));
}

}  // namespace sim
}  // namespace pjrtkit
