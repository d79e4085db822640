#include "xla_plugin/devices/inner/host_layout.h"

#include <cstring>
#include <string>

namespace pjrtkit {
namespace inner {

bool IsRowMajor(const MemoryLayout& layout, size_t rank) {
  if (!layout.tiles.empty() || layout.minor_to_major.size() != rank) return false;
  for (size_t i = 0; i < rank; ++i) {
    if (layout.minor_to_major[i] != static_cast<int64_t>(rank - 1 - i)) return false;
  }
  return true;
}

Status CheckPermutationLayout(const MemoryLayout& layout, size_t rank) {
  if (!layout.tiles.empty()) {
    return Unimplemented("ToHostBuffer: tiled host layouts are not supported by the xla_cpu device");
  }
  std::vector<bool> seen(rank, false);
  bool ok = layout.minor_to_major.size() == rank;
  for (size_t i = 0; ok && i < rank; ++i) {
    const int64_t d = layout.minor_to_major[i];
    ok = d >= 0 && d < static_cast<int64_t>(rank) && !seen[d];
    if (ok) seen[d] = true;
  }
  if (!ok) {
    return InvalidArgument("ToHostBuffer: host layout minor_to_major is not a permutation of the " +
                           std::to_string(rank) + " dimensions");
  }
  return OkStatus();
}

void CopyRowMajorToLayout(const char* src, char* dst, const std::vector<int64_t>& dims,
                          size_t element_bytes, const std::vector<int64_t>& minor_to_major) {
  const size_t rank = dims.size();
  // Element stride of each logical dimension in the destination.
  std::vector<int64_t> dst_stride(rank, 0);
  int64_t stride = 1;
  for (int64_t d : minor_to_major) {
    dst_stride[d] = stride;
    stride *= dims[d];
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(rank, 0);  // Row-major counter over the source.
  int64_t offset = 0;                   // Destination element offset of `index`.
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + offset * element_bytes, src + i * element_bytes, element_bytes);
    for (size_t k = rank; k > 0; --k) {
      const size_t d = k - 1;
      ++index[d];
      offset += dst_stride[d];
      if (index[d] < dims[d]) break;
      offset -= dst_stride[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace inner
}  // namespace pjrtkit
