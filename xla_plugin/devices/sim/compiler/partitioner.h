// The sim compiler's automatic SPMD partitioner: ops of a partitioned program (num_partitions > 1)
// over arrays that `main` receives in pieces (`mhlo.sharding` on its arguments) become the same ops
// on each device's piece, with the collectives that make the pieces add up.
//
// It works op by op during lowering, on the shardings Shardy's propagation wrote on every op
// (`mhlo.sharding`, after the round-trip export; Python's `_shardy` runs both before the device
// compiles). Every graph value of the entry knows how it is held (GraphValue::tiling: pieces per
// dimension and which device holds which; none: whole on every device), so a wrong or missing
// annotation costs speed, never values:
//
// - elementwise ops, broadcast_in_dim, transpose, reshapes that keep the cut dimension major in its
//   group, iota along an uncut dimension: operands are brought to the result's sharding, and the op
//   runs on the pieces;
// - dot_general: batch and free dimensions as the result is cut; contracting dimensions stay cut as
//   an operand holds them, and an all-reduce over the devices that hold the partial sums adds them;
// - reduce with one input and an add, multiply, maximum, minimum, and or or body whose init is that
//   body's identity: reduced dimensions stay cut, then an all-reduce; other reduces gather the
//   reduced dimensions first;
// - `Sharding` / `ShardingConstraint` custom calls: the value is brought to that sharding;
// - every other op: its operands are gathered whole (all-gather), and it runs as in a program of
//   one device on every device.
//
// Moving between shardings: all-gathers along the dimensions that are cut differently, then each
// device takes its piece (dynamic_slice at offsets looked up by partition_id).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_PARTITIONER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_PARTITIONER_H_

#include <string>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/graph.h"
#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/compiler/tile_sharding.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// Lowers `op` of a partitioned program's entry (see the file comment).
Status LowerPartitioned(Lowerer& lowerer, const stablehlo::Operation& op);

// How graph value `v` of a partitioned program is held: its tiling, or whole on every device.
// Null for a piece whose tiling the compiler does not know (a shard_map result).
const TileSharding* HeldAs(const Graph& graph, ValueIndex v, int64_t devices,
                           TileSharding* replicated_storage);

// Emits into `lowerer`'s graph the nodes that bring `value`, held as `from`, to `to`: all-gathers
// along the dimensions cut differently, then each device's piece. `origin` names the op for
// run-time messages. Returns the new value (tiling set), or `value` when nothing moves.
StatusOr<ValueIndex> Reshard(Lowerer& lowerer, const std::string& origin, ValueIndex value,
                             const TileSharding& from, const TileSharding& to);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_PARTITIONER_H_
