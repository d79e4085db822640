// InnerDeviceInfo: what the inner plugin says about one of its devices, read once at client
// creation and handed to the device's DevicePolicy, which makes pjrtkit's description of it.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_DEVICE_INFO_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_DEVICE_INFO_H_

#include <string>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

class InnerApi;

// The inner description of one device (PJRT_DeviceDescription_* and PJRT_Device_LocalHardwareId).
// Empty for a topology made without the inner plugin.
struct InnerDeviceInfo {
  int id = 0;                  // Inner device id (equal to pjrtkit's).
  int process_index = 0;       // The device's process (the inner plugin's, or pjrtkit's).
  bool addressable = true;     // True when this process can use the device.
  int local_hardware_id = -1;  // Inner local hardware id (-1: unknown).
  std::string kind;            // Inner device kind, e.g. "cpu" or "NVIDIA H200".
  std::string debug_string;    // Inner short name, e.g. "TFRT_CPU_0" or "cuda:0".
  std::string to_string;       // Inner long name.
  AttributeMap attributes;     // Inner attributes (compute_capability, core_count, ...).
};

// What `description` (an inner device description, of a client's device or of a topology) says
// through `api`: id, kind, debug string, to_string, attributes and, when the plugin has the slot,
// the process index. Leaves addressable and local_hardware_id at their defaults (a description
// has neither). Errors are the inner plugin's, naming the slot.
StatusOr<InnerDeviceInfo> ReadInnerDescription(const InnerApi& api,
                                               PJRT_DeviceDescription* description);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_DEVICE_INFO_H_
