#include "xla_plugin/plugin_wrapper/wrapped_topology.h"

#include <utility>
#include <vector>

#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/inner_layout.h"
#include "xla_plugin/plugin_wrapper/inner_layouts.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// Descriptions of devices 0..device_count-1 made by `policy` without the inner plugin.
std::vector<DeviceDescription> Descriptions(const DevicePolicy& policy, int device_count) {
  std::vector<DeviceDescription> devices;
  devices.reserve(device_count);
  for (int id = 0; id < device_count; ++id) {
    InnerDeviceInfo info;
    info.id = id;
    devices.push_back(policy.Describe(id, info));
  }
  return devices;
}

// The topology attributes: {"device_count": device_count}.
AttributeMap Attributes(size_t device_count) {
  AttributeMap attributes;
  attributes["device_count"] = static_cast<int64_t>(device_count);
  return attributes;
}

// A client's topology attributes: the inner client's topology's (XLA:GPU: target_config, the
// GPU's description that JAX's deviceless compilation passes back to
// PJRT_TopologyDescription_Create, and host_target_machine_options), and device_count. An inner
// plugin that cannot say (no PJRT_Client_TopologyDescription, an error) leaves device_count
// alone.
AttributeMap ClientAttributes(const InnerClient& client, size_t device_count) {
  AttributeMap attributes;
  PJRTKIT_INNER_ARGS(PJRT_Client_TopologyDescription, args);
  args.client = client.get();
  if (PJRTKIT_INNER_CALL(client.api(), PJRT_Client_TopologyDescription, &args).ok() &&
      args.topology != nullptr) {
    PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_Attributes, attribute_args);
    attribute_args.topology = args.topology;
    if (PJRTKIT_INNER_CALL(client.api(), PJRT_TopologyDescription_Attributes, &attribute_args)
            .ok()) {
      StatusOr<AttributeMap> inner = InnerApi::ToAttributeMap(attribute_args.attributes,
                                                              attribute_args.num_attributes);
      if (inner.ok()) attributes = std::move(inner).value();
    }
  }
  attributes["device_count"] = static_cast<int64_t>(device_count);
  return attributes;
}

}  // namespace

std::unique_ptr<WrappedTopology> WrappedTopology::Create(std::shared_ptr<const DevicePolicy> policy,
                                                         int device_count,
                                                         std::string plugin_path) {
  std::vector<DeviceDescription> devices = Descriptions(*policy, device_count);
  const std::string version = PlatformVersion(policy->backend(), "");
  AttributeMap attributes = Attributes(devices.size());
  return std::unique_ptr<WrappedTopology>(new WrappedTopology(
      std::move(policy), std::move(devices), std::move(attributes), version,
      std::move(plugin_path), /*compiler=*/nullptr));
}

std::unique_ptr<WrappedTopology> WrappedTopology::OfClient(std::shared_ptr<InnerClient> compiler,
                                                           const std::string& platform_version,
                                                           std::vector<DeviceDescription> devices) {
  std::shared_ptr<const DevicePolicy> policy = compiler->shared_policy();
  std::string plugin_path = compiler->api().path();  // Read before `compiler` is moved.
  AttributeMap attributes = ClientAttributes(*compiler, devices.size());
  return std::unique_ptr<WrappedTopology>(new WrappedTopology(
      std::move(policy), std::move(devices), std::move(attributes), platform_version,
      std::move(plugin_path), std::move(compiler)));
}

WrappedTopology::WrappedTopology(std::shared_ptr<const DevicePolicy> policy,
                                 std::vector<DeviceDescription> devices, AttributeMap attributes,
                                 const std::string& platform_version, std::string plugin_path,
                                 std::shared_ptr<InnerClient> compiler)
    : Topology(kPlatformName, platform_version, devices, std::move(attributes)),
      policy_(std::move(policy)),
      plugin_path_(std::move(plugin_path)),
      compiler_(std::move(compiler)) {}

std::shared_ptr<InnerClient> WrappedTopology::compiler() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiler_;
}

StatusOr<MemoryLayout> WrappedTopology::DefaultLayout(ElementType type,
                                                      const std::vector<int64_t>& dims) const {
  std::shared_ptr<InnerClient> inner = compiler();
  if (inner == nullptr) return Topology::DefaultLayout(type, dims);
  PJRTKIT_ASSIGN_OR_RETURN(InnerLayouts layouts, InnerLayouts::Find(inner->shared_api()));
  return layouts.DefaultLayout(inner->get(), type, dims);
}

StatusOr<std::shared_ptr<InnerClient>> WrappedTopology::CompilerFor(Client* client) const {
  auto* offered = dynamic_cast<WrappedClient*>(client);
  if (offered != nullptr && offered->policy().backend() != policy_->backend()) {
    offered = nullptr;  // Another device's client cannot compile for this topology.
  }
  if (offered != nullptr &&
      offered->devices().size() == static_cast<size_t>(device_count())) {
    return offered->shared_inner_client();  // Same devices: compile through it, for free.
  }
  std::lock_guard<std::mutex> lock(mu_);  // One compiler per topology, even under races.
  if (compiler_ != nullptr) return compiler_;
  const InnerPluginName& plugin = policy_->inner_plugin();
  std::shared_ptr<InnerApi> api;
  if (offered != nullptr) {
    api = offered->shared_inner();  // The library the client already loaded.
  } else if (!plugin_path_.empty()) {
    PJRTKIT_ASSIGN_OR_RETURN(
        api, InnerApi::Load(plugin_path_, "create option '" + plugin.path_option + "'", plugin));
  } else {
    return FailedPrecondition(
        "PJRT_Compile: this pjrtkit topology was created without the create option '" +
        plugin.path_option + "' and no pjrtkit client was given: compiling for it needs " +
        "OpenXLA's " + plugin.display + " plugin (pass the absolute path of " + plugin.file +
        " as '" + plugin.path_option +
        "' to PJRT_TopologyDescription_Create, or a pjrtkit client to PJRT_Compile)");
  }
  PJRTKIT_ASSIGN_OR_RETURN(compiler_, InnerClient::Create(std::move(api), policy_, device_count()));
  return compiler_;
}

StatusOr<std::shared_ptr<Executable>> WrappedTopology::Compile(const Program& program,
                                                               const std::string& compile_options,
                                                               Client* client) const {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<InnerClient> compiler, CompilerFor(client));
  // XLA:CPU compiles and loads in one step; the executable keeps the (cheap) loaded part, which
  // its inner executable points into.
  PJRTKIT_ASSIGN_OR_RETURN(InnerClient::LoadedPtr loaded,
                           compiler->Compile(program, compile_options, "PJRT_Compile"));
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<WrappedExecutable> executable,
                           WrappedExecutable::FromLoaded(std::move(compiler), std::move(loaded)));
  executable->RecordCompileOptions(compile_options);
  return std::shared_ptr<Executable>(std::move(executable));
}

StatusOr<std::string> WrappedTopology::PrepareCompileOptions(
    const std::string& compile_options) const {
  return NormalizeCompileOptions(compile_options, device_count());
}

NativeHandle WrappedTopology::native_handle() const {
  StatusOr<std::shared_ptr<InnerClient>> client = CompilerFor(nullptr);
  if (!client.ok()) return {};
  PJRTKIT_INNER_ARGS(PJRT_Client_TopologyDescription, args);
  args.client = (*client)->get();
  if (!PJRTKIT_INNER_CALL((*client)->api(), PJRT_Client_TopologyDescription, &args).ok()) {
    return {};
  }
  return {(*client)->api().api(), args.topology};
}

StatusOr<std::pair<std::shared_ptr<InnerClient>, PJRT_TopologyDescription*>>
WrappedTopology::InnerTopology(const char* slot) const {
  std::shared_ptr<InnerClient> client = compiler();
  if (client == nullptr) {
    return Unimplemented(std::string(slot) + ": pjrtkit asks the inner plugin through a client; "
                         "this topology has none yet (a client's topology has, and so has one "
                         "that compiled)");
  }
  PJRTKIT_INNER_ARGS(PJRT_Client_TopologyDescription, args);
  args.client = client->get();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client->api(), PJRT_Client_TopologyDescription, &args));
  return std::make_pair(std::move(client), args.topology);
}

StatusOr<std::vector<int>> WrappedTopology::MemorySpaceKindIds() const {
  PJRTKIT_ASSIGN_OR_RETURN(auto inner,
                           InnerTopology("PJRT_TopologyDescription_GetMemorySpaceKindIds"));
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds, args);
  args.topology = inner.second;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(inner.first->api(),
                                             PJRT_TopologyDescription_GetMemorySpaceKindIds, &args));
  return std::vector<int>(args.memory_space_kind_ids,
                          args.memory_space_kind_ids + args.num_memory_space_kind_ids);
}

StatusOr<std::string> WrappedTopology::CanonicalShapeForMemorySpace(
    int kind_id, ElementType type, const std::vector<int64_t>& dims,
    const std::optional<MemoryLayout>& layout) const {
  PJRTKIT_ASSIGN_OR_RETURN(
      auto inner, InnerTopology("PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace"));
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, args);
  args.topology = inner.second;
  args.memory_space_kind_id = kind_id;
  args.dims = dims.data();
  args.num_dims = dims.size();
  PJRTKIT_ASSIGN_OR_RETURN(args.element_type, inner.first->api().ToInnerType(type));
  std::optional<InnerLayout> inner_layout;
  if (layout.has_value()) args.layout = inner_layout.emplace(*layout).get();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(
      inner.first->api(), PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, &args));
  std::string shape(args.serialized_shape == nullptr ? "" : args.serialized_shape,
                    args.serialized_shape == nullptr ? 0 : args.serialized_shape_size);
  if (args.serialized_shape_deleter != nullptr) args.serialized_shape_deleter(args.serialized_shape);
  return shape;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
