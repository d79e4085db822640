// SimCompileOptions: what the sim device reads from a serialized xla.CompileOptionsProto (the
// compile options PJRT_Client_Compile takes).
//
// Field numbers (xla/pjrt/proto/compile_options.proto, xla/xla.proto, xla/xla_data.proto), checked
// against jaxlib's CompileOptions().SerializeAsString():
//   CompileOptionsProto.executable_build_options = 3, .compile_portable_executable = 4,
//     .env_option_overrides = 7 (map<string, OptionOverrideProto>: entry key = 1, value = 2)
//   OptionOverrideProto.string_field = 1, .bool_field = 2, .int_field = 3, .double_field = 4
//   ExecutableBuildOptionsProto.device_ordinal = 1, .num_replicas = 4, .num_partitions = 5,
//     .device_assignment = 9
//   DeviceAssignmentProto.replica_count = 1, .computation_count = 2, .computation_devices = 3
//   ComputationDevice.replica_device_ids = 1 (packed or not)
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace sim {

// The options of one compile, checked against the client's devices.
struct SimCompileOptions {
  int64_t num_replicas = 1;    // Unset (0) reads as 1.
  int64_t num_partitions = 1;  // Unset (0) reads as 1.
  bool portable = false;       // compile_portable_executable: one device, chosen at execution.
  // The device of each logical id (replica * num_partitions + partition): from the device
  // assignment, or the client's default one.
  std::vector<int> devices;
  // The names of the env_option_overrides (JAX's compiler_options), each one sim accepts and
  // ignores (sim_compile_options.cc lists them and why).
  std::vector<std::string> overrides;

  // Reads `serialized` for a client of `device_count` devices (ids 0..device_count-1);
  // INVALID_ARGUMENT for malformed bytes, negative counts, more replicas x partitions than
  // devices, an assignment that disagrees with the counts or names a device twice or one the
  // client does not have, an env_option_overrides name sim does not accept ("No such compile
  // option: 'NAME'", as XLA:CPU words it) or a value of the wrong type for the option.
  static StatusOr<SimCompileOptions> Read(const std::string& serialized, int device_count);
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_OPTIONS_H_
