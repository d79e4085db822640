#include "xla_plugin/devices/selection/pjrtkit_factory.h"

#include <utility>

#include "xla_plugin/devices/selection/process_device.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"

namespace pjrtkit {
namespace selection {

Status PjrtkitFactory::Initialize() {
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().kind().status());
  PJRTKIT_RETURN_IF_ERROR(xla_cpu::XlaCpuFactory::Initialize());
  return xla_gpu::XlaGpuFactory::Initialize();
}

AttributeMap PjrtkitFactory::AttributesOf(DeviceKind kind, const inner::InnerApi* inner) {
  AttributeMap attributes = kind == DeviceKind::kXlaGpu
                                ? xla_gpu::XlaGpuFactory::PluginAttributes()
                                : xla_cpu::XlaCpuFactory::PluginAttributes();
  if (inner != nullptr) {
    StatusOr<AttributeMap> own = inner->PluginAttributes();
    if (own.ok()) {
      for (const char* name :
           {"xla_version", "stablehlo_current_version", "stablehlo_minimum_version"}) {
        auto it = own->find(name);
        if (it != own->end() && it->second.index() == attributes[name].index()) {
          attributes[name] = it->second;
        }
      }
    }
  }
  attributes["pjrtkit_device"] = std::string(DeviceChoice::Name(kind));
  return attributes;
}

AttributeMap PjrtkitFactory::PluginAttributes() {
  const ProcessDevice& process = ProcessDevice::Get();
  return AttributesOf(process.kind().ok() ? *process.kind() : DeviceKind::kXlaCpu,
                      process.inner().get());
}

const void* PjrtkitFactory::ForwardedPluginApi() {
  const ProcessDevice& process = ProcessDevice::Get();
  return process.inner() == nullptr ? nullptr : process.inner()->api();
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
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().CheckSame(kind, "a client"));
  return CreateClientOf(kind, options, job);
}

StatusOr<std::unique_ptr<Client>> PjrtkitFactory::CreateClientOf(DeviceKind kind,
                                                                const AttributeMap& options,
                                                                const MultiProcess& job) {
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap rest, DeviceOptions(options, kind));
  if (kind == DeviceKind::kXlaGpu) return xla_gpu::XlaGpuFactory::CreateClient(rest, job);
  return xla_cpu::XlaCpuFactory::CreateClient(rest, job);
}

StatusOr<std::unique_ptr<Topology>> PjrtkitFactory::CreateTopology(const std::string& name,
                                                                   const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(DeviceKind kind,
                           DeviceChoice::Choose(options, DeviceChoice::FromProcess()));
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().CheckSame(kind, "a topology"));
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap rest, DeviceOptions(options, kind));
  if (kind == DeviceKind::kXlaGpu) return xla_gpu::XlaGpuFactory::CreateTopology(name, rest);
  return xla_cpu::XlaCpuFactory::CreateTopology(name, rest);
}

}  // namespace selection
}  // namespace pjrtkit
