// pjrtkit's own device model for the xla_cpu device: names, versions and device descriptions
// (the topology, plugin_wrapper::WrappedTopology, is made of them). Needs no inner plugin, so
// CreateTopology works without loading XLA:CPU.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_DEVICE_MODEL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_DEVICE_MODEL_H_

#include <memory>
#include <string>

#include "xla_plugin/client/device_description.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"

namespace pjrtkit {
namespace xla_cpu {

// Platform name JAX sees and pjrtkit's version (shared by every device).
using ::pjrtkit::plugin_wrapper::kPjrtkitVersion;
using ::pjrtkit::plugin_wrapper::kPlatformName;
// Device kind of every xla_cpu device.
inline constexpr char kDeviceKind[] = "pjrtkit_cpu";
// Value of the "backend" device attribute.
inline constexpr char kBackendName[] = "xla_cpu";
// Device count limits and default (create option "device_count").
inline constexpr int kMinDeviceCount = 1;
inline constexpr int kMaxDeviceCount = 256;
inline constexpr int kDefaultDeviceCount = 4;

// "pjrtkit 0.1.0 (xla_cpu <inner_version>)", or "pjrtkit 0.1.0 (xla_cpu)" when `inner_version` is
// empty (a topology made without the inner plugin).
std::string PlatformVersion(const std::string& inner_version);

// Description of device `id` of process `process_index`: kind "pjrtkit_cpu", debug string
// "PJRTKIT_<id>", to_string "PjrtkitDevice(id=<id>, process_index=<p>, kind=pjrtkit_cpu)",
// attributes {"backend": "xla_cpu", "core_count": 1} (each pjrtkit device is one XLA:CPU device).
DeviceDescription MakeDeviceDescription(int id, int process_index = 0);

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_DEVICE_MODEL_H_
