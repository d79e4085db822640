// Serialized xla.CompileOptionsProto helpers: the few fields pjrtkit reads, writes or guards.
//
// XLA:CPU aborts the process (CHECK failure in DeviceAssignment) when the options leave
// executable_build_options.num_replicas or .num_partitions at 0, which is what an EMPTY options
// string means in proto3; a negative value makes it throw std::bad_alloc. So pjrtkit reads those two
// fields before every compile, treats 0 as "unset" (XLA's C++ ExecutableBuildOptions default is
// 1), and rejects values the inner plugin cannot honour.
//
// Field numbers (xla/pjrt/proto/compile_options.proto, xla/xla.proto), checked against jaxlib's
// CompileOptions().SerializeAsString():
//   CompileOptionsProto.executable_build_options = 3 (message)
//   CompileOptionsProto.compile_portable_executable = 4 (bool)
//   ExecutableBuildOptionsProto.device_ordinal = 1 (int64)
//   ExecutableBuildOptionsProto.debug_options = 3 (message)
//   ExecutableBuildOptionsProto.num_replicas = 4 (int64)
//   ExecutableBuildOptionsProto.num_partitions = 5 (int64)
//   ExecutableBuildOptionsProto.use_auto_spmd_partitioning = 7 (bool)
//   ExecutableBuildOptionsProto.use_shardy_partitioner = 19 (bool)
// With use_auto_spmd_partitioning and use_shardy_partitioner both true and more than one
// partition, XLA:CPU's Shardy pass asks for an auto-partitioner that xla-cpu-pjrt does not register
// and LLVM's report_fatal_error ends the process ("auto-partitioner callback wasn't registered").
// DebugOptions fields that make XLA abort the process by design (CHECK failures; numbers read from
// the descriptor embedded in xla-cpu-pjrt's plugin, 0.81 API):
//   xla_gpu_crash_on_verification_failures = 101 (bool)
//   xla_unsupported_crash_on_hlo_pass_fix_max_iterations = 363 (bool)
//   xla_unsupported_crash_on_hlo_pass_noop_change = 379 (bool)
//   xla_unsupported_crash_on_hlo_pass_silent_hlo_change = 380 (bool)
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_COMPILE_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_COMPILE_OPTIONS_H_

#include <cstdint>
#include <string>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace plugin_wrapper {

// What pjrtkit reads from a serialized CompileOptionsProto.
struct CompileOptionsSummary {
  int64_t device_ordinal = -1;            // -1 (any device) when unset.
  int64_t num_replicas = 0;               // 0 when unset.
  int64_t num_partitions = 0;             // 0 when unset.
  bool compile_portable_executable = false;
  bool use_auto_spmd_partitioning = false;
  bool use_shardy_partitioner = false;
  // The first DebugOptions field above that the options set (last value wins, as in protobuf)
  // to true; empty when none.
  std::string crash_option;
};

// Reads the fields above; INVALID_ARGUMENT when `serialized` is not a well-formed protobuf.
StatusOr<CompileOptionsSummary> ReadCompileOptions(const std::string& serialized);

// Returns `serialized` made safe for XLA:CPU on a client of `device_count` devices: unset (0)
// num_replicas / num_partitions become 1 (by appending a protobuf fragment, which parsers merge);
// negative values, more replicas x partitions than devices, a device_ordinal outside
// [-1, device_count), a debug option that makes XLA abort the process, or automatic partitioning
// under Shardy over more than one partition (which aborts it too) are INVALID_ARGUMENT.
StatusOr<std::string> NormalizeCompileOptions(const std::string& serialized, int device_count);

// A minimal serialized CompileOptionsProto: executable_build_options { num_replicas num_partitions }
// and, when `portable`, compile_portable_executable = true. For (1, 1, false) the bytes are
// 1a 04 20 01 28 01.
std::string MinimalCompileOptions(int64_t num_replicas, int64_t num_partitions, bool portable);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_COMPILE_OPTIONS_H_
