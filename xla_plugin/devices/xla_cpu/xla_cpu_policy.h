// XlaCpuPolicy: what makes the shared inner-plugin wrapper the xla_cpu device.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_POLICY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_POLICY_H_

#include <string>

#include "xla_plugin/plugin_wrapper/device_policy.h"

namespace pjrtkit {
namespace xla_cpu {

// XLA:CPU under pjrtkit's own device model (device_model.h): the inner client gets
// cpu_device_count, devices are "pjrtkit_cpu" whatever XLA:CPU calls them, FFI handlers register
// under XLA:CPU's "Host" platform, and memory statistics are counted by pjrtkit (XLA:CPU reports
// none).
class XlaCpuPolicy : public plugin_wrapper::DevicePolicy {
 public:
  XlaCpuPolicy();

  // {"XLA:CPU", "xla_cpu_pjrt.so", "xla_cpu_plugin_path", "the xla-cpu-pjrt wheel",
  //  "PJRTKIT_XLA_CPU_LOG_LEVEL"}.
  const plugin_wrapper::InnerPluginName& inner_plugin() const override { return plugin_; }
  // "xla_cpu".
  const std::string& backend() const override { return backend_; }
  // {"cpu_device_count": device_count}.
  AttributeMap InnerClientOptions(int device_count) const override;
  // MakeDeviceDescription(id, process): of the inner description only the process is used.
  DeviceDescription Describe(int id, const plugin_wrapper::InnerDeviceInfo& inner) const override;
  // "Host", for "pjrtkit", "cpu" and "host".
  const plugin_wrapper::FfiPlatform& ffi_platform() const override { return ffi_platform_; }
  // kCounted.
  plugin_wrapper::MemoryStatsSource memory_stats_source() const override {
    return plugin_wrapper::MemoryStatsSource::kCounted;
  }
  // XLA:CPU 0.0.1 moves bytes as they are (host_layout.h).
  bool moves_bytes_ignoring_layouts() const override { return true; }
  // XLA:CPU 0.0.1 crashes on a user-data lookup without a context.
  bool ffi_programs_need_a_context() const override { return true; }
  bool reads_through_pinned_host() const override { return false; }
  // Copies of 64 KiB or more (below, XLA:CPU's own copy into a small, already mapped allocation
  // is as fast); XLA:CPU aliases zero-copy host data aligned to 64 bytes (cpu::MinAlign(),
  // EIGEN_MAX_ALIGN_BYTES in xla-cpu-pjrt 0.0.1; checked by host_transfer_test).
  plugin_wrapper::HostCopyPooling host_copy_pooling() const override;

 private:
  plugin_wrapper::InnerPluginName plugin_;  // XLA:CPU's names.
  std::string backend_;              // "xla_cpu".
  plugin_wrapper::FfiPlatform ffi_platform_;  // "Host".
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_POLICY_H_
