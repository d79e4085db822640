// RuntimeOnlyFactory: a test device in the first state of every device with its own runtime: the
// sim device's client layer, memory, queues and transfers, and no compiler yet (every compile and
// executable load answers UNIMPLEMENTED). The conformance suite runs on it with --no_compiler
// (runtime_only_conformance_test): what a device team's CI sees before its compiler exists.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_RUNTIME_ONLY_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_RUNTIME_ONLY_FACTORY_H_

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

// Device kind "pjrtkit_runtime_only", backend "runtime_only"; the sim device's create options
// and plugin attributes.
struct RuntimeOnlyFactory {
  static Status Initialize();
  static AttributeMap PluginAttributes();
  static std::vector<OptionSpec> OptionSpecs();
  // A sim client made without a compiler (SimFactory::CreateClientWith, compiler false).
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // A sim topology that does not compile ahead of time either.
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
};

static_assert(CheckPluginFactory<RuntimeOnlyFactory>(), "RuntimeOnlyFactory");

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_RUNTIME_ONLY_FACTORY_H_
