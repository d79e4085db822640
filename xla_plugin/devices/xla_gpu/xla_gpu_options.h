// XlaGpuOptions: the create options of the xla_gpu device. Besides where the CUDA plugin is, they
// are XLA:GPU's own (the names and types xla_cuda_plugin.so accepts), checked here and passed
// through unchanged, so a wrong value fails with pjrtkit's message before XLA:GPU sees it.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_OPTIONS_H_

#include <string>
#include <vector>

#include "xla_plugin/client/options.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace xla_gpu {

// Option names.
inline constexpr char kPluginPathOption[] = "xla_gpu_plugin_path";
inline constexpr char kAllocatorOption[] = "allocator";
inline constexpr char kMemoryFractionOption[] = "memory_fraction";
inline constexpr char kPreallocateOption[] = "preallocate";
inline constexpr char kCollectiveMemorySizeOption[] = "collective_memory_size";
inline constexpr char kVisibleDevicesOption[] = "visible_devices";
inline constexpr char kStageHostToDeviceOption[] = "should_stage_host_to_device_transfers";
inline constexpr char kAbortCollectivesOption[] = "abort_collectives_on_failure";
inline constexpr char kMaxInflightOption[] = "max_inflight_computations";
inline constexpr char kUseTfrtClientOption[] = "use_tfrt_gpu_client";

// The platform XLA:GPU is asked for (its create option platform_name); always CUDA here.
inline constexpr char kInnerPlatformName[] = "cuda";

// Parsed and checked create options:
//   xla_gpu_plugin_path (string): absolute path of xla_cuda_plugin.so (default: found, see
//       XlaGpuFactory::PluginSearch).
//   allocator (string): 'default', 'platform', 'bfc', 'cuda_async', 'vmm' or 'address'.
//   memory_fraction (float, (0, 1]): share of GPU memory the allocator may use.
//   preallocate (bool): allocate memory_fraction at client creation.
//   collective_memory_size (int64, >= 0): bytes set aside for collectives.
//   visible_devices (int64 list, distinct ids >= 0): the GPUs the client uses.
//   should_stage_host_to_device_transfers (bool), abort_collectives_on_failure (bool).
//   max_inflight_computations (int64, 1..2147483647).
//   use_tfrt_gpu_client (bool): XLA:GPU's TFRT-based client instead of its default.
// Options not given are not passed: XLA:GPU's defaults apply. XLA:GPU's multi-process options
// (node_id, num_nodes, ...) are not accepted: pjrtkit's xla_gpu device is single-process.
class XlaGpuOptions {
 public:
  // The accepted options (every default is "not given").
  static std::vector<OptionSpec> Specs();
  // Parses and checks `options`; INVALID_ARGUMENT naming the option, its accepted values and
  // that it is XLA:GPU's.
  static StatusOr<XlaGpuOptions> Parse(const AttributeMap& options);

  // xla_gpu_plugin_path; empty when not given.
  const std::string& plugin_path() const { return plugin_path_; }
  // What XLA:GPU's PJRT_Client_Create gets: platform_name "cuda" and the options given.
  const AttributeMap& inner_options() const { return inner_options_; }

 private:
  XlaGpuOptions(std::string plugin_path, AttributeMap inner_options)
      : plugin_path_(std::move(plugin_path)), inner_options_(std::move(inner_options)) {}

  std::string plugin_path_;     // Where the CUDA plugin is; may be empty.
  AttributeMap inner_options_;  // Passed through.
};

}  // namespace xla_gpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_OPTIONS_H_
