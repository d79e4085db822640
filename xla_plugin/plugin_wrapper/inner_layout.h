// InnerLayout: a pjrtkit MemoryLayout in the inner plugin's PJRT_Buffer_MemoryLayout form.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Owns the arrays a tiled PJRT_Buffer_MemoryLayout points into. Not copyable or movable (the
// struct points into the object), so create it where the inner call is made.
class InnerLayout {
 public:
  // A tiled inner layout equal to `layout`.
  explicit InnerLayout(const MemoryLayout& layout);
  InnerLayout(const InnerLayout&) = delete;
  InnerLayout& operator=(const InnerLayout&) = delete;

  // The inner struct; valid while this object lives.
  PJRT_Buffer_MemoryLayout* get() { return &layout_; }

  // Converts a layout reported by the inner plugin (only the tiled form is supported).
  static StatusOr<MemoryLayout> FromInner(const PJRT_Buffer_MemoryLayout& inner);

 private:
  std::vector<int64_t> minor_to_major_;  // Backs layout_.tiled.minor_to_major.
  std::vector<int64_t> tile_dims_;       // Concatenated tile dimensions.
  std::vector<size_t> tile_dim_sizes_;   // Rank of each tile.
  PJRT_Buffer_MemoryLayout layout_{};    // Points into the vectors above.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUT_H_
