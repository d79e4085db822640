// bfloat16 <-> float32 conversions (round to nearest even; NaN stays NaN).
#ifndef PJRTKIT_KERNELS_NATIVE_BFLOAT16_H_
#define PJRTKIT_KERNELS_NATIVE_BFLOAT16_H_

#include <cstdint>
#include <cstring>

namespace pjrtkit_kernels {

inline float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Element type of the kernels' inputs and outputs.
enum class ElementType { kF32, kBF16 };

// Reads n elements of `type` at `src` (element offset `offset`) as floats into `dst`.
inline void LoadRow(ElementType type, const void* src, int64_t offset, int64_t n, float* dst) {
  if (type == ElementType::kF32) {
    std::memcpy(dst, static_cast<const float*>(src) + offset, n * sizeof(float));
    return;
  }
  const uint16_t* p = static_cast<const uint16_t*>(src) + offset;
  for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFloat(p[i]);
}

// Writes n floats from `src` as `type` at `dst` (element offset `offset`).
inline void StoreRow(ElementType type, const float* src, int64_t n, void* dst, int64_t offset) {
  if (type == ElementType::kF32) {
    std::memcpy(static_cast<float*>(dst) + offset, src, n * sizeof(float));
    return;
  }
  uint16_t* p = static_cast<uint16_t*>(dst) + offset;
  for (int64_t i = 0; i < n; ++i) p[i] = FloatToBf16(src[i]);
}

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_NATIVE_BFLOAT16_H_
