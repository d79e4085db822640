#include "xla_plugin/devices/sim/compiler/tile_sharding.h"

#include <algorithm>
#include <map>
#include <utility>

namespace pjrtkit {
namespace sim {
namespace {

std::string List(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// Row-major index of `coords` over `tiles`.
int64_t TileIndex(const std::vector<int64_t>& tiles, const std::vector<int64_t>& coords) {
  int64_t index = 0;
  for (size_t d = 0; d < tiles.size(); ++d) index = index * tiles[d] + coords[d];
  return index;
}

}  // namespace

TileSharding TileSharding::Replicated(int rank, int64_t devices) {
  return TileSharding(std::vector<int64_t>(rank, 1),
                      std::vector<std::vector<int64_t>>(devices, std::vector<int64_t>(rank, 0)));
}

StatusOr<TileSharding> TileSharding::Make(std::vector<int64_t> tiles,
                                          std::vector<std::vector<int64_t>> coords) {
  const int64_t devices = static_cast<int64_t>(coords.size());
  int64_t pieces = 1;
  for (int64_t t : tiles) {
    if (t < 1) return InvalidArgument("tiles " + List(tiles) + " has a dimension below 1");
    if (t > devices || pieces > devices / t) {
      return InvalidArgument("tiles " + List(tiles) + " make more pieces than the " +
                             std::to_string(devices) + " devices");
    }
    pieces *= t;
  }
  if (devices == 0 || devices % pieces != 0) {
    return InvalidArgument("tiles " + List(tiles) + " do not divide " + std::to_string(devices) +
                           " devices evenly");
  }
  std::vector<int64_t> held(static_cast<size_t>(pieces), 0);
  for (const std::vector<int64_t>& c : coords) {
    if (c.size() != tiles.size()) return InvalidArgument("a device's coordinates have another rank");
    for (size_t d = 0; d < tiles.size(); ++d) {
      if (c[d] < 0 || c[d] >= tiles[d]) {
        return InvalidArgument("coordinate " + List(c) + " is outside tiles " + List(tiles));
      }
    }
    ++held[static_cast<size_t>(TileIndex(tiles, c))];
  }
  for (int64_t count : held) {
    if (count != devices / pieces) {
      return InvalidArgument("the pieces of tiles " + List(tiles) + " are not held equally often");
    }
  }
  return TileSharding(std::move(tiles), std::move(coords));
}

StatusOr<TileSharding> TileSharding::FromSpec(const ShardingSpec& spec, int rank,
                                              int64_t devices) {
  if (spec.kind == ShardingSpec::Kind::kReplicated) return Replicated(rank, devices);
  if (spec.kind != ShardingSpec::Kind::kTiled) {
    return InvalidArgument("only replicated and tiled shardings describe pieces of an array");
  }
  if (static_cast<int>(spec.tiles.size()) != rank) {
    return InvalidArgument("the sharding tiles " + std::to_string(spec.tiles.size()) +
                           " dimensions of an array of rank " + std::to_string(rank));
  }
  if (static_cast<int64_t>(spec.devices.size()) != devices) {
    return InvalidArgument("the sharding names " + std::to_string(spec.devices.size()) +
                           " devices of the program's " + std::to_string(devices));
  }
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(devices));
  std::vector<bool> seen(static_cast<size_t>(devices), false);
  for (size_t k = 0; k < spec.devices.size(); ++k) {
    const int64_t device = spec.devices[k];
    if (device < 0 || device >= devices || seen[device]) {
      return InvalidArgument("the sharding names device " + std::to_string(device) +
                             ", which is not a distinct device of the program's " +
                             std::to_string(devices));
    }
    seen[device] = true;
    // Position k in the tile assignment: tile index k / replication, row-major over the tiles.
    int64_t tile = static_cast<int64_t>(k) / std::max<int64_t>(spec.replication, 1);
    std::vector<int64_t> c(static_cast<size_t>(rank), 0);
    for (int d = rank; d-- > 0;) {
      c[d] = tile % spec.tiles[d];
      tile /= spec.tiles[d];
    }
    coords[device] = std::move(c);
  }
  return Make(spec.tiles, std::move(coords));
}

bool TileSharding::IsReplicated() const {
  return std::all_of(tiles_.begin(), tiles_.end(), [](int64_t t) { return t == 1; });
}

bool TileSharding::SameAlong(const TileSharding& other, int d) const {
  if (tiles_[d] != other.tiles_[d] || coords_.size() != other.coords_.size()) return false;
  for (size_t k = 0; k < coords_.size(); ++k) {
    if (coords_[k][d] != other.coords_[k][d]) return false;
  }
  return true;
}

bool TileSharding::operator==(const TileSharding& other) const {
  return tiles_ == other.tiles_ && coords_ == other.coords_;
}

StatusOr<std::vector<int64_t>> TileSharding::PieceDims(const std::vector<int64_t>& dims) const {
  if (dims.size() != tiles_.size()) {
    return InvalidArgument("a sharding of rank " + std::to_string(tiles_.size()) +
                           " for an array of rank " + std::to_string(dims.size()));
  }
  std::vector<int64_t> piece(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] % tiles_[d] != 0) {
      return InvalidArgument("dimension " + std::to_string(d) + " of size " +
                             std::to_string(dims[d]) + " is not divisible into " +
                             std::to_string(tiles_[d]) + " pieces (uneven shards are not "
                             "supported)");
    }
    piece[d] = dims[d] / tiles_[d];
  }
  return piece;
}

TileSharding TileSharding::Whole(const std::vector<int>& dims) const {
  TileSharding out = *this;
  for (int d : dims) {
    out.tiles_[d] = 1;
    for (std::vector<int64_t>& c : out.coords_) c[d] = 0;
  }
  return out;
}

std::vector<std::vector<int64_t>> TileSharding::GroupsAlong(const std::vector<int>& dims) const {
  std::vector<bool> along(tiles_.size(), false);
  for (int d : dims) along[d] = true;
  // Devices by their coordinates on the other dimensions, then by theirs along `dims`.
  std::map<std::vector<int64_t>, std::map<std::vector<int64_t>, std::vector<int64_t>>> by_rest;
  for (size_t k = 0; k < coords_.size(); ++k) {
    std::vector<int64_t> rest, mine;
    for (size_t d = 0; d < tiles_.size(); ++d) {
      (along[d] ? mine : rest).push_back(coords_[k][d]);
    }
    by_rest[rest][mine].push_back(static_cast<int64_t>(k));
  }
  std::vector<std::vector<int64_t>> groups;
  for (const auto& [rest, by_coords] : by_rest) {
    // Every combination along `dims` has the same number of devices (Make checked it).
    const size_t copies = by_coords.begin()->second.size();
    for (size_t g = 0; g < copies; ++g) {
      std::vector<int64_t> group;
      for (const auto& [coords, devices] : by_coords) group.push_back(devices[g]);
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

ShardingSpec TileSharding::ToSpec() const {
  ShardingSpec spec;
  if (IsReplicated()) return spec;
  spec.kind = ShardingSpec::Kind::kTiled;
  spec.tiles = tiles_;
  int64_t pieces = 1;
  for (int64_t t : tiles_) pieces *= t;
  spec.replication = devices() / pieces;
  std::vector<std::vector<int64_t>> holders(static_cast<size_t>(pieces));
  for (size_t k = 0; k < coords_.size(); ++k) {
    holders[static_cast<size_t>(TileIndex(tiles_, coords_[k]))].push_back(static_cast<int64_t>(k));
  }
  for (const std::vector<int64_t>& h : holders) {
    spec.devices.insert(spec.devices.end(), h.begin(), h.end());
  }
  return spec;
}

std::string TileSharding::ToString() const {
  if (IsReplicated()) return "replicated";
  std::string out = "tiles " + List(tiles_) + " on devices [";
  const ShardingSpec spec = ToSpec();
  for (size_t i = 0; i < spec.devices.size(); ++i) {
    out += (i ? "," : "") + std::to_string(spec.devices[i]);
  }
  return out + "]";
}

}  // namespace sim
}  // namespace pjrtkit
