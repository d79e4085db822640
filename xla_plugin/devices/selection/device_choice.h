// DeviceChoice: which of pjrtkit's devices a client (or topology) is made of, from its create
// options and the machine, so that one plugin library serves both reference devices.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_

#include <string>
#include <vector>

#include "xla_plugin/client/options.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace selection {

// pjrtkit's devices.
enum class DeviceKind { kXlaCpu, kXlaGpu };

// The create option that chooses the device, and the environment variable read when no option
// decides.
inline constexpr char kDeviceOption[] = "device";
inline constexpr char kDeviceEnv[] = "PJRTKIT_DEVICE";

// What DeviceChoice looks at besides the options.
struct MachineFacts {
  std::string device_env;        // $PJRTKIT_DEVICE ("" when unset).
  bool nvidia_gpu = false;       // An NVIDIA GPU is visible (see NvidiaGpuVisible).
  bool gpu_plugin = false;       // The CUDA PJRT plugin is found (XlaGpuFactory::PluginSearch).
};

// In this order:
//   1. create option `device`: "xla_cpu" or "xla_gpu" ("auto" or absent: go on);
//   2. options only one device accepts (device_count, xla_cpu_plugin_path,
//      host_buffer_cache_mib: xla_cpu; xla_gpu_plugin_path, allocator, memory_fraction, ...:
//      xla_gpu);
//   3. $PJRTKIT_DEVICE: "xla_cpu", "xla_gpu" or "auto";
//   4. xla_gpu when an NVIDIA GPU is visible and the CUDA plugin is found, else xla_cpu.
// Stateless; thread-safe.
class DeviceChoice {
 public:
  // The device for `options` on a machine described by `facts`; INVALID_ARGUMENT for a `device`
  // (or $PJRTKIT_DEVICE) value that is not a device, and for options of both devices or of the
  // other device than the one asked for.
  static StatusOr<DeviceKind> Choose(const AttributeMap& options, const MachineFacts& facts);
  // The facts of this process and machine.
  static MachineFacts FromProcess();
  // True when the NVIDIA driver lists a GPU (/proc/driver/nvidia/gpus) and CUDA_VISIBLE_DEVICES
  // does not hide them all ("" or "-1").
  static bool NvidiaGpuVisible();
  // "xla_cpu" / "xla_gpu".
  static const char* Name(DeviceKind kind);
  // The spec of the `device` option.
  static OptionSpec DeviceOptionSpec();
};

}  // namespace selection
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SELECTION_DEVICE_CHOICE_H_
