#include "xla_plugin/devices/selection/pjrtkit_factory.h"

#include <algorithm>
#include <utility>

#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"

namespace pjrtkit {
namespace selection {
namespace {

// The int64 list attribute `name` of `attributes` (empty when absent or of another type).
std::vector<int64_t> IntList(const AttributeMap& attributes, const std::string& name) {
  auto it = attributes.find(name);
  if (it == attributes.end() || !std::holds_alternative<std::vector<int64_t>>(it->second)) {
    return {};
  }
  return std::get<std::vector<int64_t>>(it->second);
}

}  // namespace

Status PjrtkitFactory::Initialize() {
  PJRTKIT_RETURN_IF_ERROR(xla_cpu::XlaCpuFactory::Initialize());
  return xla_gpu::XlaGpuFactory::Initialize();
}

AttributeMap PjrtkitFactory::PluginAttributes() {
  const AttributeMap cpu = xla_cpu::XlaCpuFactory::PluginAttributes();
  const AttributeMap gpu = xla_gpu::XlaGpuFactory::PluginAttributes();
  AttributeMap attributes = cpu;  // xla_version (2 for both) and pjrtkit_version.
  const std::vector<int64_t> cpu_current = IntList(cpu, "stablehlo_current_version");
  const std::vector<int64_t> gpu_current = IntList(gpu, "stablehlo_current_version");
  attributes["stablehlo_current_version"] = std::min(cpu_current, gpu_current);
  const std::vector<int64_t> cpu_minimum = IntList(cpu, "stablehlo_minimum_version");
  const std::vector<int64_t> gpu_minimum = IntList(gpu, "stablehlo_minimum_version");
  attributes["stablehlo_minimum_version"] = std::max(cpu_minimum, gpu_minimum);
  return attributes;
}

StatusOr<AttributeMap> PjrtkitFactory::DeviceOptions(const AttributeMap& options,
                                                     DeviceKind kind) {
  std::vector<OptionSpec> specs = {DeviceChoice::DeviceOptionSpec()};
  const std::vector<OptionSpec> device = kind == DeviceKind::kXlaGpu
                                             ? xla_gpu::XlaGpuFactory::OptionSpecs()
                                             : xla_cpu::XlaCpuFactory::OptionSpecs();
  specs.insert(specs.end(), device.begin(), device.end());
  PJRTKIT_RETURN_IF_ERROR(Options::Parse(options, specs).status());
  AttributeMap rest = options;
  rest.erase(kDeviceOption);
  return rest;
}

StatusOr<std::unique_ptr<Client>> PjrtkitFactory::CreateClient(const AttributeMap& options,
                                                              const MultiProcess& job) {
  PJRTKIT_ASSIGN_OR_RETURN(DeviceKind kind,
                           DeviceChoice::Choose(options, DeviceChoice::FromProcess()));
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap rest, DeviceOptions(options, kind));
  if (kind == DeviceKind::kXlaGpu) return xla_gpu::XlaGpuFactory::CreateClient(rest, job);
  return xla_cpu::XlaCpuFactory::CreateClient(rest, job);
}

StatusOr<std::unique_ptr<Topology>> PjrtkitFactory::CreateTopology(const std::string& name,
                                                                   const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(DeviceKind kind,
                           DeviceChoice::Choose(options, DeviceChoice::FromProcess()));
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap rest, DeviceOptions(options, kind));
  if (kind == DeviceKind::kXlaGpu) return xla_gpu::XlaGpuFactory::CreateTopology(name, rest);
  return xla_cpu::XlaCpuFactory::CreateTopology(name, rest);
}

}  // namespace selection
}  // namespace pjrtkit
