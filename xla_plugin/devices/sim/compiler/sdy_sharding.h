// Shardy's sharding text as the round-trip export leaves it in string attributes (the module's
// `xla.sdy.meshes`, shard_map boundaries' `xla.sdy.in_shardings` / `xla.sdy.out_shardings`) ->
// TileSharding, so that the partitioner knows which piece of a shard_map's operands and results
// each device holds.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SDY_SHARDING_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SDY_SHARDING_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/tile_sharding.h"

namespace pjrtkit {
namespace sim {

// One Shardy mesh: named axes with sizes, major first, and the device at each position of the
// mesh in row-major order (empty: position k is device k).
struct SdyMesh {
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> device_ids;
};

// `{mesh = #sdy.mesh<["a"=2, "b"=2]>, other = #sdy.mesh<["x"=4], device_ids=[3,2,1,0]>}` -> the
// meshes by name; INVALID_ARGUMENT naming the text otherwise.
StatusOr<std::map<std::string, SdyMesh>> ParseSdyMeshes(const std::string& text);

// `#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, ...]>` (or one `#sdy.sharding<...>`) -> one
// TileSharding per value, for arrays of `ranks` over `devices` devices: dimension d is cut into the
// product of its axes' sizes, a device's coordinate being its mesh position along those axes
// (the first axis major). INVALID_ARGUMENT for unknown meshes or axes, ranks that do not match, or
// a mesh of another device count; UNIMPLEMENTED for sub-axes ("a":(1)2). With `only_axes`, the
// other axes do not cut (a shard_map over some of the mesh's axes: its pieces are cut by those).
StatusOr<std::vector<TileSharding>> ParseSdyShardings(
    const std::string& text, const std::map<std::string, SdyMesh>& meshes,
    const std::vector<int>& ranks, int64_t devices,
    const std::set<std::string>* only_axes = nullptr);

// `#sdy<manual_axes{"a", "b"}>` -> {"a", "b"}; INVALID_ARGUMENT naming the text otherwise.
StatusOr<std::set<std::string>> ParseSdyManualAxes(const std::string& text);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SDY_SHARDING_H_
