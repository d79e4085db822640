#include "xla_plugin/devices/sim/compiler/sharding.h"

#include <cctype>

namespace pjrtkit {
namespace sim {
namespace {

// Reads "[a,b,c]" at `pos` into `out`; false on any other text.
bool ReadList(const std::string& text, size_t* pos, std::vector<int64_t>* out) {
  if (*pos >= text.size() || text[*pos] != '[') return false;
  ++*pos;
  out->clear();
  while (*pos < text.size() && text[*pos] != ']') {
    size_t digits = 0;
    int64_t value = 0;
    while (*pos < text.size() && std::isdigit(static_cast<unsigned char>(text[*pos]))) {
      value = value * 10 + (text[*pos] - '0');
      if (value > (int64_t{1} << 40)) return false;
      ++*pos;
      ++digits;
    }
    if (digits == 0) return false;
    out->push_back(value);
    if (*pos < text.size() && text[*pos] == ',') ++*pos;
  }
  if (*pos >= text.size()) return false;
  ++*pos;
  return true;
}

}  // namespace

StatusOr<ShardingSpec> ParseSharding(const std::string& text) {
  ShardingSpec spec;
  auto invalid = [&]() { return InvalidArgument("cannot read the sharding '" + text + "'"); };
  if (text.empty() || text.front() != '{' || text.back() != '}') return invalid();
  const std::string body = text.substr(1, text.size() - 2);
  if (body == "replicated" || body.empty()) return spec;
  if (body == "manual") {
    spec.kind = ShardingSpec::Kind::kManual;
    return spec;
  }
  if (body.rfind("maximal", 0) == 0) {
    spec.kind = ShardingSpec::Kind::kMaximal;
    return spec;
  }
  if (body.find('{') != std::string::npos) {
    return Unimplemented("tuple sharding '" + text + "' is not supported");
  }
  if (body.rfind("devices=", 0) != 0) return invalid();
  size_t pos = 8;
  std::vector<int64_t> tiles;
  if (!ReadList(body, &pos, &tiles) || tiles.empty()) return invalid();
  // The device order that follows (<=[...]T(...) or an explicit list) does not change shard shapes.
  bool replicate_last = body.find("last_tile_dim_replicate") != std::string::npos;
  const size_t dims_pos = body.find("last_tile_dims={");
  if (dims_pos != std::string::npos) {
    const std::string kinds = body.substr(dims_pos + 16);
    if (kinds.rfind("replicated}", 0) != 0) {
      return Unimplemented("sharding '" + text + "' has subgroups other than replicated");
    }
    replicate_last = true;
  }
  spec.kind = ShardingSpec::Kind::kTiled;
  if (replicate_last) {
    spec.replication = tiles.back();
    tiles.pop_back();
  }
  spec.tiles = tiles;
  return spec;
}

StatusOr<std::vector<int64_t>> ShardDims(const ShardingSpec& spec,
                                         const std::vector<int64_t>& dims) {
  if (spec.kind != ShardingSpec::Kind::kTiled) return dims;
  if (spec.tiles.size() != dims.size()) {
    return InvalidArgument("the sharding tiles " + std::to_string(spec.tiles.size()) +
                           " dimensions of an array of rank " + std::to_string(dims.size()));
  }
  std::vector<int64_t> shard(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (spec.tiles[i] <= 0 || dims[i] % spec.tiles[i] != 0) {
      return InvalidArgument("dimension " + std::to_string(i) + " of size " +
                             std::to_string(dims[i]) + " is not divisible into " +
                             std::to_string(spec.tiles[i]) + " shards (uneven shards are not "
                             "supported)");
    }
    shard[i] = dims[i] / spec.tiles[i];
  }
  return shard;
}

}  // namespace sim
}  // namespace pjrtkit
