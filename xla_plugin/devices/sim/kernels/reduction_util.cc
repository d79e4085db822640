#include "xla_plugin/devices/sim/kernels/reduction_util.h"

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

// Copies the block of dst dimensions [d, rank) starting at src/dst (row-major dst).
template <typename T>
void PermuteBlock(const T* src, const std::vector<int64_t>& sizes,
                  const std::vector<int64_t>& src_strides, size_t d, T** dst) {
  const int64_t size = sizes[d];
  const int64_t stride = src_strides[d];
  if (d + 1 == sizes.size()) {
    T* out = *dst;
    if (stride == 1) {
      std::memcpy(out, src, size * sizeof(T));
    } else {
      for (int64_t k = 0; k < size; ++k) out[k] = src[k * stride];
    }
    *dst = out + size;
    return;
  }
  for (int64_t k = 0; k < size; ++k) PermuteBlock(src + k * stride, sizes, src_strides, d + 1, dst);
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
    T* out = static_cast<T*>(dst);
    PermuteBlock(static_cast<const T*>(src), sizes, src_strides, 0, &out);
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
