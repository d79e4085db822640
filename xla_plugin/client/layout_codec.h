// MemoryLayout helpers and the text form the PJRT Layouts extension exchanges: what
// xla::Layout::ToString() prints and XLA's HLO layout parser (xla::ParseLayout, behind
// xla::PjRtLayout::Deserialize) reads back.
//
//   "{}"                    rank 0
//   "{1,0}"                 dense row-major [m, n]
//   "{0,1}"                 column-major
//   "{1,0:T(8,128)(2,1)}"   tiles, outermost first
//   "{0:E(4)}"              elements packed to 4 bits (int4 on XLA:CPU)
//   "{1,0:T(8,128)E(4)}"    both, in XLA's order (tiles before the element size)
//
// jaxlib parses these bytes for every buffer and executable output it asks about, and aborts
// (CHECK) on an output layout it cannot parse, so EncodeXlaLayout prints exactly XLA's syntax and
// only for layouts CheckMemoryLayout accepted.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_LAYOUT_CODEC_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_LAYOUT_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// Dense row-major layout of `rank` dimensions: minor_to_major {rank-1, ..., 0}, no tiles.
MemoryLayout RowMajorLayout(size_t rank);

// OK when `layout` can describe an array of `rank` dimensions: minor_to_major is a permutation of
// 0..rank-1, every tile has 1..rank dimensions, all positive, and element_size_in_bits is 0..64.
// Otherwise INVALID_ARGUMENT naming the first problem ("minor_to_major {0,0} is not a
// permutation of 2 dimensions").
Status CheckMemoryLayout(const MemoryLayout& layout, size_t rank);

// `layout` as xla::Layout::ToString() prints it (see the file comment). Meant for layouts that
// passed CheckMemoryLayout.
std::string EncodeXlaLayout(const MemoryLayout& layout);

// The layout `text` (xla::Layout::ToString() output) describes. Reads minor_to_major, tiles
// ("T(...)...") and the element size ("E(n)"); a memory space ("S(n)") is dropped, as
// xla::PjRtLayout drops it. Other attributes (tail padding, index/pointer types, split configs,
// physical shapes, dynamic-shape metadata) are UNIMPLEMENTED naming the attribute; malformed text
// is INVALID_ARGUMENT naming the offset.
StatusOr<MemoryLayout> DecodeXlaLayout(std::string_view text);

// Two layouts of an array with `dims` store its elements in the same order: equal element
// sizes and tiles, and equal minor_to_major once the dimensions of size 1 are left out (or the
// array has no elements).
bool SameElementOrder(const MemoryLayout& a, const MemoryLayout& b,
                      const std::vector<int64_t>& dims);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_LAYOUT_CODEC_H_
