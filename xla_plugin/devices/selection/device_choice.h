// DeviceChoice: which registered pjrtkit device (devices/registry) a client or topology is made
// of, from its create options and the machine, so that one plugin library serves every device.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_

#include <set>
#include <string>
#include <vector>

#include "xla_plugin/client/options.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/registry/registry.h"

namespace pjrtkit {
namespace selection {

using registry::DeviceEntry;

// The create option that chooses the device, and the environment variable read when no option
// decides.
inline constexpr char kDeviceOption[] = "device";
inline constexpr char kDeviceEnv[] = "PJRTKIT_DEVICE";

// What DeviceChoice looks at besides the options.
struct MachineFacts {
  std::string device_env;           // $PJRTKIT_DEVICE ("" when unset).
  std::set<std::string> available;  // Devices whose DeviceEntry::available holds (or is null).
};

// In this order:
//   1. create option `device`: a registered device's name ("auto" or absent: go on);
//   2. options only some devices accept (device_count: xla_cpu; memory_fraction: xla_gpu; ...):
//      the devices that accept every one of them; one left decides;
//   3. $PJRTKIT_DEVICE: a device's name (among those options left) or "auto";
//   4. of those left, the available device with the highest auto_priority above 0 (xla_gpu when
//      an NVIDIA GPU and the CUDA plugin are there, else xla_cpu), else the first registered.
// Stateless; thread-safe.
class DeviceChoice {
 public:
  // The device for `options` on a machine described by `facts`, of `devices`; INVALID_ARGUMENT
  // for a `device` (or $PJRTKIT_DEVICE) value that is not a device, and for options no device
  // accepts together or that the device asked for does not accept.
  static StatusOr<const DeviceEntry*> Choose(
      const AttributeMap& options, const MachineFacts& facts,
      const std::vector<DeviceEntry>& devices = registry::Registry::Devices());
  // The facts of this process and machine (each device's `available` is asked).
  static MachineFacts FromProcess(
      const std::vector<DeviceEntry>& devices = registry::Registry::Devices());
  // The spec of the `device` option.
  static OptionSpec DeviceOptionSpec(
      const std::vector<DeviceEntry>& devices = registry::Registry::Devices());
  // The device chosen by rule 4 alone (no options, no environment), and why, for ProcessDevice.
  static const DeviceEntry* Auto(const MachineFacts& facts,
                                 const std::vector<DeviceEntry>& devices, std::string* reason);
};

}  // namespace selection
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_
