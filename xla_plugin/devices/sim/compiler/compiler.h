// Compiler: a parsed StableHLO module -> the sim device's DeviceProgram.
//
//   lowering (lowerer.h, lower_*.cc): every op checked against what the device supports (an
//     unsupported op is UNIMPLEMENTED naming the op, its location and the device) and turned into
//     nodes; calls inlined; loops and branches become computations of their own;
//   emission (emitter.h): dead code removed, elementwise chains fused, slots and a buffer plan;
//   validation (executor/program_validator.h): every kernel's Check on what was built.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COMPILER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COMPILER_H_

#include <cstdint>
#include <string>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/program/device_program.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// What the compile options decide.
struct CompileFacts {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::string device_name = "sim";  // For messages.
};

// What the compiler did, for reports and tests.
struct CompileReport {
  int64_t computations = 0;        // Computations of the program.
  int64_t instructions = 0;        // Instructions, all computations.
  int64_t fused_instructions = 0;  // Of which kFused.
  int64_t fused_ops = 0;           // Elementwise ops inside them.
};

// Compiles `module`'s public function "main". Partitioned programs (num_partitions > 1) run one
// shard per device: arguments and results take the shard shapes their `mhlo.sharding` gives;
// shard_map (sdy round-trip form) bodies run as they are; any other op on a sharded array is
// UNIMPLEMENTED (no automatic partitioning).
StatusOr<DeviceProgram> CompileModule(const stablehlo::Module& module, const CompileFacts& facts,
                                      CompileReport* report = nullptr);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COMPILER_H_
