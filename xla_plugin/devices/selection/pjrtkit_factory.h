// PjrtkitFactory: the factory behind pjrtkit's one plugin library. It chooses a device per
// client (DeviceChoice) and hands the options to that device's factory, so one .so and one wheel
// serve both the xla_cpu and the xla_gpu device.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PJRTKIT_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PJRTKIT_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/options.h"
#include "xla_plugin/client/plugin_factory.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/selection/device_choice.h"

namespace pjrtkit {
namespace selection {

// Create options: `device` (DeviceChoice) plus the chosen device's (XlaCpuFactory /
// XlaGpuFactory::OptionSpecs). An unknown option is INVALID_ARGUMENT listing `device` and the
// chosen device's options.
struct PjrtkitFactory {
  // Initializes both devices (neither loads anything).
  static Status Initialize();
  // pjrtkit_version, xla_version and the StableHLO versions every device accepts: the older of
  // the devices' current versions and the newer of their minimum versions (PJRT_Plugin_Attributes
  // has no client, so it cannot depend on the device a client will choose; JAX serializes
  // programs for the current version).
  static AttributeMap PluginAttributes();
  // The chosen device's client.
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // The chosen device's topology.
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
  // `options` without `device`, checked against `device` plus `kind`'s options.
  static StatusOr<AttributeMap> DeviceOptions(const AttributeMap& options, DeviceKind kind);
};

static_assert(CheckPluginFactory<PjrtkitFactory>(), "PjrtkitFactory");

}  // namespace selection
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PJRTKIT_FACTORY_H_
