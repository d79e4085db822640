#include "xla_plugin/devices/sim/kernels/reduction_util.h"

#include <algorithm>
#include <cstring>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"

namespace pjrtkit {
namespace sim {
namespace {

// An element of 16 bytes (c128), copied as a whole.
struct Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

// Calls fn.template operator()<T>() with the unsigned type of `bytes` bytes.
template <typename Fn>
void BySize(int64_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      fn(uint8_t());
      break;
    case 2:
      fn(uint16_t());
      break;
    case 4:
      fn(uint32_t());
      break;
    case 8:
      fn(uint64_t());
      break;
    default:
      fn(Bytes16());
      break;
  }
}

// Elements per side of the tiles of a transposed copy.
constexpr int64_t kTile = 32;

// dst[i * dst_stride + j] = src[i + j * src_stride] for i < rows, j < cols, in tiles.
template <typename T>
void TransposeTiles(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols) {
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    const int64_t i1 = std::min(rows, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j) {
        for (int64_t i = i0; i < i1; ++i) dst[i * dst_stride + j] = src[i + j * src_stride];
      }
    }
  }
}

// The permuted copy: `sizes` and `src_strides` per dst dimension (dst row-major). The last dst
// dimension is copied as contiguous runs when the source is contiguous along it; otherwise the
// dst dimension `unit` along which the source is contiguous and the last one are transposed in
// tiles, for every index of the other dimensions.
template <typename T>
void Permute(const T* src, const std::vector<int64_t>& sizes,
             const std::vector<int64_t>& src_strides, T* dst) {
  const int rank = static_cast<int>(sizes.size());
  const int last = rank - 1;
  int unit = -1;
  for (int j = 0; j < rank; ++j) {
    if (src_strides[j] == 1 && sizes[j] > 1) unit = j;
  }
  std::vector<int64_t> dst_strides(rank, 1);
  for (int j = rank - 2; j >= 0; --j) dst_strides[j] = dst_strides[j + 1] * sizes[j + 1];
  const bool tiled = unit >= 0 && unit != last && sizes[last] > 1;
  // The dimensions the odometer walks: all but the last (and `unit` when tiled).
  std::vector<int> outer;
  for (int j = 0; j < last; ++j) {
    if (!(tiled && j == unit)) outer.push_back(j);
  }
  std::vector<int64_t> index(outer.size(), 0);
  int64_t s = 0, d = 0;
  while (true) {
    if (tiled) {
      TransposeTiles(src + s, src_strides[last], dst + d, dst_strides[unit], sizes[unit],
                     sizes[last]);
    } else if (src_strides[last] == 1) {
      std::memcpy(dst + d, src + s, sizes[last] * sizeof(T));
    } else {
      for (int64_t k = 0; k < sizes[last]; ++k) dst[d + k] = src[s + k * src_strides[last]];
    }
    int k = static_cast<int>(outer.size()) - 1;
    for (; k >= 0; --k) {
      const int j = outer[k];
      s += src_strides[j];
      d += dst_strides[j];
      if (++index[k] < sizes[j]) break;
      s -= index[k] * src_strides[j];
      d -= index[k] * dst_strides[j];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace

const void* PromoteArray(ElementType from, const void* data, ElementType to, int64_t n,
                         std::vector<char>* storage) {
  if (from == to) return data;
  storage->resize(static_cast<size_t>(n * TypeBytes(to)) + 1);
  if (n > 0) ConvertArray(from, data, to, storage->data(), n);
  return storage->data();
}

void FillWithScalar(void* dst, const void* scalar, int64_t bytes, int64_t n) {
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    T value;
    std::memcpy(&value, scalar, sizeof(T));
    T* out = static_cast<T*>(dst);
    for (int64_t k = 0; k < n; ++k) out[k] = value;
  });
}

void PermuteCopy(const void* src, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& perm, int64_t bytes, void* dst) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) return;
  if (dims.empty()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  std::vector<int64_t> sizes(perm.size()), src_strides(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) {
    sizes[j] = dims[perm[j]];
    src_strides[j] = strides[perm[j]];
  }
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    Permute(static_cast<const T*>(src), sizes, src_strides, static_cast<T*>(dst));
  });
}

void GatherElements(const void* src, const int64_t* offsets, int64_t count, int64_t bytes,
                    void* dst) {
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    for (int64_t k = 0; k < count; ++k) out[k] = in[offsets[k]];
  });
}

void ScatterElements(const void* src, const int64_t* offsets, int64_t count, int64_t bytes,
                     void* dst) {
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    for (int64_t k = 0; k < count; ++k) out[offsets[k]] = in[k];
  });
}

void GatherStrided(const void* src, int64_t stride, int64_t count, int64_t bytes, void* dst) {
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    for (int64_t k = 0; k < count; ++k) out[k] = in[k * stride];
  });
}

void ScatterStrided(const void* src, int64_t count, int64_t bytes, void* dst, int64_t stride) {
  BySize(bytes, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    for (int64_t k = 0; k < count; ++k) out[k * stride] = in[k];
  });
}

}  // namespace sim
}  // namespace pjrtkit
