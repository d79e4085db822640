#include "xla_plugin/devices/sim/compiler/sharding.h"

#include <cctype>
#include <numeric>

#include "xla_plugin/client/proto_writer.h"

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

// The devices of "<=[d0,d1,...]T(p0,p1,...)": iota(d0*d1*...) reshaped to the dims, transposed by
// the permutation (identity when absent), flattened. False when the text is not that.
bool ReadIota(const std::string& text, size_t* pos, std::vector<int64_t>* devices) {
  std::vector<int64_t> dims, perm;
  if (!ReadList(text, pos, &dims) || dims.empty() || dims.size() > 16) return false;
  perm.resize(dims.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (*pos < text.size() && text[*pos] == 'T') {
    ++*pos;
    if (*pos >= text.size() || text[*pos] != '(') return false;
    std::string list = "[";
    for (++*pos; *pos < text.size() && text[*pos] != ')'; ++*pos) list += text[*pos];
    if (*pos >= text.size()) return false;
    ++*pos;
    size_t at = 0;
    if (!ReadList(list + "]", &at, &perm) || perm.size() != dims.size()) return false;
    std::vector<bool> seen(dims.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(dims.size()) || seen[p]) return false;
      seen[p] = true;
    }
  }
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d <= 0 || count > (int64_t{1} << 20) / d) return false;
    count *= d;
  }
  // Element k of the transposed array (index i over the permuted dims) is the iota element at the
  // original index j with j[perm[a]] = i[a].
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t a = dims.size() - 1; a > 0; --a) strides[a - 1] = strides[a] * dims[a];
  devices->clear();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t value = 0;
    for (size_t a = 0; a < dims.size(); ++a) value += index[a] * strides[perm[a]];
    devices->push_back(value);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++index[a] < dims[perm[a]]) break;
      index[a] = 0;
    }
  }
  return true;
}

// Reads the explicit device list "0,1,2,3" at `pos` (up to a space or the end).
bool ReadDevices(const std::string& text, size_t* pos, std::vector<int64_t>* devices) {
  std::string list = "[";
  while (*pos < text.size() && text[*pos] != ' ') list += text[(*pos)++];
  size_t at = 0;
  return ReadList(list + "]", &at, devices) && !devices->empty();
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
    const size_t at = body.find("device=");
    if (at == std::string::npos) return invalid();
    std::vector<int64_t> device;
    size_t pos = at + 7;
    if (!ReadDevices(body, &pos, &device) || device.size() != 1) return invalid();
    spec.device = device[0];
    return spec;
  }
  if (body.front() == '{') {  // "{{...}, {...}}"
    return Unimplemented("tuple sharding '" + text + "' is not supported");
  }
  if (body.rfind("devices=", 0) != 0) return invalid();
  size_t pos = 8;
  std::vector<int64_t> tiles;
  if (!ReadList(body, &pos, &tiles) || tiles.empty()) return invalid();
  // The device order: "<=[...]T(...)" or an explicit list.
  if (body.compare(pos, 2, "<=") == 0) {
    pos += 2;
    if (!ReadIota(body, &pos, &spec.devices)) return invalid();
  } else if (!ReadDevices(body, &pos, &spec.devices)) {
    return invalid();
  }
  int64_t tile_count = 1;
  for (int64_t t : tiles) {
    if (t <= 0 || tile_count > (int64_t{1} << 20) / t) return invalid();
    tile_count *= t;
  }
  if (tile_count != static_cast<int64_t>(spec.devices.size())) {
    return InvalidArgument("the sharding '" + text + "' tiles over " + std::to_string(tile_count) +
                           " devices but lists " + std::to_string(spec.devices.size()));
  }
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

std::string OpShardingProto(const ShardingSpec& spec) {
  // xla.OpSharding: type = 1 (REPLICATED 0, MAXIMAL 1, OTHER 3, MANUAL 4),
  // tile_assignment_dimensions = 3, tile_assignment_devices = 4, replicate_on_last_tile_dim = 6.
  std::string out;
  switch (spec.kind) {
    case ShardingSpec::Kind::kReplicated:
      return out;
    case ShardingSpec::Kind::kManual:
      AppendVarintField(1, 4, &out);
      return out;
    case ShardingSpec::Kind::kMaximal:
      AppendVarintField(1, 1, &out);
      AppendPackedField(4, {spec.device}, &out);
      return out;
    case ShardingSpec::Kind::kTiled:
      break;
  }
  std::vector<int64_t> dims = spec.tiles;
  if (spec.replication > 1) dims.push_back(spec.replication);
  AppendVarintField(1, 3, &out);
  AppendPackedField(3, dims, &out);
  AppendPackedField(4, spec.devices, &out);
  if (spec.replication > 1) AppendVarintField(6, 1, &out);
  return out;
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
