// BufferPlanner: decides where every slot of a Computation lives while it runs: parameters and
// results in the caller's buffers, aliases on their source, the rest packed into one arena by
// lifetime (two slots share bytes only when no instruction sees both alive).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_BUFFER_PLANNER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_BUFFER_PLANNER_H_

#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// Fills `computation->places` and `arena_bytes` for a computation whose slot_types, parameters,
// results and instructions are set. `alias_of[s]` is the slot whose bytes slot s shares (an
// earlier slot), or -1.
Status PlanBuffers(const std::vector<Slot>& alias_of, Computation* computation);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_BUFFER_PLANNER_H_
