// Real floating-point kernels on f32 and f64 (f16, bf16 and f8 values are computed as f32 and
// rounded by the engine afterwards). Transcendental f32 functions are evaluated in f64 and rounded
// once. Denormal semantics follow XLA:CPU's flush-to-zero mode (README.md, "Denormals").
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/ew_kernels.h"
#include "xla_plugin/devices/sim/kernels/fast_math.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

// Bit layout of float and double.
template <typename T>
struct Layout;
template <>
struct Layout<float> {
  using Bits = uint32_t;
  static constexpr int kMantissa = 23;
  static constexpr int kExponent = 8;
  static constexpr Bits kSign = 0x80000000u;
  static constexpr Bits kExpMask = 0x7f800000u;
};
template <>
struct Layout<double> {
  using Bits = uint64_t;
  static constexpr int kMantissa = 52;
  static constexpr int kExponent = 11;
  static constexpr Bits kSign = 0x8000000000000000ull;
  static constexpr Bits kExpMask = 0x7ff0000000000000ull;
};

// A denormal as the zero of its sign (what the CPU's denormals-are-zero mode reads).
template <typename T>
inline T FlushDenormal(T x) {
  using L = Layout<T>;
  const auto b = BitCast<typename L::Bits>(x);
  return (b & L::kExpMask) == 0 ? BitCast<T>(static_cast<typename L::Bits>(b & L::kSign)) : x;
}

template <typename T>
inline bool IsDenormal(T x) {
  using L = Layout<T>;
  const auto b = BitCast<typename L::Bits>(x);
  return (b & L::kExpMask) == 0 && (b & ~(L::kExpMask | L::kSign)) != 0;
}

// The exact f64 value of x, denormals included (a plain widening under the denormals-are-zero
// mode reads them as zero).
inline double WidenExact(float x) {
  if (!IsDenormal(x)) return static_cast<double>(x);
  const double magnitude = static_cast<double>(BitCast<uint32_t>(x) & 0x7fffffu) * 0x1p-149;
  return std::signbit(x) ? -magnitude : magnitude;
}
inline double WidenExact(double x) { return x; }

struct AbsOp {
  template <typename T>
  static T Apply(T a) { return std::fabs(a); }
};
struct NegateOp {
  template <typename T>
  static T Apply(T a) { return -a; }
};
// +-1 with the sign of a; +-0 for zeros (and, as the hardware reads them, denormals); NaN stays.
struct SignOp {
  template <typename T>
  static T Apply(T a) {
    if (a != a) return a;
    return std::copysign(a != 0 ? T(1) : T(0), a);
  }
};
// f32 exp, log1p and tanh through fast_math.h (f64 polynomials, vectorizable); f64 through libm.
struct ExpOp {
  template <typename T>
  static T Apply(T a) {
    if constexpr (std::is_same<T, float>::value) return fast_math::Exp(a);
    return static_cast<T>(std::exp(static_cast<double>(a)));
  }
};
struct Expm1Op {
  template <typename T>
  static T Apply(T a) {
    return IsDenormal(a) ? a : static_cast<T>(std::expm1(static_cast<double>(a)));
  }
};
struct LogOp {
  template <typename T>
  static T Apply(T a) { return static_cast<T>(std::log(static_cast<double>(FlushDenormal(a)))); }
};
struct Log1pOp {
  template <typename T>
  static T Apply(T a) {
    if constexpr (std::is_same<T, float>::value) return fast_math::Log1p(a);
    return static_cast<T>(std::log1p(static_cast<double>(FlushDenormal(a))));
  }
};
struct LogisticOp {
  template <typename T>
  static T Apply(T a) {
    const double x = static_cast<double>(a);
    return static_cast<T>(x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)));
  }
};
// XLA's f32 tanh returns denormals as they are; its f64 tanh reads them as zero.
struct TanhOp {
  template <typename T>
  static T Apply(T a) {
    if constexpr (std::is_same<T, float>::value) return fast_math::Tanh(a);
    return static_cast<T>(std::tanh(static_cast<double>(FlushDenormal(a))));
  }
};
struct SineOp {
  template <typename T>
  static T Apply(T a) {
    return IsDenormal(a) ? a : static_cast<T>(std::sin(static_cast<double>(a)));
  }
};
struct CosineOp {
  template <typename T>
  static T Apply(T a) { return static_cast<T>(std::cos(static_cast<double>(a))); }
};
struct TanOp {
  template <typename T>
  static T Apply(T a) {
    return IsDenormal(a) ? a : static_cast<T>(std::tan(static_cast<double>(a)));
  }
};
struct SqrtOp {
  template <typename T>
  static T Apply(T a) { return std::sqrt(a); }
};
struct RsqrtOp {
  template <typename T>
  static T Apply(T a) { return static_cast<T>(1.0 / std::sqrt(static_cast<double>(a))); }
};
struct CbrtOp {
  template <typename T>
  static T Apply(T a) { return static_cast<T>(std::cbrt(static_cast<double>(a))); }
};
// floor and ceil read denormals as zero (XLA's roundss under DAZ): floor(-denormal) = -0.
struct FloorOp {
  template <typename T>
  static T Apply(T a) { return std::floor(FlushDenormal(a)); }
};
struct CeilOp {
  template <typename T>
  static T Apply(T a) { return std::ceil(FlushDenormal(a)); }
};
struct RoundAfzOp {
  template <typename T>
  static T Apply(T a) { return std::round(FlushDenormal(a)); }
};
struct RoundEvenOp {
  template <typename T>
  static T Apply(T a) { return std::nearbyint(FlushDenormal(a)); }
};
struct IsFiniteOp {
  template <typename T>
  static uint8_t Apply(T a) { return std::isfinite(a) ? 1 : 0; }
};
struct RealOp {
  template <typename T>
  static T Apply(T a) { return a; }
};
struct ImagOp {
  template <typename T>
  static T Apply(T) { return T(0); }
};
struct AddOp {
  template <typename T>
  static T Apply(T a, T b) { return a + b; }
};
struct SubtractOp {
  template <typename T>
  static T Apply(T a, T b) { return a - b; }
};
struct MultiplyOp {
  template <typename T>
  static T Apply(T a, T b) { return a * b; }
};
struct DivideOp {
  template <typename T>
  static T Apply(T a, T b) { return a / b; }
};
struct RemainderOp {
  template <typename T>
  static T Apply(T a, T b) { return std::fmod(a, b); }
};
struct PowerOp {
  template <typename T>
  static T Apply(T a, T b) {
    // XLA's pow reads denormal operands as they are: pow(0, denormal) = 0.
    return static_cast<T>(std::pow(WidenExact(a), WidenExact(b)));
  }
};
struct Atan2Op {
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(std::atan2(static_cast<double>(a), static_cast<double>(b)));
  }
};
// IEEE maximum/minimum: NaN wins, -0 < +0, denormals read (and returned) as zeros. Written as
// selects on the bits so the loops vectorize.
template <typename T, bool kMax>
inline T MaxMin(T a, T b) {
  using L = Layout<T>;
  using Bits = typename L::Bits;
  const Bits ua = BitCast<Bits>(a);
  const Bits ub = BitCast<Bits>(b);
  const Bits fa = (ua & L::kExpMask) == 0 ? (ua & L::kSign) : ua;
  const Bits fb = (ub & L::kExpMask) == 0 ? (ub & L::kSign) : ub;
  const T va = BitCast<T>(fa);
  const T vb = BitCast<T>(fb);
  const bool a_wins = kMax ? va > vb : va < vb;
  const bool b_wins = kMax ? vb > va : vb < va;
  Bits r = a_wins ? fa : (b_wins ? fb : (kMax ? (fa & fb) : (fa | fb)));
  r = b != b ? ub : r;
  r = a != a ? ua : r;
  return BitCast<T>(r);
}
struct MaxOp {
  template <typename T>
  static T Apply(T a, T b) { return MaxMin<T, true>(a, b); }
};
struct MinOp {
  template <typename T>
  static T Apply(T a, T b) { return MaxMin<T, false>(a, b); }
};
struct ClampOp {
  template <typename T>
  static T Apply(T lo, T x, T hi) { return MinOp::Apply(MaxOp::Apply(x, lo), hi); }
};

template <typename T>
KernelFn FloatKernelFor(EwOp op) {
  switch (op) {
    case EwOp::kAbs: return &UnaryKernel<AbsOp, T, T>;
    case EwOp::kNegate: return &UnaryKernel<NegateOp, T, T>;
    case EwOp::kSign: return &UnaryKernel<SignOp, T, T>;
    case EwOp::kExp: return &UnaryKernel<ExpOp, T, T>;
    case EwOp::kExpm1: return &UnaryKernel<Expm1Op, T, T>;
    case EwOp::kLog: return &UnaryKernel<LogOp, T, T>;
    case EwOp::kLog1p: return &UnaryKernel<Log1pOp, T, T>;
    case EwOp::kLogistic: return &UnaryKernel<LogisticOp, T, T>;
    case EwOp::kTanh: return &UnaryKernel<TanhOp, T, T>;
    case EwOp::kSine: return &UnaryKernel<SineOp, T, T>;
    case EwOp::kCosine: return &UnaryKernel<CosineOp, T, T>;
    case EwOp::kTan: return &UnaryKernel<TanOp, T, T>;
    case EwOp::kSqrt: return &UnaryKernel<SqrtOp, T, T>;
    case EwOp::kRsqrt: return &UnaryKernel<RsqrtOp, T, T>;
    case EwOp::kCbrt: return &UnaryKernel<CbrtOp, T, T>;
    case EwOp::kFloor: return &UnaryKernel<FloorOp, T, T>;
    case EwOp::kCeil: return &UnaryKernel<CeilOp, T, T>;
    case EwOp::kRoundNearestAfz: return &UnaryKernel<RoundAfzOp, T, T>;
    case EwOp::kRoundNearestEven: return &UnaryKernel<RoundEvenOp, T, T>;
    case EwOp::kIsFinite: return &UnaryKernel<IsFiniteOp, uint8_t, T>;
    case EwOp::kReal: return &UnaryKernel<RealOp, T, T>;
    case EwOp::kImag: return &UnaryKernel<ImagOp, T, T>;
    case EwOp::kAdd: return &BinaryKernel<AddOp, T, T>;
    case EwOp::kSubtract: return &BinaryKernel<SubtractOp, T, T>;
    case EwOp::kMultiply: return &BinaryKernel<MultiplyOp, T, T>;
    case EwOp::kDivide: return &BinaryKernel<DivideOp, T, T>;
    case EwOp::kRemainder: return &BinaryKernel<RemainderOp, T, T>;
    case EwOp::kPower: return &BinaryKernel<PowerOp, T, T>;
    case EwOp::kMaximum: return &BinaryKernel<MaxOp, T, T>;
    case EwOp::kMinimum: return &BinaryKernel<MinOp, T, T>;
    case EwOp::kAtan2: return &BinaryKernel<Atan2Op, T, T>;
    case EwOp::kClamp: return &TernaryKernel<ClampOp, T, T>;
    default: return nullptr;
  }
}

}  // namespace

KernelFn FloatKernel(EwOp op, ComputeKind kind) {
  if (kind == ComputeKind::kF32) return FloatKernelFor<float>(op);
  if (kind == ComputeKind::kF64) return FloatKernelFor<double>(op);
  return nullptr;
}

}  // namespace sim
}  // namespace pjrtkit
