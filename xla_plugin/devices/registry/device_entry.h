// DeviceEntry: what the registry knows of one pjrtkit device, and MakeEntry<Factory>(), which
// fills it from a device factory (client/plugin_factory.h) plus the device's own facts.
//
// Every device folder xla_plugin/devices/NAME has a cc_library `:entry` with `entry.h` declaring
// `pjrtkit::NAME::Entry()`; devices.bzl lists the registered folders (one line per device) and
// the registry compiles each one's Entry() in (registry.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_DEVICE_ENTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_DEVICE_ENTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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
namespace plugin_wrapper {
class InnerApi;  // A loaded inner PJRT plugin (xla_plugin/plugin_wrapper/inner_api.h).
}  // namespace plugin_wrapper

namespace registry {

// DeviceEntry::runs_like's values: the JAX integration the Python side installs for a device.
inline constexpr char kRunsLikeXlaCpu[] = "xla_cpu";       // XLA:CPU's programs and lowerings.
inline constexpr char kRunsLikeXlaGpu[] = "xla_gpu";       // XLA:GPU's.
inline constexpr char kRunsLikeStablehlo[] = "stablehlo";  // The device compiles StableHLO itself.

// What the registry knows of a wrapped device's inner PJRT plugin (xla_plugin/plugin_wrapper).
struct InnerPluginFacts {
  // The create option naming the inner plugin's path ("xla_cpu_plugin_path").
  std::string path_option;
  // The environment variable the device reads when that option is empty
  // ("PJRTKIT_XLA_CPU_PLUGIN"); the Python side sets it before JAX loads the library.
  std::string path_env;
  // Loads and initializes the inner plugin from where it is found without create options, when
  // the process's device is decided (devices/selection/process_device.h); null: not loaded then.
  StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> (*load_process_plugin)() = nullptr;
};

// The device's facts. Plain data plus function pointers: an entry is a value, copied freely.
struct DeviceEntry {
  // The `device` create option's and $PJRTKIT_DEVICE's value, and the device folder's name.
  std::string name;
  // The JAX integration (lowering rules, program checks, topologies, default options) the Python
  // side installs for this device: "xla_cpu" (it runs XLA:CPU's programs: XLA:CPU's lowerings),
  // "xla_gpu" (XLA:GPU's) or "stablehlo" (it compiles StableHLO itself: JAX's
  // platform-independent lowering rules only). See kRunsLike*.
  std::string runs_like;
  // One line for `device` option help and docs.
  std::string summary;
  // With nothing else deciding, the available device with the highest priority is chosen; 0:
  // only when named (a new device does not take over a machine by being built in).
  int auto_priority = 0;
  // Why `available` is false, for the reason of a choice ("no NVIDIA GPU with OpenXLA's CUDA
  // plugin was found"); and why it is true.
  std::string unavailable_reason;
  std::string available_reason;
  // A wrapped device's inner PJRT plugin; absent for a device with its own runtime.
  std::optional<InnerPluginFacts> inner_plugin;

  Status (*initialize)() = nullptr;
  AttributeMap (*plugin_attributes)() = nullptr;
  std::vector<OptionSpec> (*option_specs)() = nullptr;
  StatusOr<std::unique_ptr<Client>> (*create_client)(const AttributeMap& options,
                                                     const MultiProcess& job) = nullptr;
  StatusOr<std::unique_ptr<Topology>> (*create_topology)(const std::string& name,
                                                         const AttributeMap& options) = nullptr;
  // Whether this machine has what the device needs, checked without loading anything heavy
  // (null: always).
  bool (*available)() = nullptr;
};

// CheckPluginFactory plus what the registry needs of a device's factory, with readable errors.
template <typename Factory>
constexpr bool CheckDeviceFactory() {
  static_assert(CheckPluginFactory<Factory>(), "a device's factory");
  static_assert(std::is_same_v<decltype(Factory::OptionSpecs()), std::vector<OptionSpec>>,
                "Factory::OptionSpecs() must return std::vector<pjrtkit::OptionSpec>: the create "
                "options the device accepts");
  static_assert(
      std::is_same_v<decltype(Factory::CreateClient(std::declval<AttributeMap>(),
                                                    std::declval<MultiProcess>())),
                     StatusOr<std::unique_ptr<Client>>>,
      "Factory::CreateClient(options, job) must take a const MultiProcess& (multi_process.h) "
      "after the options (a default argument `= {}` keeps the one-argument form)");
  return true;
}

// An entry whose functions are Factory's static members (Initialize, PluginAttributes,
// OptionSpecs, CreateClient(options, job), CreateTopology); the facts come from `facts`.
template <typename Factory>
DeviceEntry MakeEntry(DeviceEntry facts) {
  static_assert(CheckDeviceFactory<Factory>(), "a device's factory");
  facts.initialize = &Factory::Initialize;
  facts.plugin_attributes = &Factory::PluginAttributes;
  facts.option_specs = &Factory::OptionSpecs;
  facts.create_client = &Factory::CreateClient;
  facts.create_topology = &Factory::CreateTopology;
  return facts;
}

}  // namespace registry
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_DEVICE_ENTRY_H_
