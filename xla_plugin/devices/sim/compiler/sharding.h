// HloSharding text (`mhlo.sharding = "{devices=[4,1]<=[4]}"`) -> the shard shape one device holds,
// and the serialized xla.OpSharding PJRT reports for it (PJRT_Shardings extension).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SHARDING_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace sim {

// What a sharding says about an array's placement.
struct ShardingSpec {
  enum class Kind { kReplicated, kTiled, kMaximal, kManual };
  Kind kind = Kind::kReplicated;
  std::vector<int64_t> tiles;  // kTiled: shards along each data dimension.
  int64_t replication = 1;     // kTiled: copies of each shard (last_tile_dim_replicate).
  // kTiled: the tile assignment, row-major over tiles (then replication): devices[k] holds tile k.
  std::vector<int64_t> devices;
  int64_t device = 0;          // kMaximal: the one device that holds the array.
};

// Reads an HloSharding as XLA prints it: {replicated}, {maximal device=N}, {manual},
// {devices=[a,b,...]<=[N]}, {devices=[a,b]<=[x,y]T(1,0)}, {devices=[a,b]0,1,2,3}, with
// last_tile_dim_replicate or last_tile_dims={replicated}. INVALID_ARGUMENT naming the text otherwise;
// UNIMPLEMENTED for tuple shardings and subgroup kinds other than replicated.
StatusOr<ShardingSpec> ParseSharding(const std::string& text);

// `spec` as a serialized xla.OpSharding (type, tile_assignment_dimensions, tile_assignment_devices,
// replicate_on_last_tile_dim; the device list explicit): what jaxlib reads as an executable's
// parameter or output sharding. Replicated is the empty message.
std::string OpShardingProto(const ShardingSpec& spec);

// The dimensions of one shard of an array of `dims` under `spec`; INVALID_ARGUMENT when the tiles
// do not match the rank or do not divide a dimension (uneven shards are not supported).
StatusOr<std::vector<int64_t>> ShardDims(const ShardingSpec& spec,
                                         const std::vector<int64_t>& dims);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SHARDING_H_
