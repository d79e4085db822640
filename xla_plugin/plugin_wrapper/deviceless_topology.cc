#include "xla_plugin/plugin_wrapper/deviceless_topology.h"

#include <utility>

#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/hlo_id_check.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

namespace pjrtkit {
namespace plugin_wrapper {

std::unique_ptr<DevicelessTopology> DevicelessTopology::Create(
    std::shared_ptr<InnerTopology> inner, std::shared_ptr<const DevicePolicy> policy) {
  std::vector<DeviceDescription> devices;
  devices.reserve(inner->devices().size());
  for (const InnerDeviceInfo& info : inner->devices()) {
    devices.push_back(policy->Describe(info.id, info));
  }
  AttributeMap attributes = inner->attributes();
  attributes["device_count"] = static_cast<int64_t>(devices.size());
  return std::unique_ptr<DevicelessTopology>(new DevicelessTopology(
      std::move(inner), std::move(policy), std::move(devices), std::move(attributes)));
}

DevicelessTopology::DevicelessTopology(std::shared_ptr<InnerTopology> inner,
                                       std::shared_ptr<const DevicePolicy> policy,
                                       std::vector<DeviceDescription> devices,
                                       AttributeMap attributes)
    : Topology(kPlatformName, PlatformVersion(policy->backend(), inner->platform_version()),
               std::move(devices), std::move(attributes)),
      inner_(std::move(inner)),
      policy_(std::move(policy)) {}

NativeHandle DevicelessTopology::native_handle() const {
  return {inner_->api().api(), inner_->get()};
}

StatusOr<std::vector<int>> DevicelessTopology::MemorySpaceKindIds() const {
  return inner_->MemorySpaceKindIds();
}

StatusOr<std::string> DevicelessTopology::CanonicalShapeForMemorySpace(
    int kind_id, ElementType type, const std::vector<int64_t>& dims,
    const std::optional<MemoryLayout>& layout) const {
  return inner_->CanonicalShapeForMemorySpace(kind_id, type, dims, layout);
}

StatusOr<std::string> DevicelessTopology::PrepareCompileOptions(
    const std::string& compile_options) const {
  return NormalizeCompileOptions(compile_options, device_count());
}

StatusOr<std::shared_ptr<Executable>> DevicelessTopology::Compile(
    const Program& program, const std::string& compile_options, Client* /*client*/) const {
  constexpr const char* kWhat = "PJRT_Compile";
  if (program.format.empty()) {
    return InvalidArgument(std::string(kWhat) + ": the program has no format (\"mlir\" or "
                           "\"hlo\")");
  }
  PJRTKIT_RETURN_IF_ERROR(HloIdCheck::Check(program, kWhat));
  PJRTKIT_ASSIGN_OR_RETURN(std::string options,
                           NormalizeCompileOptions(compile_options, device_count()));
  PJRTKIT_ASSIGN_OR_RETURN(PJRT_Executable * inner, inner_->Compile(program, options));
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<WrappedExecutable> executable,
      WrappedExecutable::FromCompiled(inner_->shared_api(), policy_, device_count(),
                                      std::shared_ptr<const void>(inner_), inner));
  executable->RecordCompileOptions(compile_options);
  return std::shared_ptr<Executable>(std::move(executable));
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
