#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

#include <iterator>
#include <optional>
#include <utility>

#include "xla_plugin/devices/xla_cpu/device_model.h"
#include "xla_plugin/devices/xla_cpu/inner_api.h"
#include "xla_plugin/devices/xla_cpu/inner_log_level.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_client.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_topology.h"

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
       "absolute path of OpenXLA's XLA:CPU PJRT plugin, xla_cpu_pjrt.so (required)"},
      {kHostBufferCacheOption,
       AttributeValue(int64_t{XlaCpuClient::kDefaultHostBufferCacheBytes >> 20}),
       "MiB of host memory kept for reuse by host-to-device copies, >= 0 (default 1024; 0: off)"},
  };
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

StatusOr<std::unique_ptr<Client>> XlaCpuFactory::CreateClient(const AttributeMap& options) {
  int device_count = 0;
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, ParseOptions(options, &device_count));
  const std::string path = parsed.GetString(kPluginPathOption);
  if (path.empty()) {
    return FailedPrecondition("create option '" + std::string(kPluginPathOption) +
                              "' is required: the absolute path of OpenXLA's XLA:CPU PJRT plugin "
                              "(xla_cpu_pjrt.so, from the xla-cpu-pjrt wheel)");
  }
  const int64_t cache_mib = parsed.GetInt(kHostBufferCacheOption);
  if (cache_mib < 0 || cache_mib > (int64_t{1} << 24)) {
    return InvalidArgument("create option '" + std::string(kHostBufferCacheOption) +
                           "' must be in [0, 16777216] (MiB), got " + std::to_string(cache_mib));
  }
  // XLA:CPU reads its log threshold at its first log message, which it writes while it creates
  // its client: quiet unless the user chose a level (see inner_log_level.h).
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<InnerLogLevel> log_level,
                           InnerLogLevel::ForThisProcess());
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<InnerApi> inner,
                           InnerApi::Load(path, kPluginPathOption));
  PJRTKIT_ASSIGN_OR_RETURN(
      std::unique_ptr<XlaCpuClient> client,
      XlaCpuClient::Create(std::move(inner), device_count, static_cast<size_t>(cache_mib) << 20));
  return std::unique_ptr<Client>(std::move(client));
}

StatusOr<std::unique_ptr<Topology>> XlaCpuFactory::CreateTopology(const std::string& name,
                                                                  const AttributeMap& options) {
  int device_count = 0;
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, ParseOptions(options, &device_count));
  return std::unique_ptr<Topology>(
      XlaCpuTopology::Create(device_count, parsed.GetString(kPluginPathOption)));
}

}  // namespace xla_cpu
}  // namespace pjrtkit
