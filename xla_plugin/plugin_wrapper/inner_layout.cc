#include "xla_plugin/plugin_wrapper/inner_layout.h"

#include <string>

namespace pjrtkit {
namespace plugin_wrapper {

InnerLayout::InnerLayout(const MemoryLayout& layout) : minor_to_major_(layout.minor_to_major) {
  for (const std::vector<int64_t>& tile : layout.tiles) {
    tile_dims_.insert(tile_dims_.end(), tile.begin(), tile.end());
    tile_dim_sizes_.push_back(tile.size());
  }
  layout_.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout_.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout_.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout_.tiled.minor_to_major = minor_to_major_.data();
  layout_.tiled.minor_to_major_size = minor_to_major_.size();
  layout_.tiled.tile_dims = tile_dims_.data();
  layout_.tiled.tile_dim_sizes = tile_dim_sizes_.data();
  layout_.tiled.num_tiles = tile_dim_sizes_.size();
}

StatusOr<MemoryLayout> InnerLayout::FromInner(const PJRT_Buffer_MemoryLayout& inner) {
  if (inner.type != PJRT_Buffer_MemoryLayout_Type_Tiled) {
    return Unimplemented("the inner plugin reported a layout of type " +
                         std::to_string(static_cast<int>(inner.type)) +
                         "; pjrtkit reads tiled layouts only");
  }
  const PJRT_Buffer_MemoryLayout_Tiled& tiled = inner.tiled;
  MemoryLayout layout;
  layout.minor_to_major.assign(tiled.minor_to_major,
                               tiled.minor_to_major + tiled.minor_to_major_size);
  const int64_t* next = tiled.tile_dims;
  for (size_t i = 0; i < tiled.num_tiles; ++i) {
    layout.tiles.emplace_back(next, next + tiled.tile_dim_sizes[i]);
    next += tiled.tile_dim_sizes[i];
  }
  return layout;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
