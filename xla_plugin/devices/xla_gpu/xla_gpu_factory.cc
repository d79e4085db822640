#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"

#include <iterator>
#include <optional>
#include <utility>

#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_policy.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_topology_options.h"
#include "xla_plugin/plugin_wrapper/deviceless_topology.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_log_level.h"
#include "xla_plugin/plugin_wrapper/inner_topology.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

// Loads the CUDA plugin from `given` (create option xla_gpu_plugin_path) or, when it is empty,
// from where XlaGpuFactory::PluginSearch() finds it.
StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> LoadPlugin(const std::string& given,
                                                               const XlaGpuPolicy& policy) {
  std::string path = given;
  std::string path_source = "create option '" + std::string(kPluginPathOption) + "'";
  if (path.empty()) {
    StatusOr<LocatedLibrary> located =
        LibraryLocator::LocateFromProcess(XlaGpuFactory::PluginSearch());
    if (!located.ok()) {
      return FailedPrecondition(
          "the xla_gpu device needs OpenXLA's CUDA PJRT plugin (xla_cuda_plugin.so, from the "
          "jax-cuda13-pjrt or jax-cuda12-pjrt wheel): pass its absolute path as create option '" +
          std::string(kPluginPathOption) + "' or install it beside pjrtkit (" +
          located.status().message() + ")");
    }
    path = located->path;
    path_source = located->how;
  }
  return plugin_wrapper::InnerApi::Load(path, path_source, policy.inner_plugin());
}

}  // namespace

std::vector<OptionSpec> XlaGpuFactory::OptionSpecs() { return XlaGpuOptions::Specs(); }

LibrarySearch XlaGpuFactory::PluginSearch() {
  return {kPluginPathEnv,
          {"jax_plugins/xla_cuda13/xla_cuda_plugin.so",
           "jax_plugins/xla_cuda12/xla_cuda_plugin.so"}};
}

Status XlaGpuFactory::Initialize() { return OkStatus(); }

AttributeMap XlaGpuFactory::PluginAttributes() {
  AttributeMap attributes;
  attributes["xla_version"] = kXlaGpuXlaVersion;
  attributes["stablehlo_current_version"] =
      std::vector<int64_t>(std::begin(kXlaGpuStablehloCurrentVersion),
                           std::end(kXlaGpuStablehloCurrentVersion));
  attributes["stablehlo_minimum_version"] =
      std::vector<int64_t>(std::begin(kXlaGpuStablehloMinimumVersion),
                           std::end(kXlaGpuStablehloMinimumVersion));
  attributes["pjrtkit_version"] = std::string(plugin_wrapper::kPjrtkitVersion);
  return attributes;
}

StatusOr<std::unique_ptr<Client>> XlaGpuFactory::CreateClient(const AttributeMap& options,
                                                             const MultiProcess& job) {
  PJRTKIT_ASSIGN_OR_RETURN(XlaGpuOptions parsed, XlaGpuOptions::Parse(options));
  auto policy = std::make_shared<const XlaGpuPolicy>(parsed.inner_options());
  // XLA:GPU reads its log threshold at its first log message (while it creates the client or
  // topology): quiet unless the user chose.
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<plugin_wrapper::InnerLogLevel> log_level,
                           plugin_wrapper::InnerLogLevel::ForThisProcess(policy->inner_plugin()));
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<plugin_wrapper::InnerApi> api,
                           LoadPlugin(parsed.plugin_path(), *policy));
  // No host buffer pool: XLA:GPU copies host data to the GPU itself (staged through its own
  // pinned buffers), so a pooled host copy would only add a memcpy.
  // Multi-process: the CUDA plugin gets node_id / num_nodes and the framework's store, and
  // builds the job itself (global devices, NCCL communicators across processes); each device's
  // process and addressability are what it reports.
  plugin_wrapper::ProcessPlacement placement;
  placement.forward = job;
  PJRTKIT_ASSIGN_OR_RETURN(
      std::unique_ptr<plugin_wrapper::WrappedClient> client,
      plugin_wrapper::WrappedClient::Create(std::move(api), std::move(policy),
                                            /*device_count=*/0,
                                            /*host_buffer_cache_bytes=*/0, std::move(placement)));
  return std::unique_ptr<Client>(std::move(client));
}

StatusOr<std::unique_ptr<Topology>> XlaGpuFactory::CreateTopology(const std::string& name,
                                                                  const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(XlaGpuTopologyOptions parsed, XlaGpuTopologyOptions::Parse(options));
  // The policy describes devices; its client options are not used by a topology.
  auto policy = std::make_shared<const XlaGpuPolicy>(AttributeMap());
  // XLA:GPU reads its log threshold at its first log message (while it creates the client or
  // topology): quiet unless the user chose.
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<plugin_wrapper::InnerLogLevel> log_level,
                           plugin_wrapper::InnerLogLevel::ForThisProcess(policy->inner_plugin()));
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<plugin_wrapper::InnerApi> api,
                           LoadPlugin(parsed.plugin_path(), *policy));
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<plugin_wrapper::InnerTopology> inner,
      plugin_wrapper::InnerTopology::Create(std::move(api), name, parsed.inner_options()));
  return std::unique_ptr<Topology>(
      plugin_wrapper::DevicelessTopology::Create(std::move(inner), std::move(policy)));
}

}  // namespace xla_gpu
}  // namespace pjrtkit
