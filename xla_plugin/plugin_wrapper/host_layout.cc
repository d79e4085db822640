#include "xla_plugin/plugin_wrapper/host_layout.h"

#include <cstring>
#include <string>

namespace pjrtkit {
namespace plugin_wrapper {

bool IsRowMajor(const MemoryLayout& layout, size_t rank) {
  if (!layout.tiles.empty() || layout.minor_to_major.size() != rank) return false;
  for (size_t i = 0; i < rank; ++i) {
    if (layout.minor_to_major[i] != static_cast<int64_t>(rank - 1 - i)) return false;
  }
  return true;
}

Status CheckPermutationLayout(const char* operation, const char* what, const MemoryLayout& layout,
                              ElementType type, size_t rank, const std::string& backend) {
  if (!layout.tiles.empty()) {
    return Unimplemented(std::string(operation) + ": tiled " + what +
                         "s are not supported by the " + backend + " device");
  }
  std::vector<bool> seen(rank, false);
  bool ok = layout.minor_to_major.size() == rank;
  for (size_t i = 0; ok && i < rank; ++i) {
    const int64_t d = layout.minor_to_major[i];
    ok = d >= 0 && d < static_cast<int64_t>(rank) && !seen[d];
    if (ok) seen[d] = true;
  }
  if (!ok) {
    return InvalidArgument(std::string(operation) + ": " + what +
                           " minor_to_major is not a permutation of the " + std::to_string(rank) +
                           " dimensions");
  }
  const int bits = ElementTypeBits(type);
  if (bits == 0 || bits % 8 != 0) {
    return Unimplemented(std::string(operation) + ": non-default " + what + "s of " +
                         ElementTypeName(type) + " arrays are not supported by the " + backend +
                         " device");
  }
  return OkStatus();
}

std::vector<int64_t> DenseByteStrides(const std::vector<int64_t>& dims, size_t element_bytes,
                                      const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = static_cast<int64_t>(element_bytes);
  for (int64_t d : minor_to_major) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

void CopyStrided(const char* src, const std::vector<int64_t>& src_strides, char* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims,
                 size_t element_bytes) {
  const size_t rank = dims.size();
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) return;
  std::vector<int64_t> index(rank, 0);  // Row-major counter over the array.
  int64_t src_offset = 0, dst_offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + dst_offset, src + src_offset, element_bytes);
    for (size_t k = rank; k > 0; --k) {
      const size_t d = k - 1;
      ++index[d];
      src_offset += src_strides[d];
      dst_offset += dst_strides[d];
      if (index[d] < dims[d]) break;
      src_offset -= src_strides[d] * index[d];
      dst_offset -= dst_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
