// The sim device's registry entry (xla_plugin/devices/registry; listed in devices.bzl).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ENTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ENTRY_H_

#include "xla_plugin/devices/registry/device_entry.h"

namespace pjrtkit {
namespace sim {

// The sim device: its own compiler and runtime, no inner PJRT plugin; chosen only by name.
registry::DeviceEntry Entry();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ENTRY_H_
