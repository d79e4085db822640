#include "xla_plugin/devices/xla_cpu/xla_cpu_topology.h"

#include <utility>
#include <vector>

#include "xla_plugin/devices/xla_cpu/device_model.h"
#include "xla_plugin/devices/xla_cpu/inner_layouts.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_client.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_executable.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

// Descriptions of devices 0..device_count-1.
std::vector<DeviceDescription> Descriptions(int device_count) {
  std::vector<DeviceDescription> devices;
  devices.reserve(device_count);
  for (int id = 0; id < device_count; ++id) devices.push_back(MakeDeviceDescription(id));
  return devices;
}

// The topology attributes: {"device_count": device_count}.
AttributeMap Attributes(int device_count) {
  AttributeMap attributes;
  attributes["device_count"] = int64_t{device_count};
  return attributes;
}

}  // namespace

std::unique_ptr<XlaCpuTopology> XlaCpuTopology::Create(int device_count, std::string plugin_path) {
  return std::unique_ptr<XlaCpuTopology>(new XlaCpuTopology(
      device_count, PlatformVersion(""), std::move(plugin_path), /*compiler=*/nullptr));
}

std::unique_ptr<XlaCpuTopology> XlaCpuTopology::OfClient(std::shared_ptr<InnerClient> compiler,
                                                         const std::string& platform_version) {
  const int device_count = compiler->device_count();
  std::string plugin_path = compiler->api().path();  // Read before `compiler` is moved.
  return std::unique_ptr<XlaCpuTopology>(new XlaCpuTopology(
      device_count, platform_version, std::move(plugin_path), std::move(compiler)));
}

XlaCpuTopology::XlaCpuTopology(int device_count, const std::string& platform_version,
                               std::string plugin_path, std::shared_ptr<InnerClient> compiler)
    : Topology(kPlatformName, platform_version, Descriptions(device_count),
               Attributes(device_count)),
      plugin_path_(std::move(plugin_path)),
      compiler_(std::move(compiler)) {}

std::shared_ptr<InnerClient> XlaCpuTopology::compiler() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiler_;
}

StatusOr<MemoryLayout> XlaCpuTopology::DefaultLayout(ElementType type,
                                                     const std::vector<int64_t>& dims) const {
  std::shared_ptr<InnerClient> inner = compiler();
  if (inner == nullptr) return Topology::DefaultLayout(type, dims);
  PJRTKIT_ASSIGN_OR_RETURN(InnerLayouts layouts, InnerLayouts::Find(inner->shared_api()));
  return layouts.DefaultLayout(inner->get(), type, dims);
}

StatusOr<std::shared_ptr<InnerClient>> XlaCpuTopology::CompilerFor(Client* client) const {
  auto* offered = dynamic_cast<XlaCpuClient*>(client);
  if (offered != nullptr &&
      offered->devices().size() == static_cast<size_t>(device_count())) {
    return offered->shared_inner_client();  // Same devices: compile through it, for free.
  }
  std::lock_guard<std::mutex> lock(mu_);  // One compiler per topology, even under races.
  if (compiler_ != nullptr) return compiler_;
  std::shared_ptr<InnerApi> api;
  if (offered != nullptr) {
    api = offered->shared_inner();  // The library the client already loaded.
  } else if (!plugin_path_.empty()) {
    PJRTKIT_ASSIGN_OR_RETURN(api, InnerApi::Load(plugin_path_, kPluginPathOption));
  } else {
    return FailedPrecondition(
        "PJRT_Compile: this pjrtkit topology was created without the create option '" +
        std::string(kPluginPathOption) +
        "' and no pjrtkit client was given: compiling for it needs OpenXLA's XLA:CPU plugin "
        "(pass the absolute path of xla_cpu_pjrt.so as '" + std::string(kPluginPathOption) +
        "' to PJRT_TopologyDescription_Create, or a pjrtkit client to PJRT_Compile)");
  }
  PJRTKIT_ASSIGN_OR_RETURN(compiler_, InnerClient::Create(std::move(api), device_count()));
  return compiler_;
}

StatusOr<std::shared_ptr<Executable>> XlaCpuTopology::Compile(const Program& program,
                                                              const std::string& compile_options,
                                                              Client* client) const {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<InnerClient> compiler, CompilerFor(client));
  // XLA:CPU compiles and loads in one step; the executable keeps the (cheap) loaded part, which
  // its inner executable points into.
  PJRTKIT_ASSIGN_OR_RETURN(InnerClient::LoadedPtr loaded,
                           compiler->Compile(program, compile_options, "PJRT_Compile"));
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<XlaCpuExecutable> executable,
                           XlaCpuExecutable::FromLoaded(std::move(compiler), std::move(loaded)));
  return std::shared_ptr<Executable>(std::move(executable));
}

}  // namespace xla_cpu
}  // namespace pjrtkit
