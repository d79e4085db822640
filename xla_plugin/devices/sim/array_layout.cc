#include "xla_plugin/devices/sim/array_layout.h"

#include <cstring>
#include <limits>

#include "xla_plugin/client/layout_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

// The element types with data: whole bytes, or sub-byte types held one element per byte.
bool IsStorable(ElementType type) {
  const int bits = ElementTypeBits(type);
  return bits > 0 && (bits < 8 || bits % 8 == 0);
}

// Calls `row(outer_offset_src, outer_offset_dst)` for every index of all but the last dimension
// of `dims` (once for rank 0), with the byte offsets of that row's first element under
// `src_strides` and `dst_strides`. Does nothing for an array without elements.
template <typename Row>
void ForEachRow(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                const std::vector<int64_t>& dst_strides, Row&& row) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const int outer = static_cast<int>(dims.size()) - 1;
  std::vector<int64_t> index(outer > 0 ? outer : 0, 0);
  int64_t src = 0;
  int64_t dst = 0;
  for (;;) {
    row(src, dst);
    int d = outer - 1;
    for (; d >= 0; --d) {
      src += src_strides[d];
      dst += dst_strides[d];
      if (++index[d] < dims[d]) break;
      src -= src_strides[d] * dims[d];
      dst -= dst_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Copies one row of `count` elements between strides (memcpy when both are dense).
void CopyRow(int64_t element_bytes, int64_t count, const uint8_t* src, int64_t src_stride,
             uint8_t* dst, int64_t dst_stride) {
  if (src_stride == element_bytes && dst_stride == element_bytes) {
    std::memcpy(dst, src, static_cast<size_t>(count * element_bytes));
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * dst_stride, src + i * src_stride, static_cast<size_t>(element_bytes));
  }
}

// Copies between two strided layouts of `dims`.
void CopyStrided(int64_t element_bytes, const std::vector<int64_t>& dims, const uint8_t* src,
                 const std::vector<int64_t>& src_strides, uint8_t* dst,
                 const std::vector<int64_t>& dst_strides) {
  if (dims.empty()) {
    std::memcpy(dst, src, static_cast<size_t>(element_bytes));
    return;
  }
  const int64_t count = dims.back();
  const int64_t src_inner = src_strides.back();
  const int64_t dst_inner = dst_strides.back();
  ForEachRow(dims, src_strides, dst_strides, [&](int64_t src_offset, int64_t dst_offset) {
    CopyRow(element_bytes, count, src + src_offset, src_inner, dst + dst_offset, dst_inner);
  });
}

}  // namespace

std::string ShapeString(ElementType type, const std::vector<int64_t>& dims) {
  std::string out = std::string(ElementTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    out += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  }
  return out + "]";
}

int64_t StoredElementBytes(ElementType type) {
  const int bits = ElementTypeBits(type);
  return bits < 8 ? 1 : bits / 8;
}

Status CheckStorableType(ElementType type, const std::string& where) {
  if (IsStorable(type)) return OkStatus();
  return Unimplemented(where + ": element type " + ElementTypeName(type) +
                       " has no data the sim device can store (tokens and invalid types)");
}

StatusOr<int64_t> DenseBytes(ElementType type, const std::vector<int64_t>& dims,
                             const std::string& where) {
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(type, where));
  int64_t bytes = StoredElementBytes(type);
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument(where + ": dimension " + std::to_string(d) + " of " +
                             ShapeString(type, dims) + " is negative");
    }
    if (d == 0) empty = true;
  }
  if (empty) return int64_t{0};
  for (int64_t d : dims) {
    if (bytes > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgument(where + ": " + ShapeString(type, dims) +
                             " has more than 2^63 - 1 bytes");
    }
    bytes *= d;
  }
  return bytes;
}

std::vector<int64_t> RowMajorByteStrides(int64_t element_bytes, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = element_bytes;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

bool IsDenseRowMajor(int64_t element_bytes, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides) {
  for (int64_t d : dims) {
    if (d == 0) return true;
  }
  const std::vector<int64_t> dense = RowMajorByteStrides(element_bytes, dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] != 1 && strides[d] != dense[d]) return false;
  }
  return true;
}

StatusOr<std::vector<int64_t>> HostLayoutByteStrides(ElementType type,
                                                     const std::vector<int64_t>& dims,
                                                     const MemoryLayout& layout,
                                                     const std::string& where) {
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(type, where));
  PJRTKIT_RETURN_IF_ERROR(CheckMemoryLayout(layout, dims.size()));
  if (!layout.tiles.empty()) {
    return Unimplemented(where +
                         ": the sim device writes host arrays in dense layouts only; the "
                         "tiled host layout " +
                         EncodeXlaLayout(layout) + " is not supported");
  }
  const int64_t element_bytes = StoredElementBytes(type);
  if (layout.element_size_in_bits != 0 && layout.element_size_in_bits != element_bytes * 8 &&
      layout.element_size_in_bits != ElementTypeBits(type)) {
    return Unimplemented(where + ": host layout " + EncodeXlaLayout(layout) + " packs " +
                         ElementTypeName(type) + " elements into " +
                         std::to_string(layout.element_size_in_bits) +
                         " bits; the sim device writes whole elements only");
  }
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = element_bytes;
  for (int64_t d : layout.minor_to_major) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

Status CheckDeviceLayout(const MemoryLayout& layout, ElementType type,
                         const std::vector<int64_t>& dims, const std::string& where) {
  const bool element_size_ok =
      layout.element_size_in_bits == 0 || layout.element_size_in_bits == ElementTypeBits(type) ||
      layout.element_size_in_bits == 8 * StoredElementBytes(type);
  if (layout.tiles.empty() && element_size_ok &&
      SameElementOrder(layout, RowMajorLayout(dims.size()), dims)) {
    return OkStatus();
  }
  return Unimplemented(where + ": the sim device keeps arrays dense row-major; the layout " +
                       EncodeXlaLayout(layout) + " of " + ShapeString(type, dims) +
                       " is not supported");
}

void CopyStridedToDense(int64_t element_bytes, const std::vector<int64_t>& dims, const uint8_t* src,
                        const std::vector<int64_t>& src_strides, uint8_t* dst) {
  CopyStrided(element_bytes, dims, src, src_strides, dst, RowMajorByteStrides(element_bytes, dims));
}

void CopyDenseToStrided(int64_t element_bytes, const std::vector<int64_t>& dims, const uint8_t* src,
                        uint8_t* dst, const std::vector<int64_t>& dst_strides) {
  CopyStrided(element_bytes, dims, src, RowMajorByteStrides(element_bytes, dims), dst, dst_strides);
}

}  // namespace sim
}  // namespace pjrtkit
