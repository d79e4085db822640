#include "xla_plugin/devices/sim/kernels/block_io.h"

#include <cstring>

#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

template <int kBytes>
struct Element {
  unsigned char bytes[kBytes];
};

template <typename T>
void CopyStrided(const void* src, int64_t stride, void* dst, int64_t n) {
  const T* __restrict s = static_cast<const T*>(src);
  T* __restrict d = static_cast<T*>(dst);
  if (stride == 0) {
    const T v = s[0];
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
  }
}

}  // namespace

bool ComputeIsStorage(ElementType type) { return !IsLowPrecisionFloat(type); }

void LoadElements(ElementType type, const void* src, int64_t stride, void* dst, int64_t n) {
  LowFloat format;
  if (LowFloatOf(type, &format)) {
    DecodeBlock(format, src, stride, static_cast<float*>(dst), n);
    return;
  }
  const int bytes = StorageBytes(type);
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * bytes);
    return;
  }
  switch (bytes) {
    case 1: return CopyStrided<uint8_t>(src, stride, dst, n);
    case 2: return CopyStrided<uint16_t>(src, stride, dst, n);
    case 4: return CopyStrided<uint32_t>(src, stride, dst, n);
    case 8: return CopyStrided<uint64_t>(src, stride, dst, n);
    case 16: return CopyStrided<Element<16>>(src, stride, dst, n);
    default: return;
  }
}

void StoreElements(ElementType type, const void* src, void* dst, int64_t n) {
  LowFloat format;
  if (LowFloatOf(type, &format)) {
    EncodeBlock(format, static_cast<const float*>(src), dst, n);
    return;
  }
  if (n > 0 && src != dst) std::memcpy(dst, src, static_cast<size_t>(n) * StorageBytes(type));
}

}  // namespace sim
}  // namespace pjrtkit
