// pred and integer kernels: two's complement wrapping (computed in unsigned), and XLA's rules for
// division by zero, INT_MIN / -1, out-of-range shifts and negative powers.
#include <limits>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/ew_kernels.h"

namespace pjrtkit {
namespace sim {
namespace {

// The unsigned type of T's width, widened to at least 32 bits so arithmetic never promotes to a
// signed int.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
constexpr int kBits = static_cast<int>(sizeof(T) * 8);

template <typename T>
T FromWide(Wide<T> v) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
}

struct AbsOp {
  template <typename T>
  static T Apply(T a) {
    return a < 0 ? FromWide<T>(Wide<T>(0) - static_cast<Wide<T>>(a)) : a;
  }
};
struct NegateOp {
  template <typename T>
  static T Apply(T a) {
    return FromWide<T>(Wide<T>(0) - static_cast<Wide<T>>(a));
  }
};
struct SignOp {
  template <typename T>
  static T Apply(T a) {
    return static_cast<T>((a > 0) - (a < 0));
  }
};
struct NotOp {
  template <typename T>
  static T Apply(T a) {
    return static_cast<T>(~a);
  }
};
struct PopcntOp {
  template <typename T>
  static T Apply(T a) {
    return static_cast<T>(
        __builtin_popcountll(static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(a))));
  }
};
struct ClzOp {
  template <typename T>
  static T Apply(T a) {
    const uint64_t u = static_cast<std::make_unsigned_t<T>>(a);
    return static_cast<T>(u == 0 ? kBits<T> : __builtin_clzll(u) - (64 - kBits<T>));
  }
};
struct AddOp {
  template <typename T>
  static T Apply(T a, T b) {
    return FromWide<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
};
struct SubtractOp {
  template <typename T>
  static T Apply(T a, T b) {
    return FromWide<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
  }
};
struct MultiplyOp {
  template <typename T>
  static T Apply(T a, T b) {
    return FromWide<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
};
// x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN.
struct DivideOp {
  template <typename T>
  static T Apply(T a, T b) {
    if (b == 0) return static_cast<T>(~T(0));
    if (std::is_signed<T>::value && a == std::numeric_limits<T>::min() && b == static_cast<T>(-1)) {
      return a;
    }
    return static_cast<T>(a / b);
  }
};
// x % 0 = x, INT_MIN % -1 = 0.
struct RemainderOp {
  template <typename T>
  static T Apply(T a, T b) {
    if (b == 0) return a;
    if (std::is_signed<T>::value && a == std::numeric_limits<T>::min() && b == static_cast<T>(-1)) {
      return 0;
    }
    return static_cast<T>(a % b);
  }
};
// XLA's power: wrapping squaring over the exponent's low 6 bits only; for exponents of 64 and
// more the result is 0 when the base's 64th power is (even bases), else that low-bit power. A
// negative exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise.
struct PowerOp {
  template <typename T>
  static T Apply(T a, T b) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == static_cast<T>(-1)) return (b & 1) ? a : T(1);
      return 0;
    }
    Wide<T> result = 1;
    Wide<T> base = static_cast<Wide<T>>(a);
    auto e = static_cast<std::make_unsigned_t<T>>(b);
    for (int i = 0; i < 6; ++i, e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    if (e != 0 && FromWide<T>(base) == 0) return 0;
    return FromWide<T>(result);
  }
};
struct MaxOp {
  template <typename T>
  static T Apply(T a, T b) {
    return a > b ? a : b;
  }
};
struct MinOp {
  template <typename T>
  static T Apply(T a, T b) {
    return a < b ? a : b;
  }
};
struct AndOp {
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct OrOp {
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct XorOp {
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};
// The shift amount is read as unsigned: amounts >= the width shift everything out.
struct ShiftLeftOp {
  template <typename T>
  static T Apply(T a, T b) {
    const auto amount = static_cast<std::make_unsigned_t<T>>(b);
    if (amount >= kBits<T>) return 0;
    return FromWide<T>(static_cast<Wide<T>>(a) << amount);
  }
};
// Fills with the top bit (also for unsigned types, as XLA's ashr does).
struct ShiftRightArithmeticOp {
  template <typename T>
  static T Apply(T a, T b) {
    using S = std::make_signed_t<T>;
    const auto amount = static_cast<std::make_unsigned_t<T>>(b);
    const S s = static_cast<S>(a);
    if (amount >= kBits<T>) return static_cast<T>(s < 0 ? S(-1) : S(0));
    return static_cast<T>(static_cast<S>(s >> amount));
  }
};
struct ShiftRightLogicalOp {
  template <typename T>
  static T Apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    const auto amount = static_cast<U>(b);
    if (amount >= kBits<T>) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) >> amount));
  }
};
// clamp(min, x, max) = min(max(x, min), max).
struct ClampOp {
  template <typename T>
  static T Apply(T lo, T x, T hi) {
    return MinOp::Apply(MaxOp::Apply(x, lo), hi);
  }
};

// pred: add and maximum are or; multiply and minimum are and; not flips the bit.
struct PredNotOp {
  static uint8_t Apply(uint8_t a) { return a ^ 1; }
};

template <typename T>
KernelFn IntKernelFor(EwOp op) {
  constexpr bool kSigned = std::is_signed<T>::value;
  switch (op) {
    case EwOp::kAbs: return kSigned ? &UnaryKernel<AbsOp, T, T> : nullptr;
    case EwOp::kNegate: return &UnaryKernel<NegateOp, T, T>;
    case EwOp::kSign: return kSigned ? &UnaryKernel<SignOp, T, T> : nullptr;
    case EwOp::kNot: return &UnaryKernel<NotOp, T, T>;
    case EwOp::kPopcnt: return &UnaryKernel<PopcntOp, T, T>;
    case EwOp::kCountLeadingZeros: return &UnaryKernel<ClzOp, T, T>;
    case EwOp::kAdd: return &BinaryKernel<AddOp, T, T>;
    case EwOp::kSubtract: return &BinaryKernel<SubtractOp, T, T>;
    case EwOp::kMultiply: return &BinaryKernel<MultiplyOp, T, T>;
    case EwOp::kDivide: return &BinaryKernel<DivideOp, T, T>;
    case EwOp::kRemainder: return &BinaryKernel<RemainderOp, T, T>;
    case EwOp::kPower: return &BinaryKernel<PowerOp, T, T>;
    case EwOp::kMaximum: return &BinaryKernel<MaxOp, T, T>;
    case EwOp::kMinimum: return &BinaryKernel<MinOp, T, T>;
    case EwOp::kAnd: return &BinaryKernel<AndOp, T, T>;
    case EwOp::kOr: return &BinaryKernel<OrOp, T, T>;
    case EwOp::kXor: return &BinaryKernel<XorOp, T, T>;
    case EwOp::kShiftLeft: return &BinaryKernel<ShiftLeftOp, T, T>;
    case EwOp::kShiftRightArithmetic: return &BinaryKernel<ShiftRightArithmeticOp, T, T>;
    case EwOp::kShiftRightLogical: return &BinaryKernel<ShiftRightLogicalOp, T, T>;
    case EwOp::kClamp: return &TernaryKernel<ClampOp, T, T>;
    default: return nullptr;
  }
}

KernelFn PredKernel(EwOp op) {
  switch (op) {
    case EwOp::kNot: return &UnaryKernel<PredNotOp, uint8_t, uint8_t>;
    case EwOp::kAdd:
    case EwOp::kMaximum:
    case EwOp::kOr:
      return &BinaryKernel<OrOp, uint8_t, uint8_t>;
    case EwOp::kMultiply:
    case EwOp::kMinimum:
    case EwOp::kAnd:
      return &BinaryKernel<AndOp, uint8_t, uint8_t>;
    case EwOp::kXor: return &BinaryKernel<XorOp, uint8_t, uint8_t>;
    case EwOp::kClamp: return &TernaryKernel<ClampOp, uint8_t, uint8_t>;
    default: return nullptr;
  }
}

}  // namespace

KernelFn IntKernel(EwOp op, ComputeKind kind) {
  if (kind == ComputeKind::kPred) return PredKernel(op);
  return DispatchInt(kind, KernelFn{nullptr},
                     [op](auto zero) { return IntKernelFor<decltype(zero)>(op); });
}

}  // namespace sim
}  // namespace pjrtkit
