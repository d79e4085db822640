// Kernels whose XLA:CPU semantics depend on the exact float type, not just its compute kind:
// logistic's expansion, reduce_precision in a type's own bits, bf16 maximum/minimum, f8e8m0fnu's
// sign and ceil, and conversions out of the low-precision types (README.md, "Numerics").
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/ew_kernels.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kChunk = 256;

// Rounds float results as `aux` (a LowRounding value) says, in place.
void RoundInPlace(int32_t aux, float* data, int64_t n) {
  if ((aux & kRoundLow) == 0) return;
  if (aux & kRoundViaF16) RoundBlock(LowFloat::kF16, data, data, n);
  RoundBlock(static_cast<LowFloat>(aux & 0xff), data, data, n);
}

// logistic(x) = 1 / (1 + exp(-x)) as XLA expands it, each step rounded as `aux` (a LowRounding)
// says: to f16 for f16 and the float8 types but f8e8m0fnu (which XLA computes in f16), not at all
// for bf16 and f8e8m0fnu (computed in f32) or f32/f64.
template <typename T>
void LogisticKernel(const KernelArgs& args) {
  const T* in = static_cast<const T*>(args.in[0]);
  T* out = static_cast<T*>(args.out);
  for (int64_t s = 0; s < args.n; s += kChunk) {
    const int64_t m = args.n - s < kChunk ? args.n - s : kChunk;
    T t[kChunk];
    for (int64_t i = 0; i < m; ++i) {
      t[i] = static_cast<T>(std::exp(-static_cast<double>(in[s + i])));
    }
    if (std::is_same<T, float>::value) RoundInPlace(args.aux, reinterpret_cast<float*>(t), m);
    for (int64_t i = 0; i < m; ++i) t[i] = T(1) + t[i];
    if (std::is_same<T, float>::value) RoundInPlace(args.aux, reinterpret_cast<float*>(t), m);
    for (int64_t i = 0; i < m; ++i) out[s + i] = T(1) / t[i];
  }
}

// reduce_precision on the bits of a float with `src_exponent` and `src_mantissa` bits: the
// mantissa rounded to nearest even, then overflow to inf and underflow (no denormals) to zero;
// NaN stays itself.
template <typename Bits>
Bits ReducePrecisionBits(Bits x, int src_exponent, int src_mantissa, int64_t exponent_bits,
                         int64_t mantissa_bits) {
  const Bits sign = Bits(1) << (src_exponent + src_mantissa);
  const Bits exp_mask = ((Bits(1) << src_exponent) - 1) << src_mantissa;
  const Bits magnitude = x & ~sign;
  if ((magnitude & exp_mask) == exp_mask && (magnitude & ~exp_mask) != 0) return x;  // NaN
  Bits r = x;
  if (mantissa_bits < src_mantissa) {
    const int drop = src_mantissa - static_cast<int>(mantissa_bits);
    r += ((Bits(1) << (drop - 1)) - 1) + ((r >> drop) & 1);
    r &= ~((Bits(1) << drop) - 1);
  }
  if (exponent_bits < src_exponent) {
    const int64_t src_bias = (int64_t(1) << (src_exponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t(1) << (exponent_bits - 1)) - 1;
    const Bits exp = r & exp_mask;
    if (exp > (static_cast<Bits>(src_bias + reduced_bias) << src_mantissa)) {
      r = (x & sign) | exp_mask;
    } else if (exp <= (static_cast<Bits>(src_bias - reduced_bias) << src_mantissa)) {
      r = x & sign;
    }
  }
  return r;
}

template <typename T>
void ReducePrecisionKernel(const KernelArgs& args) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr int kExponent = sizeof(T) == 4 ? 8 : 11;
  constexpr int kMantissa = sizeof(T) == 4 ? 23 : 52;
  const T* in = static_cast<const T*>(args.in[0]);
  T* out = static_cast<T*>(args.out);
  for (int64_t i = 0; i < args.n; ++i) {
    out[i] = BitCast<T>(ReducePrecisionBits<Bits>(BitCast<Bits>(in[i]), kExponent, kMantissa,
                                                  args.attr >> 32, args.attr & 0xffffffff));
  }
}

// reduce_precision on the f16 (aux = kF16) or bf16 (aux = kBF16) bits of float values: XLA
// reduces f16 and bf16 in their own bits, and the float8 types (f8e8m0fnu aside) through f16.
void ReducePrecision16Kernel(const KernelArgs& args) {
  const LowFloat format = static_cast<LowFloat>(args.aux);
  const int exponent = format == LowFloat::kF16 ? 5 : 8;
  const int mantissa = format == LowFloat::kF16 ? 10 : 7;
  const float* in = static_cast<const float*>(args.in[0]);
  float* out = static_cast<float*>(args.out);
  for (int64_t i = 0; i < args.n; ++i) {
    uint16_t bits;
    EncodeBlock(format, in + i, &bits, 1);
    bits = ReducePrecisionBits<uint16_t>(bits, exponent, mantissa, args.attr >> 32,
                                         args.attr & 0xffffffff);
    DecodeBlock(format, &bits, 1, out + i, 1);
  }
}

// bf16 maximum/minimum as XLA:CPU computes them: compared with denormals read as zero, ties
// going to the second operand unless the first is +0 (maximum) or -0 (minimum); denormals are
// returned as they are. NaN wins.
// The comparisons read flushed copies and the selects return the operands' own bits (a plain
// float select may compile to maxss/minss, which would flush the result too).
inline float Flushed(float x) {
  const uint32_t u = BitCast<uint32_t>(x);
  return (u & 0x7f800000u) == 0 ? BitCast<float>(u & 0x80000000u) : x;
}
struct Bf16MaxOp {
  static float Apply(float a, float b) {
    if (a != a) return a;
    if (b != b) return b;
    const float fa = Flushed(a), fb = Flushed(b);
    const uint32_t ua = BitCast<uint32_t>(a);
    if (fa > fb || (fb == 0 && fa == 0 && ua == 0)) return a;
    return b;
  }
};
struct Bf16MinOp {
  static float Apply(float a, float b) {
    if (a != a) return a;
    if (b != b) return b;
    const float fa = Flushed(a), fb = Flushed(b);
    const uint32_t ua = BitCast<uint32_t>(a);
    if (fa < fb || (fb == 0 && fa == 0 && ua == 0x80000000u)) return a;
    return b;
  }
};
struct Bf16ClampOp {
  static float Apply(float lo, float x, float hi) {
    return Bf16MinOp::Apply(Bf16MaxOp::Apply(x, lo), hi);
  }
};

// f8e8m0fnu has no zero and no sign: sign is 1 for every number and ceil lifts 2^-127 to 1 (XLA
// does not flush it there).
struct E8M0SignOp {
  static float Apply(float a) { return a != a ? a : 1.0f; }
};
struct E8M0CeilOp {
  static float Apply(float a) { return a != a ? a : (a < 1.0f ? 1.0f : std::ceil(a)); }
};

// A low-precision float's value as XLA's convert gives it, widened exactly to double.
double ToF64(LowFloat format, float x) {
  if (x != x) {
    float c = x;
    CanonicalizeBlock(format, &c, 1);
    return static_cast<double>(c);
  }
  if (format == LowFloat::kF8E8M0FNU) return DecodeToF64(format, EncodeFromF32(format, x));
  return static_cast<double>(x);  // bf16 denormals read as zero (flush mode), as in XLA.
}

// convert from a low-precision float (aux = LowFloat) to f32, f64, c64 or c128.
template <typename To>
void ConvertFromLowKernel(const KernelArgs& args) {
  const LowFloat format = static_cast<LowFloat>(args.aux);
  const float* in = static_cast<const float*>(args.in[0]);
  To* out = static_cast<To*>(args.out);
  for (int64_t i = 0; i < args.n; ++i) {
    if constexpr (std::is_same<To, float>::value) {
      float v = in[i];
      if (v != v) CanonicalizeBlock(format, &v, 1);
      out[i] = v;
    } else if constexpr (std::is_same<To, double>::value) {
      out[i] = ToF64(format, in[i]);
    } else if constexpr (std::is_same<To, Complex<float>>::value) {
      float v = in[i];
      if (v != v) CanonicalizeBlock(format, &v, 1);
      out[i] = {v, 0.0f};
    } else {
      out[i] = {ToF64(format, in[i]), 0.0};
    }
  }
}

// convert from bf16 to pred: nonzero bits (XLA counts bf16 denormals as nonzero).
void ConvertLowToPredKernel(const KernelArgs& args) {
  const float* in = static_cast<const float*>(args.in[0]);
  uint8_t* out = static_cast<uint8_t*>(args.out);
  for (int64_t i = 0; i < args.n; ++i) out[i] = (BitCast<uint32_t>(in[i]) & 0x7fffffffu) != 0;
}

}  // namespace

int32_t LowRounding(ElementType type, bool op_result) {
  LowFloat format;
  if (!LowFloatOf(type, &format)) return 0;
  const bool via_f16 = op_result && ElementTypeBits(type) == 8 && format != LowFloat::kF8E8M0FNU;
  return kRoundLow | static_cast<int32_t>(format) | (via_f16 ? kRoundViaF16 : 0);
}

void ApplyRounding(int32_t rounding, float* data, int64_t n) { RoundInPlace(rounding, data, n); }

KernelFn TypedFloatKernel(EwOp op, ElementType type) {
  const bool bf16 = type == ElementType::kBF16;
  const bool e8m0 = type == ElementType::kF8E8M0FNU;
  switch (op) {
    case EwOp::kLogistic:
      if (type == ElementType::kF64) return &LogisticKernel<double>;
      return IsFloatType(type) ? &LogisticKernel<float> : nullptr;
    case EwOp::kReducePrecision:
      if (type == ElementType::kF64) return &ReducePrecisionKernel<double>;
      if (type == ElementType::kF32 || e8m0) return &ReducePrecisionKernel<float>;
      return IsLowPrecisionFloat(type) ? &ReducePrecision16Kernel : nullptr;
    case EwOp::kMaximum: return bf16 ? &BinaryKernel<Bf16MaxOp, float, float> : nullptr;
    case EwOp::kMinimum: return bf16 ? &BinaryKernel<Bf16MinOp, float, float> : nullptr;
    case EwOp::kClamp: return bf16 ? &TernaryKernel<Bf16ClampOp, float, float> : nullptr;
    case EwOp::kSign: return e8m0 ? &UnaryKernel<E8M0SignOp, float, float> : nullptr;
    case EwOp::kCeil: return e8m0 ? &UnaryKernel<E8M0CeilOp, float, float> : nullptr;
    default: return nullptr;
  }
}

KernelFn ConvertFromLowFloat(ElementType to) {
  switch (to) {
    case ElementType::kF32: return &ConvertFromLowKernel<float>;
    case ElementType::kF64: return &ConvertFromLowKernel<double>;
    case ElementType::kC64: return &ConvertFromLowKernel<Complex<float>>;
    case ElementType::kC128: return &ConvertFromLowKernel<Complex<double>>;
    default: return nullptr;
  }
}

KernelFn ConvertBf16ToPred() { return &ConvertLowToPredKernel; }

}  // namespace sim
}  // namespace pjrtkit
