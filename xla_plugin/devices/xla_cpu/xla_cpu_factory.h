// XlaCpuFactory: how the C-API layer creates the xla_cpu device (see client/plugin_factory.h):
// the shared inner-plugin wrapper (plugin_wrapper) with XlaCpuPolicy on OpenXLA's XLA:CPU plugin.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/library_locator.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/options.h"
#include "xla_plugin/client/plugin_factory.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"

namespace pjrtkit {
namespace xla_cpu {

// Create options (PJRT_Client_Create / PJRT_TopologyDescription_Create):
//   device_count (int64, default 4, 1..256): number of devices; XLA:CPU gets it as
//       cpu_device_count.
//   xla_cpu_plugin_path (string): absolute path of OpenXLA's xla_cpu_pjrt.so. When empty,
//       PluginSearch() finds it ($PJRTKIT_XLA_CPU_PLUGIN, then the xla-cpu-pjrt package beside
//       pjrtkit); CreateClient fails when neither has it; CreateTopology keeps it for
//       ahead-of-time compilation (loaded at the first PJRT_Compile that needs it, not before).
//   host_buffer_cache_mib (int64, default 512, >= 0): MiB of host memory the client keeps for
//       reuse by host-to-device copies (HostBufferPool; blocks unused for a second, or while
//       memory is short, are given back); 0 turns the pool off.
//   process_join_timeout_s (int64, default 120, 1..86400): in a multi-process job, how long
//       client creation waits for every other process's client.
// Multi-process (node_id / num_nodes and the framework's key-value store, after
// jax.distributed.initialize()): XLA:CPU ignores both, so pjrtkit places the devices itself.
// Each process publishes its pjrtkit version and device count (ProcessExchange), a different
// version is refused; the inner client gets every process's devices (global ids in process
// order) and only this process's are addressable. Programs spanning processes are refused at
// compile (XLA:CPU's collectives stay inside one process).
struct XlaCpuFactory {
  // Nothing to do: XLA:CPU is loaded and initialized by CreateClient.
  static Status Initialize();
  // pjrtkit_version plus the XLA:CPU plugin's own attributes (constants below; a test checks
  // them against the loaded plugin).
  static AttributeMap PluginAttributes();
  // Loads XLA:CPU from xla_cpu_plugin_path (or where PluginSearch() finds it) and creates a
  // client of device_count devices in this process (and, in a multi-process job, every other
  // process's devices as non-addressable ones).
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // pjrtkit's topology of device_count devices (an WrappedTopology, which compiles ahead of
  // time); loads nothing. `name` is not used.
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
  // The accepted create options.
  static std::vector<OptionSpec> OptionSpecs();
  // Where XLA:CPU is looked for when xla_cpu_plugin_path is empty.
  static LibrarySearch PluginSearch();

  // CreateClient and CreateTopology with another policy over XLA:CPU: how a device made with
  // tools/new_device.py runs on XLA:CPU until its team replaces the inside (same options).
  static StatusOr<std::unique_ptr<Client>> CreateClientWith(
      const AttributeMap& options, const MultiProcess& job,
      std::shared_ptr<const XlaCpuPolicy> policy);
  static StatusOr<std::unique_ptr<Topology>> CreateTopologyWith(
      const std::string& name, const AttributeMap& options,
      std::shared_ptr<const XlaCpuPolicy> policy);
};

// Attributes of the XLA:CPU plugin this reference device is built against (xla-cpu-pjrt 0.0.1,
// PJRT C API 0.81), read once from its PJRT_Plugin_Attributes: xla_version 2, StableHLO current
// 1.13.3, minimum 0.9.0. Upgrading the wheel means updating them (xla_cpu_factory_test says so).
inline constexpr int64_t kXlaCpuXlaVersion = 2;
inline constexpr int64_t kXlaCpuStablehloCurrentVersion[] = {1, 13, 3};
inline constexpr int64_t kXlaCpuStablehloMinimumVersion[] = {0, 9, 0};

// Option names.
inline constexpr char kDeviceCountOption[] = "device_count";
inline constexpr char kPluginPathOption[] = "xla_cpu_plugin_path";
inline constexpr char kHostBufferCacheOption[] = "host_buffer_cache_mib";
inline constexpr char kJoinTimeoutOption[] = "process_join_timeout_s";
// The environment variable PluginSearch() reads first.
inline constexpr char kPluginPathEnv[] = "PJRTKIT_XLA_CPU_PLUGIN";
// Default of host_buffer_cache_mib: 512 MiB.
inline constexpr int64_t kDefaultHostBufferCacheMib = 512;

static_assert(CheckPluginFactory<XlaCpuFactory>(), "XlaCpuFactory");

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_FACTORY_H_
