#include "tools/api_coverage/probe_topologies.h"

// C++ standard library.
#include <cstring>
#include <string>

// The suite's program and compile options.
#include "tests/conformance/test_data.h"

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
    std::string code = pjrt_conformance::kAddOneF32;
    const std::string format = "mlir";
    const std::string compile_options = pjrt_conformance::CompileOptions1x1();
    PROBE_ARGS(PJRT_Program, program);
    program.code = &code[0];
    program.code_size = code.size();
    program.format = format.data();
    program.format_size = format.size();
    PROBE_ARGS(PJRT_Compile_Args, compile);
    compile.topology = topology;
    compile.program = &program;
    compile.compile_options = compile_options.data();
    compile.compile_options_size = compile_options.size();
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
