#include "xla_plugin/devices/selection/pjrtkit_factory.h"

#include <utility>

#include "xla_plugin/devices/selection/process_device.h"

namespace pjrtkit {
namespace selection {

Status PjrtkitFactory::Initialize() {
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().kind().status());
  for (const DeviceEntry& device : registry::Registry::Devices()) {
    PJRTKIT_RETURN_IF_ERROR(device.initialize());
  }
  return OkStatus();
}

AttributeMap PjrtkitFactory::AttributesOf(const DeviceEntry& kind,
                                          const plugin_wrapper::InnerApi* inner) {
  AttributeMap attributes = kind.plugin_attributes();
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
  attributes["pjrtkit_device"] = kind.name;
  attributes["pjrtkit_devices"] = registry::Registry::ToJson();
  return attributes;
}

AttributeMap PjrtkitFactory::PluginAttributes() {
  const ProcessDevice& process = ProcessDevice::Get();
  return AttributesOf(process.kind().ok() ? **process.kind() : registry::Registry::Devices().front(),
                      process.inner().get());
}

const void* PjrtkitFactory::ForwardedPluginApi() {
  const ProcessDevice& process = ProcessDevice::Get();
  return process.inner() == nullptr ? nullptr : process.inner()->api();
}

StatusOr<AttributeMap> PjrtkitFactory::DeviceOptions(const AttributeMap& options,
                                                     const DeviceEntry& kind) {
  std::vector<OptionSpec> specs = {DeviceChoice::DeviceOptionSpec()};
  const std::vector<OptionSpec> device = kind.option_specs();
  specs.insert(specs.end(), device.begin(), device.end());
  PJRTKIT_RETURN_IF_ERROR(Options::Parse(options, specs).status());
  AttributeMap rest = options;
  rest.erase(kDeviceOption);
  return rest;
}

StatusOr<std::unique_ptr<Client>> PjrtkitFactory::CreateClient(const AttributeMap& options,
                                                              const MultiProcess& job) {
  PJRTKIT_ASSIGN_OR_RETURN(const DeviceEntry* kind,
                           DeviceChoice::Choose(options, DeviceChoice::FromProcess()));
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().CheckSame(*kind, "a client"));
  return CreateClientOf(*kind, options, job);
}

StatusOr<std::unique_ptr<Client>> PjrtkitFactory::CreateClientOf(const DeviceEntry& kind,
                                                                const AttributeMap& options,
                                                                const MultiProcess& job) {
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap rest, DeviceOptions(options, kind));
  return kind.create_client(rest, job);
}

StatusOr<std::unique_ptr<Topology>> PjrtkitFactory::CreateTopology(const std::string& name,
                                                                   const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(const DeviceEntry* kind,
                           DeviceChoice::Choose(options, DeviceChoice::FromProcess()));
  PJRTKIT_RETURN_IF_ERROR(ProcessDevice::Get().CheckSame(*kind, "a topology"));
  AttributeMap rest = options;
  rest.erase(kDeviceOption);
  return kind->create_topology(name, rest);
}

}  // namespace selection
}  // namespace pjrtkit
