// PJRT_TopologyDescription_* entry points. PJRT_TopologyDescription_Create needs the Factory: the
// template in api.h passes the factory's CreateTopology to TopologyCreateWith.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TOPOLOGY_H_

// C++ standard library.
#include <memory>
#include <string>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// The factory function PJRT_TopologyDescription_Create calls.
using CreateTopologyFn = StatusOr<std::unique_ptr<Topology>> (*)(const std::string& name,
                                                                 const AttributeMap& options);

// PJRT_TopologyDescription_Create: converts the name and options, calls `create`, and returns an
// owned topology handle.
PJRT_Error* TopologyCreateWith(PJRT_TopologyDescription_Create_Args* args, CreateTopologyFn create);
// PJRT_TopologyDescription_Destroy: frees an owned topology (nullptr is fine). A client's topology
// is owned by the client: destroying it is INVALID_ARGUMENT.
PJRT_Error* TopologyDestroy(PJRT_TopologyDescription_Destroy_Args* args);
// PJRT_TopologyDescription_PlatformName: the platform name.
PJRT_Error* TopologyPlatformName(PJRT_TopologyDescription_PlatformName_Args* args);
// PJRT_TopologyDescription_PlatformVersion: the platform version.
PJRT_Error* TopologyPlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args* args);
// PJRT_TopologyDescription_GetDeviceDescriptions: one description handle per device.
PJRT_Error* TopologyGetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args* args);
// PJRT_TopologyDescription_Serialize: the topology's bytes, freed with the returned deleter.
PJRT_Error* TopologySerialize(PJRT_TopologyDescription_Serialize_Args* args);
// PJRT_TopologyDescription_Attributes: the platform attributes.
PJRT_Error* TopologyAttributes(PJRT_TopologyDescription_Attributes_Args* args);
// PJRT_TopologyDescription_Deserialize: an owned topology from bytes PJRT_TopologyDescription_
// Serialize made (Topology::Deserialize); INVALID_ARGUMENT for other bytes.
PJRT_Error* TopologyDeserialize(PJRT_TopologyDescription_Deserialize_Args* args);
// PJRT_Compile: compiles `program` for `topology` ahead of time (Topology::Compile) and returns
// an unloaded executable the caller destroys; PJRT_Executable_Serialize of it loads with
// PJRT_Executable_DeserializeAndLoad on a client of that topology. The optional `client` (or,
// for a client's own topology, its owner) is offered to the device. UNIMPLEMENTED when the
// device has no ahead-of-time compiler.
PJRT_Error* TopologyCompile(PJRT_Compile_Args* args);

// PJRT_TopologyDescription_Fingerprint: Topology::Fingerprint.
PJRT_Error* TopologyFingerprint(PJRT_TopologyDescription_Fingerprint_Args* args);
// PJRT_TopologyDescription_GetMemorySpaceKindIds: the memory-space kind ids (cached on the handle).
PJRT_Error* TopologyGetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args);
// PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace: a serialized xla.ShapeProto, freed
// with the returned deleter.
PJRT_Error* TopologyMakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TOPOLOGY_H_
