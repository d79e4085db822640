#include "xla_plugin/devices/sim/kernels/float_codec.h"

#include <array>
#include <cmath>
#include <type_traits>

namespace pjrtkit {
namespace sim {
namespace {

// How a format spells NaN.
enum class NanStyle : uint8_t {
  kIeee,  // Exponent all ones, mantissa non-zero; canonical quiet NaN per format.
  kFn,    // Only S.1111.111 (no infinities).
  kFnuz,  // Only 0x80, the would-be -0 (no infinities, no -0).
  kE8M0,  // Only 0xff (no sign, no zero, no infinities).
};

// One format's constants. Codes are the bits without the sign.
struct FormatSpec {
  int bits;               // 8 or 16.
  int mantissa_bits;      // Explicit mantissa bits.
  int bias;               // Exponent bias.
  bool has_inf;           // Whether infinities exist.
  NanStyle nan;           // NaN encoding.
  uint32_t max_finite;    // Largest finite positive code.
  uint32_t inf_code;      // +inf code (when has_inf).
  uint32_t nan_code;      // Canonical NaN code (positive; the sign is added where it exists).
  uint32_t sign_bit;      // 0x8000 or 0x80; 0 for E8M0.
};

constexpr FormatSpec kF16Spec{16, 10, 15, true, NanStyle::kIeee, 0x7bff, 0x7c00, 0x7e00, 0x8000};
constexpr FormatSpec kBF16Spec{16, 7, 127, true, NanStyle::kIeee, 0x7f7f, 0x7f80, 0x7fc0, 0x8000};
constexpr FormatSpec kE5M2Spec{8, 2, 15, true, NanStyle::kIeee, 0x7b, 0x7c, 0x7e, 0x80};
constexpr FormatSpec kE4M3FNSpec{8, 3, 7, false, NanStyle::kFn, 0x7e, 0, 0x7f, 0x80};
constexpr FormatSpec kE4M3B11Spec{8, 3, 11, false, NanStyle::kFnuz, 0x7f, 0, 0x80, 0x80};
constexpr FormatSpec kE5M2FnuzSpec{8, 2, 16, false, NanStyle::kFnuz, 0x7f, 0, 0x80, 0x80};
constexpr FormatSpec kE4M3FnuzSpec{8, 3, 8, false, NanStyle::kFnuz, 0x7f, 0, 0x80, 0x80};
constexpr FormatSpec kE4M3Spec{8, 3, 7, true, NanStyle::kIeee, 0x77, 0x78, 0x7c, 0x80};
constexpr FormatSpec kE3M4Spec{8, 4, 3, true, NanStyle::kIeee, 0x6f, 0x70, 0x78, 0x80};
constexpr FormatSpec kE8M0Spec{8, 0, 127, false, NanStyle::kE8M0, 0xfe, 0, 0xff, 0};

// Bits and layout of the source float types.
template <typename S>
struct SourceSpec;
template <>
struct SourceSpec<float> {
  using Bits = uint32_t;
  static constexpr int kBits = 32;
  static constexpr int kMantissa = 23;
  static constexpr int kBias = 127;
};
template <>
struct SourceSpec<double> {
  using Bits = uint64_t;
  static constexpr int kBits = 64;
  static constexpr int kMantissa = 52;
  static constexpr int kBias = 1023;
};

template <const FormatSpec& F>
constexpr uint32_t NanWithSign(uint32_t sign) {
  return F.nan == NanStyle::kFnuz || F.nan == NanStyle::kE8M0 ? F.nan_code : (sign | F.nan_code);
}

// Round to nearest even into an IEEE-like format (every format but E8M0), from float or double.
template <const FormatSpec& F, typename S>
inline uint32_t EncodeIeeeLike(S x) {
  using Src = SourceSpec<S>;
  using U = typename Src::Bits;
  constexpr U kSignMask = U(1) << (Src::kBits - 1);
  constexpr U kInf = ((U(1) << (Src::kBits - 1 - Src::kMantissa)) - 1) << Src::kMantissa;
  constexpr U kMantMask = (U(1) << Src::kMantissa) - 1;
  constexpr int kEmin = 1 - F.bias;
  const U u = BitCast<U>(x);
  const uint32_t sign = (u & kSignMask) ? F.sign_bit : 0;
  const U a = u & ~kSignMask;
  if (a >= kInf) {
    if (a > kInf) return NanWithSign<F>(sign);
    return F.has_inf ? (sign | F.inf_code) : NanWithSign<F>(sign);
  }
  const int biased = static_cast<int>(a >> Src::kMantissa);
  U sig = a & kMantMask;
  int e = 1 - Src::kBias;
  if (biased != 0) {
    sig |= U(1) << Src::kMantissa;
    e = biased - Src::kBias;
  }
  const int te = e < kEmin ? kEmin : e;
  const int shift = (te - F.mantissa_bits) - (e - Src::kMantissa);
  U r = 0;
  if (shift < Src::kMantissa + 3) {
    const U half = U(1) << (shift - 1);
    const U rem = sig & ((U(1) << shift) - 1);
    r = sig >> shift;
    if (rem > half || (rem == half && (r & 1))) ++r;
  }
  const uint32_t code =
      (static_cast<uint32_t>(te - kEmin) << F.mantissa_bits) + static_cast<uint32_t>(r);
  if (code > F.max_finite) return F.has_inf ? (sign | F.inf_code) : NanWithSign<F>(sign);
  if (code == 0 && F.nan == NanStyle::kFnuz) return 0;
  return sign | code;
}

// f32 -> f16 with x86 vcvtps2ph's NaN rule (quiet bit set, top payload bits kept).
inline uint32_t EncodeF16(float x) {
  const uint32_t u = BitCast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return ((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu);
  }
  return EncodeIeeeLike<kF16Spec>(x);
}

// f32 -> bf16, round to nearest even, NaN to the canonical quiet NaN with its sign.
inline uint32_t EncodeBF16(float x) {
  const uint32_t u = BitCast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return ((u >> 16) & 0x8000u) | 0x7fc0u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

// f32 -> f8e8m0fnu: the nearest power of two, ties up; NaN for NaN, inf, zero, negatives and
// overflow. f32 denormals give 2^-126 above 2^-127 and 2^-127 otherwise (ml_dtypes and XLA).
inline uint32_t EncodeE8M0(float x) {
  const uint32_t u = BitCast<uint32_t>(x);
  if ((u >> 31) != 0 || u >= 0x7f800000u || u == 0) return 0xff;
  const uint32_t biased = u >> 23;
  if (biased == 0) return u > 0x400000u ? 1 : 0;
  const uint32_t code = biased + ((u & 0x400000u) != 0 ? 1 : 0);
  return code > 254 ? 0xff : code;
}

// f64 -> f8e8m0fnu as XLA:CPU converts: like EncodeE8M0 for 2^-126 and up; 2^-127 exactly gives
// 2^-127, values between 2^-127 and 2^-126 give 2^-126 and smaller ones NaN.
inline uint32_t EncodeE8M0FromF64(double x) {
  const uint64_t u = BitCast<uint64_t>(x);
  constexpr uint64_t kPow2Minus127 = 0x3800000000000000ull;
  constexpr uint64_t kPow2Minus126 = 0x3810000000000000ull;
  if ((u >> 63) != 0 || u >= 0x7ff0000000000000ull || u < kPow2Minus127) return 0xff;
  if (u == kPow2Minus127) return 0;
  if (u < kPow2Minus126) return 1;
  const uint64_t code = (u >> 52) - 1023 + 127 + ((u >> 51) & 1);
  return code > 254 ? 0xff : static_cast<uint32_t>(code);
}

// f16 bits -> float, exactly; signaling NaNs come back quiet (x86 vcvtph2ps).
inline float DecodeF16(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) {
    return BitCast<float>(sign | 0x7f800000u | (mant != 0 ? 0x400000u : 0) | (mant << 13));
  }
  if (exp != 0) return BitCast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  // Denormal or zero: mant * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

inline float DecodeBF16(uint32_t b) { return BitCast<float>(b << 16); }

// The exact value of an 8-bit code (table builder).
float DecodeF8Slow(const FormatSpec& f, uint32_t code) {
  const float kNaN = BitCast<float>(0x7fc00000u);
  if (f.nan == NanStyle::kE8M0) {
    // Built from bits: 2^-127 (code 0) is an f32 denormal, which arithmetic under
    // ScopedFlushDenormals would flush.
    if (code == 0xff) return kNaN;
    return BitCast<float>(code == 0 ? 0x00400000u : code << 23);
  }
  if (f.nan == NanStyle::kFnuz && code == 0x80) return kNaN;
  const bool negative = (code & 0x80) != 0;
  const uint32_t c = code & 0x7f;
  const int mant_bits = f.mantissa_bits;
  const uint32_t exp = c >> mant_bits;
  const uint32_t mant = c & ((1u << mant_bits) - 1);
  float magnitude;
  if ((f.nan == NanStyle::kIeee && exp == (0x7fu >> mant_bits)) ||
      (f.nan == NanStyle::kFn && c == 0x7f)) {
    magnitude = (f.nan == NanStyle::kIeee && mant == 0) ? INFINITY : kNaN;
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), 1 - f.bias - mant_bits);
  } else {
    magnitude = std::ldexp(static_cast<float>((1u << mant_bits) | mant),
                           static_cast<int>(exp) - f.bias - mant_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Decode table of one 8-bit format, built once (immutable afterwards).
template <const FormatSpec& F>
const std::array<float, 256>& F8Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (uint32_t c = 0; c < 256; ++c) t[c] = DecodeF8Slow(F, c);
    return t;
  }();
  return table;
}

// The codec of one format as a type, so block loops inline it.
template <LowFloat L>
struct Codec;

// A NaN's payload bits below the quiet bit (float).
constexpr uint32_t kPayloadMask = 0x3fffffu;

// The lossless float of an 8-bit NaN code: the code in the low byte; negative when the code's top
// bit is set (FNUZ's 0x80 then sorts below every number in the total order, as XLA's does).
inline float LosslessF8Nan(uint32_t code, bool signed_format) {
  const uint32_t sign = (signed_format && (code & 0x80)) ? 0x80000000u : 0;
  return BitCast<float>(sign | 0x7fc00000u | code);
}

// The 8-bit code a lossless float NaN carries, when it carries a NaN code of the format.
template <typename C>
inline bool CarriedF8Code(float x, uint32_t* code) {
  const uint32_t u = BitCast<uint32_t>(x);
  if ((u & 0x7fffffffu) <= 0x7f800000u || (u & kPayloadMask & ~0xffu) != 0) return false;
  *code = u & 0xff;
  return *code != 0 && std::isnan(C::Decode(*code));
}

template <>
struct Codec<LowFloat::kF16> {
  using Bits = uint16_t;
  static uint32_t Encode(float x) { return EncodeF16(x); }
  static float DecodeLossless(uint32_t h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) {
      return BitCast<float>(((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13));
    }
    return DecodeF16(h);
  }
  static uint32_t EncodeLossless(float x) {
    const uint32_t u = BitCast<uint32_t>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u && ((u >> 13) & 0x3ffu) != 0) {
      return ((u >> 16) & 0x8000u) | 0x7c00u | ((u >> 13) & 0x3ffu);
    }
    return EncodeF16(x);
  }
  static float Canonical(float x) {
    const uint32_t u = BitCast<uint32_t>(x);
    return (u & 0x7fffffffu) > 0x7f800000u ? BitCast<float>(u | 0x400000u) : x;
  }
  static uint32_t EncodeF64(double x) {
    const uint64_t u = BitCast<uint64_t>(x);
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) {
      return static_cast<uint32_t>((u >> 48) & 0x8000u) | 0x7e00u;
    }
    return EncodeF16(static_cast<float>(x));
  }
  static float Decode(uint32_t b) { return DecodeF16(b); }
};

template <>
struct Codec<LowFloat::kBF16> {
  using Bits = uint16_t;
  static uint32_t Encode(float x) { return EncodeBF16(x); }
  static float DecodeLossless(uint32_t b) { return DecodeBF16(b); }
  static uint32_t EncodeLossless(float x) {
    const uint32_t u = BitCast<uint32_t>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u && ((u >> 16) & 0x7fu) != 0) return u >> 16;
    return EncodeBF16(x);
  }
  static float Canonical(float x) { return x; }
  static uint32_t EncodeF64(double x) { return EncodeBF16(static_cast<float>(x)); }
  static float Decode(uint32_t b) { return DecodeBF16(b); }
};

// The float8 codecs: decoding by table; the lossless forms carry NaN codes (see the header).
template <typename Self, bool kSigned>
struct F8Lossless {
  static float DecodeLossless(uint32_t b) {
    const float v = Self::Decode(b);
    return std::isnan(v) ? LosslessF8Nan(b & 0xff, kSigned) : v;
  }
  static uint32_t EncodeLossless(float x) {
    uint32_t code;
    return CarriedF8Code<Self>(x, &code) ? code : Self::Encode(x);
  }
  static float Canonical(float x) {
    uint32_t code;
    return CarriedF8Code<Self>(x, &code) ? Self::Decode(code) : x;
  }
};

template <>
struct Codec<LowFloat::kF8E8M0FNU> : F8Lossless<Codec<LowFloat::kF8E8M0FNU>, false> {
  using Bits = uint8_t;
  static uint32_t Encode(float x) { return EncodeE8M0(x); }
  static uint32_t EncodeF64(double x) { return EncodeE8M0FromF64(x); }
  static float Decode(uint32_t b) { return F8Table<kE8M0Spec>()[b & 0xff]; }
};

template <const FormatSpec& F>
struct F8Codec : F8Lossless<F8Codec<F>, true> {
  using Bits = uint8_t;
  static uint32_t Encode(float x) { return EncodeIeeeLike<F>(x); }
  static uint32_t EncodeF64(double x) { return EncodeIeeeLike<F>(x); }
  static float Decode(uint32_t b) { return F8Table<F>()[b & 0xff]; }
};
template <>
struct Codec<LowFloat::kF8E5M2> : F8Codec<kE5M2Spec> {};
template <>
struct Codec<LowFloat::kF8E4M3FN> : F8Codec<kE4M3FNSpec> {};
template <>
struct Codec<LowFloat::kF8E4M3B11FNUZ> : F8Codec<kE4M3B11Spec> {};
template <>
struct Codec<LowFloat::kF8E5M2FNUZ> : F8Codec<kE5M2FnuzSpec> {};
template <>
struct Codec<LowFloat::kF8E4M3FNUZ> : F8Codec<kE4M3FnuzSpec> {};
template <>
struct Codec<LowFloat::kF8E4M3> : F8Codec<kE4M3Spec> {};
template <>
struct Codec<LowFloat::kF8E3M4> : F8Codec<kE3M4Spec> {};

template <LowFloat L>
void DecodeBlockT(const void* src, int64_t stride, float* __restrict dst, int64_t n) {
  using C = Codec<L>;
  const typename C::Bits* s = static_cast<const typename C::Bits*>(src);
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = C::DecodeLossless(s[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = C::DecodeLossless(s[i * stride]);
  }
}

template <LowFloat L>
void EncodeBlockT(const float* __restrict src, void* dst, int64_t n) {
  using C = Codec<L>;
  typename C::Bits* d = static_cast<typename C::Bits*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<typename C::Bits>(C::EncodeLossless(src[i]));
}

template <LowFloat L>
void RoundBlockT(const float* src, float* dst, int64_t n) {
  using C = Codec<L>;
  for (int64_t i = 0; i < n; ++i) dst[i] = C::DecodeLossless(C::Encode(src[i]));
}

template <LowFloat L>
void CanonicalizeBlockT(float* data, int64_t n) {
  using C = Codec<L>;
  for (int64_t i = 0; i < n; ++i) {
    if (data[i] != data[i]) data[i] = C::Canonical(data[i]);
  }
}

template <LowFloat L>
void RoundF64BlockT(const double* __restrict src, float* __restrict dst, int64_t n) {
  using C = Codec<L>;
  for (int64_t i = 0; i < n; ++i) dst[i] = C::DecodeLossless(C::EncodeF64(src[i]));
}

// Calls fn.template operator()<L>() for the runtime format `format`.
template <typename Fn>
auto Dispatch(LowFloat format, Fn&& fn) {
  switch (format) {
    case LowFloat::kF16: return fn(Codec<LowFloat::kF16>());
    case LowFloat::kBF16: return fn(Codec<LowFloat::kBF16>());
    case LowFloat::kF8E5M2: return fn(Codec<LowFloat::kF8E5M2>());
    case LowFloat::kF8E4M3FN: return fn(Codec<LowFloat::kF8E4M3FN>());
    case LowFloat::kF8E4M3B11FNUZ: return fn(Codec<LowFloat::kF8E4M3B11FNUZ>());
    case LowFloat::kF8E5M2FNUZ: return fn(Codec<LowFloat::kF8E5M2FNUZ>());
    case LowFloat::kF8E4M3FNUZ: return fn(Codec<LowFloat::kF8E4M3FNUZ>());
    case LowFloat::kF8E4M3: return fn(Codec<LowFloat::kF8E4M3>());
    case LowFloat::kF8E3M4: return fn(Codec<LowFloat::kF8E3M4>());
    case LowFloat::kF8E8M0FNU: break;
  }
  return fn(Codec<LowFloat::kF8E8M0FNU>());
}

}  // namespace

bool LowFloatOf(ElementType type, LowFloat* format) {
  switch (type) {
    case ElementType::kF16: *format = LowFloat::kF16; return true;
    case ElementType::kBF16: *format = LowFloat::kBF16; return true;
    case ElementType::kF8E5M2: *format = LowFloat::kF8E5M2; return true;
    case ElementType::kF8E4M3FN: *format = LowFloat::kF8E4M3FN; return true;
    case ElementType::kF8E4M3B11FNUZ: *format = LowFloat::kF8E4M3B11FNUZ; return true;
    case ElementType::kF8E5M2FNUZ: *format = LowFloat::kF8E5M2FNUZ; return true;
    case ElementType::kF8E4M3FNUZ: *format = LowFloat::kF8E4M3FNUZ; return true;
    case ElementType::kF8E4M3: *format = LowFloat::kF8E4M3; return true;
    case ElementType::kF8E3M4: *format = LowFloat::kF8E3M4; return true;
    case ElementType::kF8E8M0FNU: *format = LowFloat::kF8E8M0FNU; return true;
    default: return false;
  }
}

uint32_t EncodeFromF32(LowFloat format, float x) {
  return Dispatch(format, [x](auto codec) { return decltype(codec)::Encode(x); });
}

uint32_t EncodeFromF64(LowFloat format, double x) {
  return Dispatch(format, [x](auto codec) { return decltype(codec)::EncodeF64(x); });
}

float DecodeToF32(LowFloat format, uint32_t bits) {
  return Dispatch(format, [bits](auto codec) { return decltype(codec)::Decode(bits); });
}

double DecodeToF64(LowFloat format, uint32_t bits) {
  const float v = DecodeToF32(format, bits);
  const uint32_t u = BitCast<uint32_t>(v);
  if ((u & 0x7f800000u) != 0 || (u & 0x7fffffu) == 0) return v;  // Not an f32 denormal.
  if (format == LowFloat::kF8E8M0FNU) return 0x1p-127;
  return (u >> 31) != 0 ? -0.0 : 0.0;  // bf16 denormals: XLA widens through f32, reading zero.
}

namespace {

// Calls fn(std::integral_constant<LowFloat, format>()).
template <typename Fn>
void ForFormat(LowFloat format, Fn&& fn) {
  switch (format) {
    case LowFloat::kF16: return fn(std::integral_constant<LowFloat, LowFloat::kF16>());
    case LowFloat::kBF16: return fn(std::integral_constant<LowFloat, LowFloat::kBF16>());
    case LowFloat::kF8E5M2: return fn(std::integral_constant<LowFloat, LowFloat::kF8E5M2>());
    case LowFloat::kF8E4M3FN: return fn(std::integral_constant<LowFloat, LowFloat::kF8E4M3FN>());
    case LowFloat::kF8E4M3B11FNUZ:
      return fn(std::integral_constant<LowFloat, LowFloat::kF8E4M3B11FNUZ>());
    case LowFloat::kF8E5M2FNUZ:
      return fn(std::integral_constant<LowFloat, LowFloat::kF8E5M2FNUZ>());
    case LowFloat::kF8E4M3FNUZ:
      return fn(std::integral_constant<LowFloat, LowFloat::kF8E4M3FNUZ>());
    case LowFloat::kF8E4M3: return fn(std::integral_constant<LowFloat, LowFloat::kF8E4M3>());
    case LowFloat::kF8E3M4: return fn(std::integral_constant<LowFloat, LowFloat::kF8E3M4>());
    case LowFloat::kF8E8M0FNU:
      return fn(std::integral_constant<LowFloat, LowFloat::kF8E8M0FNU>());
  }
}

}  // namespace

void DecodeBlock(LowFloat format, const void* src, int64_t stride, float* dst, int64_t n) {
  ForFormat(format, [&](auto f) { DecodeBlockT<decltype(f)::value>(src, stride, dst, n); });
}

void EncodeBlock(LowFloat format, const float* src, void* dst, int64_t n) {
  ForFormat(format, [&](auto f) { EncodeBlockT<decltype(f)::value>(src, dst, n); });
}

void RoundBlock(LowFloat format, const float* src, float* dst, int64_t n) {
  ForFormat(format, [&](auto f) { RoundBlockT<decltype(f)::value>(src, dst, n); });
}

void RoundF64Block(LowFloat format, const double* src, float* dst, int64_t n) {
  ForFormat(format, [&](auto f) { RoundF64BlockT<decltype(f)::value>(src, dst, n); });
}

void CanonicalizeBlock(LowFloat format, float* data, int64_t n) {
  ForFormat(format, [&](auto f) { CanonicalizeBlockT<decltype(f)::value>(data, n); });
}

}  // namespace sim
}  // namespace pjrtkit
