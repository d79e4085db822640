// Collectives across the devices of one execution: all_reduce, all_gather, reduce_scatter,
// all_to_all, collective_permute, collective_broadcast (see data_movement.h for Check/Run).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVES_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVES_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"
#include "xla_plugin/devices/sim/runtime/rendezvous.h"

namespace pjrtkit {
namespace sim {

// Who runs a collective: this participant's logical id (replica * num_partitions + partition,
// also its rank in `rendezvous`), how many participate in the execution, and the execution's
// rendezvous. `step` counts the collectives this participant ran in this execution (the kernel
// increments it); every participant reaches the same steps in the same order (SPMD).
struct CollectiveContext {
  int64_t logical_id = 0;
  int64_t num_participants = 1;
  Rendezvous* rendezvous = nullptr;
  int64_t* step = nullptr;
};

// Checks params against types and `num_participants` (groups partition the participants, ...).
Status CheckCollective(const CollectiveParams& params, int64_t num_participants,
                       const ArrayTypes& operands, const ArrayTypes& results);
// Runs it; errors (another participant failed: the rendezvous was aborted) are returned.
Status RunCollective(const CollectiveParams& params, const CollectiveContext& context,
                     const std::vector<ArrayArg>& operands,
                     const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVES_H_
