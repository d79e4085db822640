// TileSharding: where the pieces of one array of a partitioned program are, device by device.
// The automatic partitioner (partitioner.h) reasons with it; sharding.h reads the HloSharding
// text it starts from.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_TILE_SHARDING_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_TILE_SHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/sharding.h"

namespace pjrtkit {
namespace sim {

// An array of rank r over the program's N devices: dimension d is cut into tiles(d) equal pieces,
// and device k holds the piece at coordinates coords(k) (one per dimension). Every piece is held
// by the same number of devices (its replication); all tiles 1 is replicated.
class TileSharding {
 public:
  // Every device holds the whole array.
  static TileSharding Replicated(int rank, int64_t devices);
  // `tiles` and each device's coordinates; INVALID_ARGUMENT when a coordinate is out of range or
  // the pieces are not held equally often.
  static StatusOr<TileSharding> Make(std::vector<int64_t> tiles,
                                     std::vector<std::vector<int64_t>> coords);
  // From a parsed HloSharding of an array of `rank` in a program of `devices` devices: replicated
  // or tiled (with replication); INVALID_ARGUMENT for manual and maximal, or a device list that
  // does not name every device once.
  static StatusOr<TileSharding> FromSpec(const ShardingSpec& spec, int rank, int64_t devices);

  int rank() const { return static_cast<int>(tiles_.size()); }
  int64_t devices() const { return static_cast<int64_t>(coords_.size()); }
  const std::vector<int64_t>& tiles() const { return tiles_; }
  int64_t tiles(int d) const { return tiles_[d]; }
  const std::vector<int64_t>& coords(int64_t device) const { return coords_[device]; }
  bool IsReplicated() const;
  // Whether dimension d is cut the same way, with every device at the same coordinate.
  bool SameAlong(const TileSharding& other, int d) const;
  bool operator==(const TileSharding& other) const;
  bool operator!=(const TileSharding& other) const { return !(*this == other); }

  // The dimensions of one piece of an array of `dims`; INVALID_ARGUMENT naming the dimension when
  // the tiles do not divide it.
  StatusOr<std::vector<int64_t>> PieceDims(const std::vector<int64_t>& dims) const;
  // The same sharding with dimensions `dims` whole (tiles 1, coordinate 0).
  TileSharding Whole(const std::vector<int>& dims) const;
  // Groups of devices that hold the same coordinates on every dimension but `dims`, one device of
  // each combination of coordinates along `dims` per group, in row-major order of those
  // coordinates: the participants of an all-gather or all-reduce along `dims`. Every device is in
  // exactly one group.
  std::vector<std::vector<int64_t>> GroupsAlong(const std::vector<int>& dims) const;

  // As an HloSharding (tiles, replication, devices row-major by tile): what PJRT reports.
  ShardingSpec ToSpec() const;
  // "tiles [4,1]" or "replicated", for messages.
  std::string ToString() const;

 private:
  TileSharding(std::vector<int64_t> tiles, std::vector<std::vector<int64_t>> coords)
      : tiles_(std::move(tiles)), coords_(std::move(coords)) {}

  std::vector<int64_t> tiles_;
  std::vector<std::vector<int64_t>> coords_;
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_TILE_SHARDING_H_
