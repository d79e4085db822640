// Host layouts for Buffer::ToHostBuffer. XLA:CPU's PJRT_Buffer_ToHostBuffer ignores a non-default
// host_layout (it writes row-major bytes anyway), so pjrtkit reads row-major and permutes itself.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_LAYOUT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace inner {

// True when `layout` is dense row-major for `rank` dimensions (minor_to_major rank-1..0, no
// tiles).
bool IsRowMajor(const MemoryLayout& layout, size_t rank);

// OK when `layout` is an untiled permutation of `rank` dimensions; UNIMPLEMENTED for tiles,
// INVALID_ARGUMENT when minor_to_major is not a permutation.
Status CheckPermutationLayout(const MemoryLayout& layout, size_t rank);

// Copies the dense row-major array `src` (`dims`, `element_bytes` per element) into `dst`, laid
// out with `minor_to_major` (a checked permutation).
void CopyRowMajorToLayout(const char* src, char* dst, const std::vector<int64_t>& dims,
                          size_t element_bytes, const std::vector<int64_t>& minor_to_major);

}  // namespace inner
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_LAYOUT_H_
