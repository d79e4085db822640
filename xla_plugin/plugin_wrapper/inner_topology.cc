#include "xla_plugin/plugin_wrapper/inner_topology.h"

#include <utility>

#include "xla_plugin/plugin_wrapper/inner_layout.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<std::shared_ptr<InnerTopology>> InnerTopology::Create(std::shared_ptr<InnerApi> api,
                                                               const std::string& name,
                                                               const AttributeMap& options) {
  if (api == nullptr) return Internal("InnerTopology::Create: no inner plugin");
  std::vector<PJRT_NamedValue> values = InnerApi::ToNamedValues(options);
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_Create, args);
  args.topology_name = name.data();
  args.topology_name_size = name.size();
  args.create_options = values.data();
  args.num_options = values.size();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api, PJRT_TopologyDescription_Create, &args));
  if (args.topology == nullptr) {
    return Internal(api->name() + " PJRT_TopologyDescription_Create returned no topology");
  }
  // From here on the topology is owned, so an error below destroys it.
  std::shared_ptr<InnerTopology> topology(new InnerTopology(std::move(api), args.topology));
  PJRTKIT_RETURN_IF_ERROR(topology->Init());
  return topology;
}

InnerTopology::InnerTopology(std::shared_ptr<InnerApi> api, PJRT_TopologyDescription* topology)
    : api_(std::move(api)), topology_(topology) {}

InnerTopology::~InnerTopology() {
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_Destroy, args);
  args.topology = topology_;
  // An error cannot be reported from here; the inner plugin's own tests cover its destroy.
  (void)PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_Destroy, &args);
}

Status InnerTopology::Init() {
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_PlatformName, name_args);
  name_args.topology = topology_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_PlatformName, &name_args));
  platform_name_.assign(name_args.platform_name, name_args.platform_name_size);
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_PlatformVersion, version_args);
  version_args.topology = topology_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_PlatformVersion, &version_args));
  platform_version_.assign(version_args.platform_version, version_args.platform_version_size);
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_Attributes, attribute_args);
  attribute_args.topology = topology_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_Attributes, &attribute_args));
  PJRTKIT_ASSIGN_OR_RETURN(attributes_, InnerApi::ToAttributeMap(attribute_args.attributes,
                                                                 attribute_args.num_attributes));
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions, device_args);
  device_args.topology = topology_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_GetDeviceDescriptions, &device_args));
  const int count = static_cast<int>(device_args.num_descriptions);
  if (count == 0) {
    return Internal(api_->name() + " PJRT_TopologyDescription_Create made a topology of no "
                    "devices");
  }
  devices_.resize(count);
  std::vector<bool> seen(count, false);
  for (int i = 0; i < count; ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(InnerDeviceInfo info,
                             ReadInnerDescription(*api_, device_args.descriptions[i]));
    if (info.id < 0 || info.id >= count || seen[info.id]) {
      return Internal(api_->name() + " topology device ids are not 0.." +
                      std::to_string(count - 1) + " (saw id " + std::to_string(info.id) +
                      "); pjrtkit maps devices by id");
    }
    seen[info.id] = true;
    devices_[info.id] = std::move(info);
  }
  return OkStatus();
}

StatusOr<std::vector<int>> InnerTopology::MemorySpaceKindIds() const {
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds, args);
  args.topology = topology_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_GetMemorySpaceKindIds, &args));
  return std::vector<int>(args.memory_space_kind_ids,
                          args.memory_space_kind_ids + args.num_memory_space_kind_ids);
}

StatusOr<std::string> InnerTopology::CanonicalShapeForMemorySpace(
    int kind_id, ElementType type, const std::vector<int64_t>& dims,
    const std::optional<MemoryLayout>& layout) const {
  PJRTKIT_INNER_ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, args);
  args.topology = topology_;
  args.memory_space_kind_id = kind_id;
  args.dims = dims.data();
  args.num_dims = dims.size();
  PJRTKIT_ASSIGN_OR_RETURN(args.element_type, api_->ToInnerType(type));
  std::optional<InnerLayout> inner_layout;
  if (layout.has_value()) args.layout = inner_layout.emplace(*layout).get();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, &args));
  std::string shape(args.serialized_shape == nullptr ? "" : args.serialized_shape,
                    args.serialized_shape == nullptr ? 0 : args.serialized_shape_size);
  if (args.serialized_shape_deleter != nullptr) args.serialized_shape_deleter(args.serialized_shape);
  return shape;
}

StatusOr<PJRT_Executable*> InnerTopology::Compile(const Program& program,
                                                  const std::string& compile_options) const {
  PJRT_Program inner_program{};
  inner_program.struct_size = PJRT_Program_STRUCT_SIZE;
  inner_program.code = const_cast<char*>(program.code.data());  // The inner plugin only reads.
  inner_program.code_size = program.code.size();
  inner_program.format = program.format.data();
  inner_program.format_size = program.format.size();
  PJRTKIT_INNER_ARGS(PJRT_Compile, args);
  args.topology = topology_;
  args.program = &inner_program;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  args.client = nullptr;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Compile, &args));
  if (args.executable == nullptr) {
    return Internal(api_->name() + " PJRT_Compile returned nothing");
  }
  return args.executable;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
