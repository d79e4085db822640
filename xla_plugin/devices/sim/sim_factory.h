// SimFactory: how the C-API layer creates the sim device (client/plugin_factory.h):
// pjrtkit::CreatePjrtApi<sim::SimFactory>() is the sim device's PJRT_Api.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/options.h"
#include "xla_plugin/client/plugin_factory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// The statics of plugin_factory.h, plus OptionSpecs() and CreateClient(options, job) as the
// device registry expects them (registry/device_entry.h, CheckDeviceFactory). Create options:
// SimOptions.
struct SimFactory {
  // Nothing to do. The process's StableHLO library is loaded when PluginAttributes first reads its
  // versions; a client with the stablehlo_library_path option loads that one at its first compile.
  static Status Initialize();
  // xla_version (int64, 2), stablehlo_current_version and stablehlo_minimum_version (int64
  // triples, from StablehloAttributesForProcess in sim_compile.h), pjrtkit_version (string).
  static AttributeMap PluginAttributes();
  // The accepted create options (SimOptions::Specs()).
  static std::vector<OptionSpec> OptionSpecs();
  // A SimClient of `options`. The sim device runs in one process: a multi-process job (num_nodes
  // > 1) is UNIMPLEMENTED, saying so.
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // The SimTopology of `options` (no memory is reserved); `name` is not used.
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
  // CreateClient / CreateTopology for a device made from this one (tools/new_device.py --from
  // sim): its devices report `kind` and backend `backend` (debug strings PJRTKIT_<BACKEND>_<id>).
  // With `compiler` false, the client and topology answer every compile and executable load
  // UNIMPLEMENTED (a device whose compiler is not ready yet; SimOptions::WithoutCompiler).
  static StatusOr<std::unique_ptr<Client>> CreateClientWith(const AttributeMap& options,
                                                            const MultiProcess& job,
                                                            const std::string& kind,
                                                            const std::string& backend,
                                                            bool compiler = true);
  static StatusOr<std::unique_ptr<Topology>> CreateTopologyWith(const AttributeMap& options,
                                                                const std::string& kind,
                                                                const std::string& backend,
                                                                bool compiler = true);
};

static_assert(CheckPluginFactory<SimFactory>(), "SimFactory");

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FACTORY_H_
