#include "xla_plugin/devices/sim/kernels/collective_combine.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

namespace pjrtkit {
namespace sim {
namespace {

// Unsigned arithmetic of at least int's width, so that 8- and 16-bit products wrap instead of
// overflowing int.
template <typename U>
using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;

template <typename T, typename Op>
void Loop(int64_t n, void* acc, const void* x, Op op) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(x);
  for (int64_t k = 0; k < n; ++k) a[k] = op(a[k], b[k]);
}

// Integer combiners on the unsigned type U of the element's width (S: the signed one).
template <typename U, typename S>
bool IntegerLoop(Combiner combiner, bool is_signed, int64_t n, void* acc, const void* x) {
  switch (combiner) {
    case Combiner::kAdd:
      Loop<U>(n, acc, x, [](U a, U b) { return static_cast<U>(Wide<U>(a) + Wide<U>(b)); });
      return true;
    case Combiner::kMultiply:
      Loop<U>(n, acc, x, [](U a, U b) { return static_cast<U>(Wide<U>(a) * Wide<U>(b)); });
      return true;
    case Combiner::kMaximum:
      if (is_signed) {
        Loop<S>(n, acc, x, [](S a, S b) { return a < b ? b : a; });
      } else {
        Loop<U>(n, acc, x, [](U a, U b) { return a < b ? b : a; });
      }
      return true;
    case Combiner::kMinimum:
      if (is_signed) {
        Loop<S>(n, acc, x, [](S a, S b) { return b < a ? b : a; });
      } else {
        Loop<U>(n, acc, x, [](U a, U b) { return b < a ? b : a; });
      }
      return true;
    case Combiner::kAnd:
      Loop<U>(n, acc, x, [](U a, U b) { return static_cast<U>(a & b); });
      return true;
    case Combiner::kOr:
      Loop<U>(n, acc, x, [](U a, U b) { return static_cast<U>(a | b); });
      return true;
    case Combiner::kXor:
      Loop<U>(n, acc, x, [](U a, U b) { return static_cast<U>(a ^ b); });
      return true;
    default:
      return false;
  }
}

bool PredLoop(Combiner combiner, int64_t n, void* acc, const void* x) {
  switch (combiner) {
    case Combiner::kAdd:
    case Combiner::kMaximum:
    case Combiner::kOr:
      Loop<uint8_t>(n, acc, x, [](uint8_t a, uint8_t b) { return static_cast<uint8_t>(a | b); });
      return true;
    case Combiner::kMultiply:
    case Combiner::kMinimum:
    case Combiner::kAnd:
      Loop<uint8_t>(n, acc, x, [](uint8_t a, uint8_t b) { return static_cast<uint8_t>(a & b); });
      return true;
    case Combiner::kXor:
      Loop<uint8_t>(n, acc, x, [](uint8_t a, uint8_t b) { return static_cast<uint8_t>(a ^ b); });
      return true;
    default:
      return false;
  }
}

// IEEE 754-2019 maximum/minimum: NaN propagates, -0 orders below +0.
template <typename F>
F Maximum(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a < b ? b : a;
}
template <typename F>
F Minimum(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return b < a ? b : a;
}

template <typename F>
bool FloatLoop(Combiner combiner, int64_t n, void* acc, const void* x) {
  switch (combiner) {
    case Combiner::kAdd: Loop<F>(n, acc, x, [](F a, F b) { return a + b; }); return true;
    case Combiner::kMultiply: Loop<F>(n, acc, x, [](F a, F b) { return a * b; }); return true;
    case Combiner::kMaximum: Loop<F>(n, acc, x, Maximum<F>); return true;
    case Combiner::kMinimum: Loop<F>(n, acc, x, Minimum<F>); return true;
    default: return false;
  }
}

}  // namespace

bool IsCollectiveElementType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3:
    case ElementType::kF8E3M4:
    case ElementType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

bool CombineInPlace(Combiner combiner, ElementType type, int64_t n, void* acc, const void* x) {
  if (combiner == Combiner::kReplace) {
    if (!IsCollectiveElementType(type)) return false;
    const int bits = ElementTypeBits(type);
    std::memcpy(acc, x, static_cast<size_t>(n * (bits <= 8 ? 1 : bits / 8)));
    return true;
  }
  switch (type) {
    case ElementType::kPred: return PredLoop(combiner, n, acc, x);
    case ElementType::kS8: return IntegerLoop<uint8_t, int8_t>(combiner, true, n, acc, x);
    case ElementType::kS16: return IntegerLoop<uint16_t, int16_t>(combiner, true, n, acc, x);
    case ElementType::kS32: return IntegerLoop<uint32_t, int32_t>(combiner, true, n, acc, x);
    case ElementType::kS64: return IntegerLoop<uint64_t, int64_t>(combiner, true, n, acc, x);
    case ElementType::kU8: return IntegerLoop<uint8_t, int8_t>(combiner, false, n, acc, x);
    case ElementType::kU16: return IntegerLoop<uint16_t, int16_t>(combiner, false, n, acc, x);
    case ElementType::kU32: return IntegerLoop<uint32_t, int32_t>(combiner, false, n, acc, x);
    case ElementType::kU64: return IntegerLoop<uint64_t, int64_t>(combiner, false, n, acc, x);
    case ElementType::kF32: return FloatLoop<float>(combiner, n, acc, x);
    case ElementType::kF64: return FloatLoop<double>(combiner, n, acc, x);
    case ElementType::kC64:
      if (combiner != Combiner::kAdd) return false;
      Loop<std::complex<float>>(n, acc, x, [](std::complex<float> a, std::complex<float> b) {
        return std::complex<float>(a.real() + b.real(), a.imag() + b.imag());
      });
      return true;
    case ElementType::kC128:
      if (combiner != Combiner::kAdd) return false;
      Loop<std::complex<double>>(n, acc, x, [](std::complex<double> a, std::complex<double> b) {
        return std::complex<double>(a.real() + b.real(), a.imag() + b.imag());
      });
      return true;
    default:
      return false;
  }
}

}  // namespace sim
}  // namespace pjrtkit
