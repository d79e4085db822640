// XlaGpuPolicy: what makes the shared inner-plugin wrapper the xla_gpu device.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_POLICY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_POLICY_H_

#include <string>

#include "xla_plugin/plugin_wrapper/device_policy.h"

namespace pjrtkit {
namespace xla_gpu {

// Kind of the devices of a topology made without the CUDA plugin (none is: see XlaGpuFactory).
inline constexpr char kUnknownGpuKind[] = "pjrtkit_gpu";
// Value of the "backend" device attribute.
inline constexpr char kBackendName[] = "xla_gpu";
// pjrtkit's switch for XLA:GPU's log level (see inner_log_level.h).
inline constexpr char kLogLevelEnv[] = "PJRTKIT_XLA_GPU_LOG_LEVEL";

// OpenXLA's CUDA plugin (xla_cuda_plugin.so) under pjrtkit's platform: the inner client gets
// the create options the user gave (XlaGpuOptions), devices keep the GPU's real kind ("NVIDIA
// H200") and every inner attribute (compute_capability, core_count, ...) plus backend
// "xla_gpu", FFI handlers register under XLA:GPU's "CUDA" platform, and memory statistics are
// XLA:GPU's allocator's.
class XlaGpuPolicy : public plugin_wrapper::DevicePolicy {
 public:
  // A policy creating inner clients with `inner_options` (XlaGpuOptions::inner_options()).
  explicit XlaGpuPolicy(AttributeMap inner_options);

  // {"XLA:GPU", "xla_cuda_plugin.so", "xla_gpu_plugin_path", "the jax-cuda13-pjrt wheel",
  //  kLogLevelEnv}.
  const plugin_wrapper::InnerPluginName& inner_plugin() const override { return plugin_; }
  // "xla_gpu".
  const std::string& backend() const override { return backend_; }
  // The options it was made with; `device_count` is not used (XLA:GPU makes one device per
  // visible GPU).
  AttributeMap InnerClientOptions(int device_count) const override { return inner_options_; }
  // Kind: the inner kind; debug string "PJRTKIT_<id>"; to_string
  // "PjrtkitDevice(id=<id>, process_index=0, kind=<kind>)"; attributes: the inner ones plus
  // backend "xla_gpu".
  DeviceDescription Describe(int id, const plugin_wrapper::InnerDeviceInfo& inner) const override;
  // "CUDA", for "pjrtkit", "cuda" and "gpu".
  const plugin_wrapper::FfiPlatform& ffi_platform() const override { return ffi_platform_; }
  // kInner.
  plugin_wrapper::MemoryStatsSource memory_stats_source() const override {
    return plugin_wrapper::MemoryStatsSource::kInner;
  }
  // XLA:GPU lays data out as asked.
  bool moves_bytes_ignoring_layouts() const override { return false; }
  // XLA:GPU runs FFI programs without a context.
  bool ffi_programs_need_a_context() const override { return false; }
  bool reads_through_pinned_host() const override { return true; }
  // "create the client with visible_devices naming <n> GPUs".
  std::string DeviceCountRemedy(int device_count) const override;

 private:
  plugin_wrapper::InnerPluginName plugin_;  // XLA:GPU's names.
  std::string backend_;              // "xla_gpu".
  AttributeMap inner_options_;       // For PJRT_Client_Create.
  plugin_wrapper::FfiPlatform ffi_platform_;  // "CUDA".
};

}  // namespace xla_gpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_POLICY_H_
