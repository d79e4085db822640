// Emitter: a lowered Graph -> a Computation of the device program: dead nodes removed,
// elementwise chains fused into kFused instructions (fusion), a slot for every value that must
// live in memory, and the buffer plan (buffer_planner.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_EMITTER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_EMITTER_H_

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/graph.h"
#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// What the emitter did, for tests and the compiler's report.
struct EmitStats {
  int64_t fused_instructions = 0;  // kFused instructions emitted.
  int64_t fused_nodes = 0;         // Elementwise nodes they hold.
};

// Emits `graph` as a Computation.
StatusOr<Computation> EmitComputation(const Graph& graph, EmitStats* stats = nullptr);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_EMITTER_H_
