#include "tools/api_coverage/probe_topologies.h"

// C++ standard library.
#include <cstring>
#include <string>

// The suite's program and compile options.
#include "tools/api_coverage/probe_fixtures.h"

namespace api_coverage {

void ProbeTopologies(ProbeRecorder* probe, PJRT_Client* client) {
  PROBE_ARGS(PJRT_Client_TopologyDescription_Args, get);
  get.client = client;
  if (PROBE_CALL(PJRT_Client_TopologyDescription, get)) {
    PJRT_TopologyDescription* topology = get.topology;
    PROBE_ARGS(PJRT_TopologyDescription_PlatformName_Args, name);
    name.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_PlatformName, name);
    PROBE_ARGS(PJRT_TopologyDescription_PlatformVersion_Args, version);
    version.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_PlatformVersion, version);
    PROBE_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, descriptions);
    descriptions.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_GetDeviceDescriptions, descriptions);
    PROBE_ARGS(PJRT_TopologyDescription_Attributes_Args, attributes);
    attributes.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_Attributes, attributes);
    PROBE_ARGS(PJRT_TopologyDescription_Serialize_Args, serialize);
    serialize.topology = topology;
    if (PROBE_CALL(PJRT_TopologyDescription_Serialize, serialize)) {
      const std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
      if (serialize.serialized_topology_deleter != nullptr) {
        serialize.serialized_topology_deleter(serialize.serialized_topology);
      }
      PROBE_ARGS(PJRT_TopologyDescription_Deserialize_Args, deserialize);
      deserialize.serialized_topology = bytes.data();
      deserialize.serialized_topology_size = bytes.size();
      if (PROBE_CALL(PJRT_TopologyDescription_Deserialize, deserialize)) {
        PROBE_ARGS(PJRT_TopologyDescription_Destroy_Args, destroy);
        destroy.topology = deserialize.topology;
        PROBE_CALL(PJRT_TopologyDescription_Destroy, destroy);
      }
    }
    AddOneProgram add_one;
    PROBE_ARGS(PJRT_Compile_Args, compile);
    compile.topology = topology;
    compile.program = add_one.program();
    compile.compile_options = add_one.compile_options().data();
    compile.compile_options_size = add_one.compile_options().size();
    compile.client = client;
    if (PROBE_CALL(PJRT_Compile, compile)) {
      PROBE_ARGS(PJRT_Executable_Destroy_Args, destroy);
      destroy.executable = compile.executable;
      PROBE_CALL(PJRT_Executable_Destroy, destroy);
    }
  }
  PROBE_ARGS(PJRT_TopologyDescription_Create_Args, create);
  if (PROBE_CALL(PJRT_TopologyDescription_Create, create)) {
    PROBE_ARGS(PJRT_TopologyDescription_Destroy_Args, destroy);
    destroy.topology = create.topology;
    PROBE_CALL(PJRT_TopologyDescription_Destroy, destroy);
  }
}

}  // namespace api_coverage
