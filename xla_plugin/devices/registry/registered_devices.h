// RegisteredDevices(): defined by the source registry.bzl generates from devices.bzl.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTERED_DEVICES_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTERED_DEVICES_H_

#include <vector>

#include "xla_plugin/devices/registry/device_entry.h"

namespace pjrtkit {
namespace registry {

// Every registered device's entry, in devices.bzl's order.
std::vector<DeviceEntry> RegisteredDevices();

}  // namespace registry
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_REGISTRY_REGISTERED_DEVICES_H_
