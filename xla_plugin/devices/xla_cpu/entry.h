// The xla_cpu device's registry entry (devices/registry/device_entry.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_ENTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_ENTRY_H_

#include "xla_plugin/devices/registry/device_entry.h"

namespace pjrtkit {
namespace xla_cpu {

// xla_cpu: XlaCpuFactory; always available; chosen by auto when no higher-priority device is.
registry::DeviceEntry Entry();

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_ENTRY_H_
