// Registry: pjrtkit's devices, compiled in from devices.bzl (one line per device folder), and
// their description as JSON, which the plugin reports (PJRT_Plugin_Attributes "pjrtkit_devices")
// and the build writes into build_info.json for the Python side, which must choose a device
// before JAX loads the plugin.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTRY_H_

#include <string>
#include <vector>

#include "xla_plugin/devices/registry/device_entry.h"

namespace pjrtkit {
namespace registry {

class Registry {
 public:
  // The registered devices, in devices.bzl's order (built once; immutable).
  static const std::vector<DeviceEntry>& Devices();
  // The entry named `name` in `devices`, or null.
  static const DeviceEntry* Find(const std::string& name,
                                 const std::vector<DeviceEntry>& devices = Devices());
  // "'xla_cpu', 'xla_gpu' or 'auto'": the accepted values of the `device` option.
  static std::string AcceptedNames(const std::vector<DeviceEntry>& devices = Devices());
  // [{"name", "runs_like", "summary", "auto_priority", "inner_plugin_option",
  //   "inner_plugin_env", "options": [{"name", "type", "default", "help"}, ...]}, ...]:
  // compact JSON, keys in this order; the two inner_plugin_* keys are "" for a device without an
  // inner plugin.
  static std::string ToJson(const std::vector<DeviceEntry>& devices = Devices());
};

}  // namespace registry
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTRY_H_
