// XlaGpuFactory: how the C-API layer creates the xla_gpu device (see client/plugin_factory.h):
// the shared inner-plugin wrapper (plugin_wrapper) with XlaGpuPolicy on OpenXLA's CUDA PJRT plugin
// (xla_cuda_plugin.so from jax-cuda13-pjrt or jax-cuda12-pjrt), dlopened at client creation.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_FACTORY_H_

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

namespace pjrtkit {
namespace xla_gpu {

// Create options: see XlaGpuOptions (xla_gpu_options.h).
struct XlaGpuFactory {
  // Nothing to do: the CUDA plugin is loaded and initialized by CreateClient.
  static Status Initialize();
  // pjrtkit_version plus the CUDA plugin's own attributes (constants below, read from
  // jax-cuda13-pjrt 0.11.2; a test compares them with the plugin when it is available).
  static AttributeMap PluginAttributes();
  // Loads the CUDA plugin (xla_gpu_plugin_path, or where PluginSearch() finds it) and creates a
  // client of every visible GPU (or of visible_devices) with the options given.
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options,
                                                        const MultiProcess& job = {});
  // Loads the CUDA plugin (as CreateClient does) and creates its topology with `name` and the
  // options (XlaGpuTopologyOptions: topology shape, target_config, ...) through
  // PJRT_TopologyDescription_Create: a DevicelessTopology, which compiles ahead of time without
  // a GPU (XLA:GPU's deviceless compilation for the GPU the target config describes).
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
  // The accepted create options.
  static std::vector<OptionSpec> OptionSpecs();
  // Where the CUDA plugin is looked for when xla_gpu_plugin_path is empty:
  // $PJRTKIT_XLA_GPU_PLUGIN, then jax_plugins/xla_cuda13 and jax_plugins/xla_cuda12 beside
  // pjrtkit.
  static LibrarySearch PluginSearch();
};

// Attributes of the CUDA plugin this device is tested with (jax-cuda13-pjrt 0.11.2, PJRT C API
// 0.115): xla_version 2, StableHLO current 1.20.0, minimum 0.9.0.
inline constexpr int64_t kXlaGpuXlaVersion = 2;
inline constexpr int64_t kXlaGpuStablehloCurrentVersion[] = {1, 20, 0};
inline constexpr int64_t kXlaGpuStablehloMinimumVersion[] = {0, 9, 0};

// The environment variable PluginSearch() reads first.
inline constexpr char kPluginPathEnv[] = "PJRTKIT_XLA_GPU_PLUGIN";

static_assert(CheckPluginFactory<XlaGpuFactory>(), "XlaGpuFactory");

}  // namespace xla_gpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_FACTORY_H_
