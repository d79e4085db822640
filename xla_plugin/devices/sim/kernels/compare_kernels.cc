// compare and select kernels.
#include <cstdint>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/ew_kernels.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

struct Eq {
  template <typename T>
  static bool Test(T a, T b) { return a == b; }
};
struct Ne {
  template <typename T>
  static bool Test(T a, T b) { return a != b; }
};
struct Ge {
  template <typename T>
  static bool Test(T a, T b) { return a >= b; }
};
struct Gt {
  template <typename T>
  static bool Test(T a, T b) { return a > b; }
};
struct Le {
  template <typename T>
  static bool Test(T a, T b) { return a <= b; }
};
struct Lt {
  template <typename T>
  static bool Test(T a, T b) { return a < b; }
};

// Plain comparison (integers by their signedness; floats as IEEE: NaN compares unequal).
template <typename Dir>
struct CompareOp {
  template <typename T>
  static uint8_t Apply(T a, T b) { return Dir::Test(a, b) ? 1 : 0; }
};

// XLA's total order: the bits as a signed integer, magnitude bits flipped for negatives, so
// -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
template <typename T>
inline auto TotalOrderKey(T x) {
  using S = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using U = std::make_unsigned_t<S>;
  const S s = BitCast<S>(x);
  const U magnitude_mask = static_cast<U>(~U(0)) >> 1;
  return s < 0 ? static_cast<S>(static_cast<U>(s) ^ magnitude_mask) : s;
}

template <typename Dir>
struct TotalOrderOp {
  template <typename T>
  static uint8_t Apply(T a, T b) { return Dir::Test(TotalOrderKey(a), TotalOrderKey(b)) ? 1 : 0; }
};

// Complex: eq is both parts equal, ne either part unequal (NaN compares unequal).
struct ComplexEqOp {
  template <typename T>
  static uint8_t Apply(Complex<T> a, Complex<T> b) { return a.re == b.re && a.im == b.im; }
};
struct ComplexNeOp {
  template <typename T>
  static uint8_t Apply(Complex<T> a, Complex<T> b) { return a.re != b.re || a.im != b.im; }
};

template <typename Dir, typename T>
KernelFn ForType(bool total_order) {
  if (total_order) {
    if constexpr (std::is_floating_point<T>::value) {
      return &BinaryKernel<TotalOrderOp<Dir>, uint8_t, T>;
    }
    return nullptr;
  }
  return &BinaryKernel<CompareOp<Dir>, uint8_t, T>;
}

template <typename Dir>
KernelFn ForKind(ComputeKind kind, bool total_order) {
  switch (kind) {
    case ComputeKind::kPred: return ForType<Dir, uint8_t>(total_order);
    case ComputeKind::kS8: return ForType<Dir, int8_t>(total_order);
    case ComputeKind::kS16: return ForType<Dir, int16_t>(total_order);
    case ComputeKind::kS32: return ForType<Dir, int32_t>(total_order);
    case ComputeKind::kS64: return ForType<Dir, int64_t>(total_order);
    case ComputeKind::kU8: return ForType<Dir, uint8_t>(total_order);
    case ComputeKind::kU16: return ForType<Dir, uint16_t>(total_order);
    case ComputeKind::kU32: return ForType<Dir, uint32_t>(total_order);
    case ComputeKind::kU64: return ForType<Dir, uint64_t>(total_order);
    case ComputeKind::kF32: return ForType<Dir, float>(total_order);
    case ComputeKind::kF64: return ForType<Dir, double>(total_order);
    default: return nullptr;
  }
}

template <typename T>
KernelFn ComplexCompare(ComparisonDirection direction, bool total_order) {
  if (total_order) return nullptr;
  if (direction == ComparisonDirection::kEq) {
    return &BinaryKernel<ComplexEqOp, uint8_t, Complex<T>>;
  }
  if (direction == ComparisonDirection::kNe) {
    return &BinaryKernel<ComplexNeOp, uint8_t, Complex<T>>;
  }
  return nullptr;
}

// Bytes of one compute element, for select.
template <int kBytes>
struct Bytes {
  unsigned char b[kBytes];
};

template <typename T>
void SelectT(const KernelArgs& args) {
  const uint8_t* __restrict p = static_cast<const uint8_t*>(args.in[0]);
  const T* __restrict a = static_cast<const T*>(args.in[1]);
  const T* __restrict b = static_cast<const T*>(args.in[2]);
  T* __restrict out = static_cast<T*>(args.out);
  for (int64_t i = 0; i < args.n; ++i) out[i] = p[i] ? a[i] : b[i];
}

}  // namespace

KernelFn CompareKernel(ComputeKind kind, ComparisonDirection direction, bool total_order) {
  if (kind == ComputeKind::kC64) return ComplexCompare<float>(direction, total_order);
  if (kind == ComputeKind::kC128) return ComplexCompare<double>(direction, total_order);
  switch (direction) {
    case ComparisonDirection::kEq: return ForKind<Eq>(kind, total_order);
    case ComparisonDirection::kNe: return ForKind<Ne>(kind, total_order);
    case ComparisonDirection::kGe: return ForKind<Ge>(kind, total_order);
    case ComparisonDirection::kGt: return ForKind<Gt>(kind, total_order);
    case ComparisonDirection::kLe: return ForKind<Le>(kind, total_order);
    case ComparisonDirection::kLt: return ForKind<Lt>(kind, total_order);
  }
  return nullptr;
}

KernelFn SelectKernel(ComputeKind kind) {
  switch (ComputeKindBytes(kind)) {
    case 1: return &SelectT<uint8_t>;
    case 2: return &SelectT<uint16_t>;
    case 4: return &SelectT<uint32_t>;
    case 8: return &SelectT<uint64_t>;
    case 16: return &SelectT<Bytes<16>>;
    default: return nullptr;
  }
}

}  // namespace sim
}  // namespace pjrtkit
