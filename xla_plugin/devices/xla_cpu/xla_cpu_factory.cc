#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

#include <cstdlib>
#include <iterator>
#include <optional>
#include <utility>

#include "xla_plugin/devices/xla_cpu/builtin_ffi_handlers.h"
#include "xla_plugin/devices/xla_cpu/device_model.h"
#include "xla_plugin/devices/xla_cpu/process_exchange.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_ffi.h"
#include "xla_plugin/plugin_wrapper/inner_log_level.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"
#include "xla_plugin/plugin_wrapper/wrapped_topology.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

// Parses `options` and checks device_count's range.
StatusOr<Options> ParseOptions(const AttributeMap& options, int* device_count) {
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, Options::Parse(options, XlaCpuFactory::OptionSpecs()));
  const int64_t count = parsed.GetInt(kDeviceCountOption);
  if (count < kMinDeviceCount || count > kMaxDeviceCount) {
    return InvalidArgument("create option '" + std::string(kDeviceCountOption) + "' must be in [" +
                           std::to_string(kMinDeviceCount) + ", " +
                           std::to_string(kMaxDeviceCount) + "], got " + std::to_string(count));
  }
  *device_count = static_cast<int>(count);
  return parsed;
}

}  // namespace

std::vector<OptionSpec> XlaCpuFactory::OptionSpecs() {
  return {
      {kDeviceCountOption, AttributeValue(int64_t{kDefaultDeviceCount}),
       "number of devices, 1..256 (default 4)"},
      {kPluginPathOption, AttributeValue(std::string()),
       "absolute path of OpenXLA's XLA:CPU PJRT plugin, xla_cpu_pjrt.so (default: "
       "$PJRTKIT_XLA_CPU_PLUGIN, then the xla-cpu-pjrt package installed beside pjrtkit)"},
      {kHostBufferCacheOption, AttributeValue(int64_t{kDefaultHostBufferCacheMib}),
       "MiB of host memory kept for reuse by host-to-device copies, >= 0 (default 512; 0: off)"},
      {kJoinTimeoutOption, AttributeValue(int64_t{120}),
       "seconds a multi-process client waits for the other processes, 1..86400 (default 120)"},
  };
}

LibrarySearch XlaCpuFactory::PluginSearch() {
  return {kPluginPathEnv, {"xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"}};
}

Status XlaCpuFactory::Initialize() { return OkStatus(); }

AttributeMap XlaCpuFactory::PluginAttributes() {
  AttributeMap attributes;
  attributes["xla_version"] = kXlaCpuXlaVersion;
  attributes["stablehlo_current_version"] =
      std::vector<int64_t>(std::begin(kXlaCpuStablehloCurrentVersion),
                           std::end(kXlaCpuStablehloCurrentVersion));
  attributes["stablehlo_minimum_version"] =
      std::vector<int64_t>(std::begin(kXlaCpuStablehloMinimumVersion),
                           std::end(kXlaCpuStablehloMinimumVersion));
  attributes["pjrtkit_version"] = std::string(kPjrtkitVersion);
  return attributes;
}

StatusOr<std::unique_ptr<Client>> XlaCpuFactory::CreateClient(const AttributeMap& options,
                                                             const MultiProcess& job) {
  return CreateClientWith(options, job, std::make_shared<const XlaCpuPolicy>());
}

StatusOr<std::unique_ptr<Client>> XlaCpuFactory::CreateClientWith(
    const AttributeMap& options, const MultiProcess& job,
    std::shared_ptr<const XlaCpuPolicy> policy) {
  int device_count = 0;
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, ParseOptions(options, &device_count));
  const int64_t join_timeout_s = parsed.GetInt(kJoinTimeoutOption);
  if (join_timeout_s < 1 || join_timeout_s > 86400) {
    return InvalidArgument("create option '" + std::string(kJoinTimeoutOption) +
                           "' must be in [1, 86400] (seconds), got " +
                           std::to_string(join_timeout_s));
  }
  std::string path = parsed.GetString(kPluginPathOption);
  std::string path_source = "create option '" + std::string(kPluginPathOption) + "'";
  if (path.empty()) {
    StatusOr<LocatedLibrary> located = LibraryLocator::LocateFromProcess(PluginSearch());
    if (!located.ok()) {
      return FailedPrecondition(
          "create option '" + std::string(kPluginPathOption) +
          "' is required: the absolute path of OpenXLA's XLA:CPU PJRT plugin (xla_cpu_pjrt.so, "
          "from the xla-cpu-pjrt wheel), unless pjrtkit finds it (" + located.status().message() +
          ")");
    }
    path = located->path;
    path_source = located->how;
  }
  const int64_t cache_mib = parsed.GetInt(kHostBufferCacheOption);
  if (cache_mib < 0 || cache_mib > (int64_t{1} << 24)) {
    return InvalidArgument("create option '" + std::string(kHostBufferCacheOption) +
                           "' must be in [0, 16777216] (MiB), got " + std::to_string(cache_mib));
  }
  // XLA:CPU reads its log threshold at its first log message, which it writes while it creates
  // its client: quiet unless the user chose a level (see inner_log_level.h).
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<plugin_wrapper::InnerLogLevel> log_level,
                           plugin_wrapper::InnerLogLevel::ForThisProcess(policy->inner_plugin()));
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<plugin_wrapper::InnerApi> api,
      plugin_wrapper::InnerApi::Load(path, path_source, policy->inner_plugin()));
  const plugin_wrapper::FfiPlatform ffi_platform = policy->ffi_platform();
  // XLA:CPU ignores node options and the store: pjrtkit places every process's devices.
  plugin_wrapper::ProcessPlacement placement;
  int inner_device_count = device_count;
  if (job.is_multi_process()) {
    PJRTKIT_ASSIGN_OR_RETURN(
        std::vector<int> counts,
        ProcessExchange::Run(job, device_count, std::string(kPjrtkitVersion),
                             static_cast<int>(join_timeout_s * 1000)));
    placement.process_index = job.process_index();
    for (size_t process = 0; process < counts.size(); ++process) {
      placement.device_process.insert(placement.device_process.end(), counts[process],
                                      static_cast<int>(process));
    }
    inner_device_count = static_cast<int>(placement.device_process.size());
    if (inner_device_count > kMaxDeviceCount) {
      return InvalidArgument("pjrtkit (" + policy->backend() + "): the job has " +
                             std::to_string(inner_device_count) + " devices in all, more than " +
                             std::to_string(kMaxDeviceCount));
    }
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<plugin_wrapper::WrappedClient> client,
                           plugin_wrapper::WrappedClient::Create(
                               std::move(api), std::move(policy), inner_device_count,
                               static_cast<size_t>(cache_mib) << 20, std::move(placement)));
  // Handlers jaxlib keeps inside its own XLA (dce_sink). XLA:CPU's FFI registry is process-wide,
  // so this only adds them once; a plugin without the FFI extension runs no FFI handlers at all.
  StatusOr<plugin_wrapper::InnerFfi> ffi = plugin_wrapper::InnerFfi::Find(client->shared_inner());
  if (ffi.ok()) PJRTKIT_RETURN_IF_ERROR(BuiltinFfiHandlers::RegisterAll(*ffi, ffi_platform));
  return std::unique_ptr<Client>(std::move(client));
}

StatusOr<std::unique_ptr<Topology>> XlaCpuFactory::CreateTopology(const std::string& name,
                                                                  const AttributeMap& options) {
  return CreateTopologyWith(name, options, std::make_shared<const XlaCpuPolicy>());
}

StatusOr<std::unique_ptr<Topology>> XlaCpuFactory::CreateTopologyWith(
    const std::string& name, const AttributeMap& options,
    std::shared_ptr<const XlaCpuPolicy> policy) {
  int device_count = 0;
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, ParseOptions(options, &device_count));
  std::string path = parsed.GetString(kPluginPathOption);
  if (path.empty()) {
    // Nothing is loaded here; without a path only a compile with a client offered works.
    StatusOr<LocatedLibrary> located = LibraryLocator::LocateFromProcess(PluginSearch());
    if (located.ok()) path = located->path;
  }
  return std::unique_ptr<Topology>(
      plugin_wrapper::WrappedTopology::Create(std::move(policy), device_count, std::move(path)));
}

}  // namespace xla_cpu
}  // namespace pjrtkit
