// convert kernels between compute kinds, with XLA's semantics: float -> integer saturates (NaN ->
// 0), integer -> integer wraps, x -> pred is x != 0, complex -> real (and pred) takes the real
// part.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/ew_kernels.h"

namespace pjrtkit {
namespace sim {
namespace {

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<Complex<T>> : std::true_type {};

// The value of a scalar source as To (neither side complex; pred is handled by the callers).
template <typename To, typename From>
To CastScalar(From x) {
  if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    // XLA: x <= (F)MIN -> MIN, x >= (F)MAX -> MAX, NaN -> 0 (unsigned: x <= 0 -> 0).
    constexpr From kMin = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From kMax = static_cast<From>(std::numeric_limits<To>::max());
    if (x != x) return 0;
    if (x <= kMin) return std::numeric_limits<To>::min();
    if (x >= kMax) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else if constexpr (std::is_integral<From>::value && std::is_integral<To>::value) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(x));
  } else {
    return static_cast<To>(x);
  }
}

// To from From; `ToIsPred` selects x != 0 and `FromIsPred` reads 0/1 (both are uint8_t).
template <typename To, typename From, bool kToIsPred, bool kFromIsPred>
struct CastOp {
  static To Apply(From x) {
    if constexpr (IsComplex<From>::value) {
      if constexpr (kToIsPred) {
        return x.re != 0;  // XLA reads only the real part.
      } else if constexpr (IsComplex<To>::value) {
        using C = decltype(To::re);
        return {static_cast<C>(x.re), static_cast<C>(x.im)};
      } else {
        return CastOp<To, decltype(x.re), false, false>::Apply(x.re);
      }
    } else if constexpr (IsComplex<To>::value) {
      using C = decltype(To::re);
      return {CastOp<C, From, false, kFromIsPred>::Apply(x), C(0)};
    } else if constexpr (kToIsPred) {
      return x != 0 ? 1 : 0;
    } else if constexpr (kFromIsPred) {
      return static_cast<To>(x != 0 ? 1 : 0);
    } else {
      return CastScalar<To, From>(x);
    }
  }
};

template <ComputeKind kFrom, ComputeKind kTo>
KernelFn CastKernel() {
  using From = typename KindType<kFrom>::T;
  using To = typename KindType<kTo>::T;
  return &UnaryKernel<CastOp<To, From, kTo == ComputeKind::kPred, kFrom == ComputeKind::kPred>,
                      To, From>;
}

template <ComputeKind kFrom>
KernelFn CastFrom(ComputeKind to) {
  switch (to) {
    case ComputeKind::kPred: return CastKernel<kFrom, ComputeKind::kPred>();
    case ComputeKind::kS8: return CastKernel<kFrom, ComputeKind::kS8>();
    case ComputeKind::kS16: return CastKernel<kFrom, ComputeKind::kS16>();
    case ComputeKind::kS32: return CastKernel<kFrom, ComputeKind::kS32>();
    case ComputeKind::kS64: return CastKernel<kFrom, ComputeKind::kS64>();
    case ComputeKind::kU8: return CastKernel<kFrom, ComputeKind::kU8>();
    case ComputeKind::kU16: return CastKernel<kFrom, ComputeKind::kU16>();
    case ComputeKind::kU32: return CastKernel<kFrom, ComputeKind::kU32>();
    case ComputeKind::kU64: return CastKernel<kFrom, ComputeKind::kU64>();
    case ComputeKind::kF32: return CastKernel<kFrom, ComputeKind::kF32>();
    case ComputeKind::kF64: return CastKernel<kFrom, ComputeKind::kF64>();
    case ComputeKind::kC64: return CastKernel<kFrom, ComputeKind::kC64>();
    case ComputeKind::kC128: return CastKernel<kFrom, ComputeKind::kC128>();
    case ComputeKind::kInvalid: break;
  }
  return nullptr;
}

}  // namespace

KernelFn ConvertKernel(ComputeKind from, ComputeKind to) {
  switch (from) {
    case ComputeKind::kPred: return CastFrom<ComputeKind::kPred>(to);
    case ComputeKind::kS8: return CastFrom<ComputeKind::kS8>(to);
    case ComputeKind::kS16: return CastFrom<ComputeKind::kS16>(to);
    case ComputeKind::kS32: return CastFrom<ComputeKind::kS32>(to);
    case ComputeKind::kS64: return CastFrom<ComputeKind::kS64>(to);
    case ComputeKind::kU8: return CastFrom<ComputeKind::kU8>(to);
    case ComputeKind::kU16: return CastFrom<ComputeKind::kU16>(to);
    case ComputeKind::kU32: return CastFrom<ComputeKind::kU32>(to);
    case ComputeKind::kU64: return CastFrom<ComputeKind::kU64>(to);
    case ComputeKind::kF32: return CastFrom<ComputeKind::kF32>(to);
    case ComputeKind::kF64: return CastFrom<ComputeKind::kF64>(to);
    case ComputeKind::kC64: return CastFrom<ComputeKind::kC64>(to);
    case ComputeKind::kC128: return CastFrom<ComputeKind::kC128>(to);
    case ComputeKind::kInvalid: break;
  }
  return nullptr;
}

}  // namespace sim
}  // namespace pjrtkit
