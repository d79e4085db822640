// The fixed facts of the sim device: names and versions JAX sees.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_PLATFORM_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_PLATFORM_H_

#include <cstdint>

namespace pjrtkit {
namespace sim {

// Platform name JAX sees (every pjrtkit device has it).
inline constexpr char kPlatformName[] = "pjrtkit";
// pjrtkit's version.
inline constexpr char kPjrtkitVersion[] = "0.1.0";
// PJRT_Client_PlatformVersion and the topology's platform version.
inline constexpr char kPlatformVersion[] = "pjrtkit sim 0.1.0";
// PJRT_DeviceDescription_Kind of every sim device.
inline constexpr char kDeviceKind[] = "pjrtkit_sim";
// The "backend" device attribute.
inline constexpr char kBackendName[] = "sim";
// The kind of the one memory of each device, and its kind id.
inline constexpr char kMemoryKind[] = "device";
inline constexpr int kMemoryKindId = 0;
// The plugin attribute xla_version: the XLA feature level JAX may assume of the plugin, as
// OpenXLA's XLA:CPU plugin reports it (xla-cpu-pjrt 0.0.1).
inline constexpr int64_t kXlaVersion = 2;

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_PLATFORM_H_
