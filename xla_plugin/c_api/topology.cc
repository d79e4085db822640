#include "xla_plugin/c_api/topology.h"

// C++ standard library.
#include <cstring>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/executable.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/shape_checks.h"

PJRT_TopologyDescription::PJRT_TopologyDescription(const pjrtkit::Topology* topology,
                                                   std::unique_ptr<pjrtkit::Topology> owned,
                                                   PJRT_Client* owner_client)
    : owned(std::move(owned)),
      topology(topology),
      owner_client(owner_client),
      attributes(topology->attributes()) {
  for (const pjrtkit::DeviceDescription& d : topology->devices()) {
    descriptions.push_back(std::make_unique<PJRT_DeviceDescription>(&d));
    descriptions.back()->topology = this;
    description_ptrs.push_back(descriptions.back().get());
  }
}

namespace pjrtkit {
namespace capi {
namespace {

// Frees what PJRT_TopologyDescription_Serialize returned.
void DeleteSerializedTopology(PJRT_SerializedTopology* serialized) { delete serialized; }

}  // namespace

PJRT_Error* TopologyCreateWith(PJRT_TopologyDescription_Create_Args* args,
                               CreateTopologyFn create) {
  return Guard("PJRT_TopologyDescription_Create", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Create_Args, topology)));
    PJRTKIT_ASSIGN_OR_RETURN(std::string name, ToString(fn, "topology_name", args->topology_name,
                                                        args->topology_name_size));
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap options,
                             ToAttributeMap(fn, args->create_options, args->num_options));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Topology> topology, create(name, options));
    if (topology == nullptr) return Internal(std::string(fn) + ": the factory returned null");
    const Topology* raw = topology.get();
    args->topology = new PJRT_TopologyDescription(raw, std::move(topology), nullptr);
    return OkStatus();
  });
}

PJRT_Error* TopologyDestroy(PJRT_TopologyDescription_Destroy_Args* args) {
  return Guard("PJRT_TopologyDescription_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Destroy_Args, topology)));
    if (args->topology == nullptr) return OkStatus();
    if (args->topology->owner_client != nullptr) {
      return InvalidArgument(std::string(fn) +
                             ": this topology belongs to its PJRT_Client (from "
                             "PJRT_Client_TopologyDescription) and is freed with the client");
    }
    delete args->topology;
    return OkStatus();
  });
}

PJRT_Error* TopologyPlatformName(PJRT_TopologyDescription_PlatformName_Args* args) {
  return Guard("PJRT_TopologyDescription_PlatformName", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_PlatformName_Args, platform_name_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    const std::string& name = args->topology->topology->platform_name();
    args->platform_name = name.c_str();
    args->platform_name_size = name.size();
    return OkStatus();
  });
}

PJRT_Error* TopologyPlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args* args) {
  return Guard("PJRT_TopologyDescription_PlatformVersion", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_PlatformVersion_Args, platform_version_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    const std::string& version = args->topology->topology->platform_version();
    args->platform_version = version.c_str();
    args->platform_version_size = version.size();
    return OkStatus();
  });
}

PJRT_Error* TopologyGetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args* args) {
  return Guard("PJRT_TopologyDescription_GetDeviceDescriptions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_GetDeviceDescriptions_Args, num_descriptions)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    const std::vector<PJRT_DeviceDescription*>& ptrs = args->topology->description_ptrs;
    args->descriptions = ptrs.empty() ? nullptr : ptrs.data();
    args->num_descriptions = ptrs.size();
    return OkStatus();
  });
}

PJRT_Error* TopologySerialize(PJRT_TopologyDescription_Serialize_Args* args) {
  return Guard("PJRT_TopologyDescription_Serialize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Serialize_Args, serialized_topology_deleter)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    PJRTKIT_ASSIGN_OR_RETURN(std::string bytes, args->topology->topology->Serialize());
    auto* serialized = new PJRT_SerializedTopology{std::move(bytes)};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_topology = serialized;
    args->serialized_topology_deleter = &DeleteSerializedTopology;
    return OkStatus();
  });
}

PJRT_Error* TopologyAttributes(PJRT_TopologyDescription_Attributes_Args* args) {
  return Guard("PJRT_TopologyDescription_Attributes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Attributes_Args, num_attributes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    const NamedValueList& attributes = args->topology->attributes;
    args->attributes = attributes.data();
    args->num_attributes = attributes.size();
    return OkStatus();
  });
}

PJRT_Error* TopologyDeserialize(PJRT_TopologyDescription_Deserialize_Args* args) {
  return Guard("PJRT_TopologyDescription_Deserialize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Deserialize_Args, topology)));
    PJRTKIT_ASSIGN_OR_RETURN(std::string bytes,
                             ToString(fn, "serialized_topology", args->serialized_topology,
                                      args->serialized_topology_size));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Topology> topology, Topology::Deserialize(bytes));
    if (topology == nullptr) return Internal(std::string(fn) + ": no topology was made");
    const Topology* raw = topology.get();
    args->topology = new PJRT_TopologyDescription(raw, std::move(topology), nullptr);
    return OkStatus();
  });
}

PJRT_Error* TopologyCompile(PJRT_Compile_Args* args) {
  return Guard("PJRT_Compile", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Compile_Args, executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    PJRTKIT_ASSIGN_OR_RETURN(Program program, ToProgram(fn, args->program));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::string options,
        ToString(fn, "compile_options", args->compile_options, args->compile_options_size));
    // The caller's client, else the client that owns this topology (if any): the device may
    // compile through it instead of building a compiler of its own.
    PJRT_Client* offered =
        args->client != nullptr ? args->client : args->topology->owner_client;
    Client* client = offered != nullptr ? offered->client.get() : nullptr;
    const Topology& topology = *args->topology->topology;
    if (client != nullptr && client->platform_name() != topology.platform_name()) {
      return InvalidArgument(std::string(fn) + ": args->client is a '" + client->platform_name() +
                             "' client, but the topology is of platform '" +
                             topology.platform_name() + "'");
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Executable> executable,
                             topology.Compile(program, options, client));
    if (executable == nullptr) {
      return Internal(std::string(fn) + ": Topology::Compile returned no executable");
    }
    args->executable = WrapExecutable(std::move(executable));
    return OkStatus();
  });
}

namespace {

// Frees a shape of PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace.
void DeleteShapeBytes(const char* bytes) { delete[] bytes; }

}  // namespace

PJRT_Error* TopologyFingerprint(PJRT_TopologyDescription_Fingerprint_Args* args) {
  return Guard("PJRT_TopologyDescription_Fingerprint", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_Fingerprint_Args, fingerprint)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    PJRTKIT_ASSIGN_OR_RETURN(args->fingerprint, args->topology->topology->Fingerprint());
    return OkStatus();
  });
}

PJRT_Error* TopologyGetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args) {
  return Guard("PJRT_TopologyDescription_GetMemorySpaceKindIds", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args,
                  PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args,
                                    num_memory_space_kind_ids)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    const PJRT_TopologyDescription& handle = *args->topology;
    PJRTKIT_ASSIGN_OR_RETURN(
        const std::vector<int>* ids,
        const_cast<PJRT_TopologyDescription&>(handle).memory_space_kind_ids.Get(
            [&]() -> StatusOr<std::unique_ptr<std::vector<int>>> {
              PJRTKIT_ASSIGN_OR_RETURN(std::vector<int> kinds,
                                       handle.topology->MemorySpaceKindIds());
              return std::make_unique<std::vector<int>>(std::move(kinds));
            }));
    args->memory_space_kind_ids = ids->empty() ? nullptr : ids->data();
    args->num_memory_space_kind_ids = ids->size();
    return OkStatus();
  });
}

PJRT_Error* TopologyMakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args) {
  return Guard(
      "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace",
      [&](const char* fn) -> Status {
        PJRTKIT_RETURN_IF_ERROR(CheckArgs(
            fn, args,
            PJRTKIT_ARGS_SIZE(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args,
                              serialized_shape_deleter)));
        PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
        PJRTKIT_ASSIGN_OR_RETURN(ElementType type, FromPjrtBufferType(fn, args->element_type));
        if (args->num_dims > 0 && args->dims == nullptr) return NullHandleError(fn, "dims");
        std::vector<int64_t> dims(args->dims, args->dims + args->num_dims);
        PJRTKIT_RETURN_IF_ERROR(CheckDimensions(fn, "args->dims", dims));
        std::optional<MemoryLayout> layout;
        if (args->layout != nullptr) {
          PJRTKIT_ASSIGN_OR_RETURN(layout, FromPjrtLayout(fn, *args->layout, type, dims));
        }
        PJRTKIT_ASSIGN_OR_RETURN(std::string shape,
                                 args->topology->topology->CanonicalShapeForMemorySpace(
                                     args->memory_space_kind_id, type, dims, layout));
        char* bytes = new char[shape.size() + 1];
        std::memcpy(bytes, shape.data(), shape.size());
        bytes[shape.size()] = '\0';
        args->serialized_shape = bytes;
        args->serialized_shape_size = shape.size();
        args->serialized_shape_deleter = &DeleteShapeBytes;
        return OkStatus();
      });
}

}  // namespace capi
}  // namespace pjrtkit
