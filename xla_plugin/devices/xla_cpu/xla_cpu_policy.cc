#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"

#include <cstddef>
#include <cstdint>

#include "xla_plugin/devices/xla_cpu/device_model.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

// The inner create option that sets XLA:CPU's device count.
constexpr char kInnerDeviceCountOption[] = "cpu_device_count";

}  // namespace

XlaCpuPolicy::XlaCpuPolicy()
    : plugin_{"XLA:CPU", "xla_cpu_pjrt.so", "xla_cpu_plugin_path", "the xla-cpu-pjrt wheel",
              "PJRTKIT_XLA_CPU_LOG_LEVEL"},
      backend_(kBackendName),
      ffi_platform_{"Host", {"cpu", "host"}, "pjrtkit's reference device"} {}

AttributeMap XlaCpuPolicy::InnerClientOptions(int device_count) const {
  AttributeMap options;
  options[kInnerDeviceCountOption] = int64_t{device_count};
  return options;
}

plugin_wrapper::HostCopyPooling XlaCpuPolicy::host_copy_pooling() const {
  plugin_wrapper::HostCopyPooling pooling;
  pooling.min_bytes = size_t{64} << 10;
  pooling.inner_zero_copy_alignment = 64;
  return pooling;
}

DeviceDescription XlaCpuPolicy::Describe(int id,
                                         const plugin_wrapper::InnerDeviceInfo& inner) const {
  return MakeDeviceDescription(id, inner.process_index);
}

}  // namespace xla_cpu
}  // namespace pjrtkit
