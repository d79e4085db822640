#include "xla_plugin/devices/xla_gpu/xla_gpu_policy.h"

#include <utility>

namespace pjrtkit {
namespace xla_gpu {

XlaGpuPolicy::XlaGpuPolicy(AttributeMap inner_options)
    : plugin_{"XLA:GPU", "xla_cuda_plugin.so", "xla_gpu_plugin_path",
              "the jax-cuda13-pjrt (or jax-cuda12-pjrt) wheel", kLogLevelEnv},
      backend_(kBackendName),
      inner_options_(std::move(inner_options)),
      ffi_platform_{"CUDA", {"cuda", "gpu"}, "pjrtkit's xla_gpu device",
                    /*version_shims=*/false} {}

DeviceDescription XlaGpuPolicy::Describe(int id,
                                         const plugin_wrapper::InnerDeviceInfo& inner) const {
  const std::string ids = std::to_string(id);
  const std::string kind = inner.kind.empty() ? std::string(kUnknownGpuKind) : inner.kind;
  AttributeMap attributes = inner.attributes;
  attributes["backend"] = std::string(kBackendName);
  const std::string process = std::to_string(inner.process_index);
  return DeviceDescription(id, inner.process_index, kind, "PJRTKIT_" + ids,
                           "PjrtkitDevice(id=" + ids + ", process_index=" + process +
                               ", kind=" + kind + ")",
                           std::move(attributes));
}

std::string XlaGpuPolicy::DeviceCountRemedy(int device_count) const {
  return "create the client with visible_devices naming " + std::to_string(device_count) +
         " GPUs";
}

}  // namespace xla_gpu
}  // namespace pjrtkit
