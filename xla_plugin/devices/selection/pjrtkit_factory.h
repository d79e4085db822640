// PjrtkitFactory: the factory behind pjrtkit's one plugin library. One .so and one wheel serve
// every registered device (devices/registry: xla_cpu, xla_gpu and any device folder listed in
// devices.bzl); a process gets one of them (ProcessDevice, decided when the plugin is loaded),
// and the create options of each client must agree with it (DeviceChoice) before they go to that
// device's factory.
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
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace selection {

// Create options: `device` (DeviceChoice) plus the chosen device's (DeviceEntry::option_specs).
// An unknown option is INVALID_ARGUMENT listing `device` and the chosen device's options.
struct PjrtkitFactory {
  // Initializes every registered device (the reference devices load nothing here);
  // INVALID_ARGUMENT when $PJRTKIT_DEVICE names no device.
  static Status Initialize();
  // The process device's attributes (PJRT_Plugin_Attributes has no client: JAX serializes every
  // program for the StableHLO version it reads here): its inner plugin's xla_version and StableHLO
  // current and minimum versions when ProcessDevice loaded it (else the versions the device was
  // built against), pjrtkit_version, pjrtkit_device (its name) and pjrtkit_devices (the
  // registry, Registry::ToJson(): the Python side checks it against build_info.json).
  static AttributeMap PluginAttributes();
  // The client of the device the options choose, which must be the process's device
  // (FAILED_PRECONDITION otherwise, ProcessDevice::CheckSame).
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // The topology of the device the options choose, likewise. The options but `device` go to the
  // device's CreateTopology, which checks them: a topology's options may differ from a client's
  // (xla_gpu's topology, target_config, ...).
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
  // The PJRT_Api of the process device's inner plugin (as `const void*`: the factory contract has
  // no PJRT types), whose extensions the C-API layer forwards; null when it is not loaded.
  static const void* ForwardedPluginApi();
  // A client of `kind` regardless of the process device (tests of both devices in one process).
  static StatusOr<std::unique_ptr<Client>> CreateClientOf(const DeviceEntry& kind,
                                                          const AttributeMap& options,
                                                          const MultiProcess& job = {});
  // The attributes PluginAttributes reports for a process whose device is `kind` with inner plugin
  // `inner` (null: not loaded).
  static AttributeMap AttributesOf(const DeviceEntry& kind, const plugin_wrapper::InnerApi* inner);
  // `options` without `device`, checked against `device` plus `kind`'s options.
  static StatusOr<AttributeMap> DeviceOptions(const AttributeMap& options,
                                              const DeviceEntry& kind);
};

static_assert(CheckPluginFactory<PjrtkitFactory>(), "PjrtkitFactory");

}  // namespace selection
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PJRTKIT_FACTORY_H_
