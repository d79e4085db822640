// TEST-ONLY stand-in for fused_elementwise.h's ConvertArray until the numerics engine lands on
// main (then tests link the real :fused_elementwise library and this file goes away). Covers the
// conversions the contraction and collective tests use: pred, s8..u64, f16, bf16, f32, f64, c64,
// c128; round-to-nearest-even into f16/bf16; integer narrowing keeps the low bits.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace {

struct Value {
  bool is_int = false;
  int64_t i = 0;
  double re = 0, im = 0;
};

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(man), -24);
  } else if (exp == 31) {
    v = man ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(man | 1024), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

uint16_t FloatToHalf(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (f >= 65520.0f) return sign | 0x7c00;
  if (f < std::ldexp(1.0f, -14)) {
    const float scaled = std::nearbyint(std::ldexp(f, 24));  // Subnormal units, RNE.
    return sign | static_cast<uint16_t>(scaled);
  }
  int e;
  std::frexp(f, &e);  // f = m * 2^e, m in [0.5, 1).
  const float units = std::nearbyint(std::ldexp(f, 11 - e));  // 11 significant bits, RNE.
  uint32_t man = static_cast<uint32_t>(units);
  int exp = e - 1 + 15;
  if (man == 2048) {
    man = 1024;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(man & 1023);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
T Load(const void* p, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(void* p, int64_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}

Value Read(ElementType type, const void* p, int64_t i) {
  Value v;
  v.is_int = true;
  switch (type) {
    case ElementType::kPred: v.i = Load<uint8_t>(p, i) != 0; break;
    case ElementType::kS8: v.i = Load<int8_t>(p, i); break;
    case ElementType::kS16: v.i = Load<int16_t>(p, i); break;
    case ElementType::kS32: v.i = Load<int32_t>(p, i); break;
    case ElementType::kS64: v.i = Load<int64_t>(p, i); break;
    case ElementType::kU8: v.i = Load<uint8_t>(p, i); break;
    case ElementType::kU16: v.i = Load<uint16_t>(p, i); break;
    case ElementType::kU32: v.i = Load<uint32_t>(p, i); break;
    case ElementType::kU64: v.i = static_cast<int64_t>(Load<uint64_t>(p, i)); break;
    default: v.is_int = false; break;
  }
  if (v.is_int) {
    v.re = type == ElementType::kU64 ? static_cast<double>(static_cast<uint64_t>(v.i))
                                     : static_cast<double>(v.i);
    return v;
  }
  switch (type) {
    case ElementType::kF16: v.re = HalfToFloat(Load<uint16_t>(p, i)); break;
    case ElementType::kBF16: v.re = Bf16ToFloat(Load<uint16_t>(p, i)); break;
    case ElementType::kF32: v.re = Load<float>(p, i); break;
    case ElementType::kF64: v.re = Load<double>(p, i); break;
    case ElementType::kC64:
      v.re = Load<float>(p, 2 * i);
      v.im = Load<float>(p, 2 * i + 1);
      break;
    case ElementType::kC128:
      v.re = Load<double>(p, 2 * i);
      v.im = Load<double>(p, 2 * i + 1);
      break;
    default: break;
  }
  return v;
}

void Write(ElementType type, void* p, int64_t i, const Value& v) {
  const int64_t n = v.is_int ? v.i : static_cast<int64_t>(v.re);
  switch (type) {
    case ElementType::kPred: Store<uint8_t>(p, i, v.is_int ? v.i != 0 : v.re != 0); break;
    case ElementType::kS8: Store<int8_t>(p, i, static_cast<int8_t>(n)); break;
    case ElementType::kS16: Store<int16_t>(p, i, static_cast<int16_t>(n)); break;
    case ElementType::kS32: Store<int32_t>(p, i, static_cast<int32_t>(n)); break;
    case ElementType::kS64: Store<int64_t>(p, i, n); break;
    case ElementType::kU8: Store<uint8_t>(p, i, static_cast<uint8_t>(n)); break;
    case ElementType::kU16: Store<uint16_t>(p, i, static_cast<uint16_t>(n)); break;
    case ElementType::kU32: Store<uint32_t>(p, i, static_cast<uint32_t>(n)); break;
    case ElementType::kU64: Store<uint64_t>(p, i, static_cast<uint64_t>(n)); break;
    case ElementType::kF16: Store<uint16_t>(p, i, FloatToHalf(static_cast<float>(v.re))); break;
    case ElementType::kBF16: Store<uint16_t>(p, i, FloatToBf16(static_cast<float>(v.re))); break;
    case ElementType::kF32: Store<float>(p, i, static_cast<float>(v.re)); break;
    case ElementType::kF64: Store<double>(p, i, v.re); break;
    case ElementType::kC64:
      Store<float>(p, 2 * i, static_cast<float>(v.re));
      Store<float>(p, 2 * i + 1, static_cast<float>(v.im));
      break;
    case ElementType::kC128:
      Store<double>(p, 2 * i, v.re);
      Store<double>(p, 2 * i + 1, v.im);
      break;
    default: break;
  }
}

}  // namespace

void ConvertArray(ElementType from, const void* src, ElementType to, void* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) Write(to, dst, i, Read(from, src, i));
}

}  // namespace sim
}  // namespace pjrtkit
