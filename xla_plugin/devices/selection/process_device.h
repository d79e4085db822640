// ProcessDevice: the one pjrtkit device a process gets, decided when the plugin is first used
// (GetPjrtApi), before any client exists.
//
// Some of what a framework reads from a plugin has no client to ask: PJRT_Plugin_Attributes (the
// StableHLO versions JAX serializes programs for) and the extension chain (JAX registers the
// plugin's profiler right after GetPjrtApi, and custom partitioners before creating a client). So
// the process's device is chosen once, with DeviceChoice's rules on the environment and the
// machine (no create options exist yet): $PJRTKIT_DEVICE, else the available device with the
// highest auto priority (xla_gpu when an NVIDIA GPU and the CUDA plugin are there, else xla_cpu).
// jax_plugins.pjrtkit.initialize() sets $PJRTKIT_DEVICE to the device it chose (create options
// included) before JAX loads the library, so both agree. Clients and topologies of another device
// are refused (PjrtkitFactory).
//
// A wrapped device's inner plugin is loaded at the same time when it can be found without create
// options (DeviceEntry::inner_plugin's load_process_plugin: $PJRTKIT_XLA_CPU_PLUGIN /
// $PJRTKIT_XLA_GPU_PLUGIN, or beside pjrtkit, for the reference devices): its attributes are
// reported, and its extensions forwarded. A device without an inner plugin reports its own
// attributes and forwards nothing. Thread-safe; decided once (a function-local static, immutable
// afterwards).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PROCESS_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PROCESS_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/selection/device_choice.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace selection {

class ProcessDevice {
 public:
  // This process's device, decided at the first call.
  static const ProcessDevice& Get();

  // The choice among `devices` for a machine described by `facts` (no options): what Get()
  // decides, for tests. `inner` is left unloaded.
  static ProcessDevice Decide(
      const MachineFacts& facts,
      const std::vector<DeviceEntry>& devices = registry::Registry::Devices());
  // Decide, then load the device's inner plugin (DeviceEntry::inner_plugin's
  // load_process_plugin) when it has one: what Get() does with this process's facts.
  static ProcessDevice DecideAndLoad(const MachineFacts& facts,
                                     const std::vector<DeviceEntry>& devices);

  // The device (an entry of the registry), or INVALID_ARGUMENT when $PJRTKIT_DEVICE names no
  // device.
  const StatusOr<const DeviceEntry*>& kind() const { return kind_; }
  // Why: "environment variable PJRTKIT_DEVICE", "an NVIDIA GPU and OpenXLA's CUDA plugin were
  // found", "no NVIDIA GPU with OpenXLA's CUDA plugin was found".
  const std::string& reason() const { return reason_; }
  // The device's inner plugin, loaded and initialized; null when it could not be or the device
  // has none (load_status()).
  const std::shared_ptr<plugin_wrapper::InnerApi>& inner() const { return inner_; }
  // Why inner() is null (OK when it is loaded).
  const Status& load_status() const { return load_status_; }
  // FAILED_PRECONDITION when `kind` is not this process's device (naming both and how to choose
  // the other: $PJRTKIT_DEVICE before the plugin loads), for `what` ("a client", "a topology").
  Status CheckSame(const DeviceEntry& kind, const char* what) const;

 private:
  ProcessDevice() = default;

  StatusOr<const DeviceEntry*> kind_ = nullptr;  // The device.
  std::string reason_;                            // Why.
  std::shared_ptr<plugin_wrapper::InnerApi> inner_;  // May be null.
  Status load_status_;                            // Why inner_ is null.
};

}  // namespace selection
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_PROCESS_DEVICE_H_
