#include "xla_plugin/devices/sim/kernels/typed_combiner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

// A complex element as stored (real, then imaginary part).
template <typename F>
struct Cplx {
  F re;
  F im;
};

// Integer multiply that wraps and never overflows a promoted int (u8/u16 promote to int).
template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) < 4), uint32_t, T>;

template <typename T>
struct AddOp {
  static T Apply(T a, T b) { return static_cast<T>(a + b); }
};
template <typename F>
struct AddOp<Cplx<F>> {
  static Cplx<F> Apply(Cplx<F> a, Cplx<F> b) { return {a.re + b.re, a.im + b.im}; }
};
template <typename T>
struct MulOp {
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WideUnsigned<T>>(a) * static_cast<WideUnsigned<T>>(b));
    } else {
      return a * b;
    }
  }
};
// Floats' maximum/minimum as XLA:CPU (and the engine) compute them: operands compared with
// denormals read as (signed) zero and returned flushed; equal operands give maximum the bitwise and
// (+0 over -0), minimum the bitwise or; a NaN operand is returned (the first when both are).
template <typename T, bool kMax>
T FloatMaxMin(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kSign = Bits{1} << (sizeof(T) * 8 - 1);
  constexpr Bits kExp =
      static_cast<Bits>(sizeof(T) == 4 ? uint64_t{0x7f800000u} : uint64_t{0x7ff0000000000000ull});
  Bits ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const Bits fa = (ua & kExp) == 0 ? (ua & kSign) : ua;
  const Bits fb = (ub & kExp) == 0 ? (ub & kSign) : ub;
  T va, vb;
  std::memcpy(&va, &fa, sizeof(T));
  std::memcpy(&vb, &fb, sizeof(T));
  const bool a_wins = kMax ? va > vb : va < vb;
  const bool b_wins = kMax ? vb > va : vb < va;
  Bits r = a_wins ? fa : (b_wins ? fb : (kMax ? (fa & fb) : (fa | fb)));
  r = b != b ? ub : r;
  r = a != a ? ua : r;
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

// Maximum/minimum: integers as usual, floats as FloatMaxMin.
template <typename T>
struct MaxOp {
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return FloatMaxMin<T, true>(a, b);
    } else {
      return a > b ? a : b;
    }
  }
};
template <typename T>
struct MinOp {
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return FloatMaxMin<T, false>(a, b);
    } else {
      return a < b ? a : b;
    }
  }
};

// A low-precision float element (f16 or bf16 bits); its ops compute in f32 and round to the
// format after every op, as the engine does (under ScopedFlushDenormals).
template <LowFloat kFormat>
struct Low16 {
  uint16_t bits;
  float Decode() const {
    if constexpr (kFormat == LowFloat::kBF16) {
      const uint32_t u = static_cast<uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    } else {
      return DecodeToF32(kFormat, bits);
    }
  }
  static Low16 Encode(float x) {
    if constexpr (kFormat == LowFloat::kBF16) {
      // EncodeFromF32's rule, inlined: round to nearest even, NaN to the quiet NaN with its sign.
      uint32_t u;
      std::memcpy(&u, &x, 4);
      if ((u & 0x7fffffffu) > 0x7f800000u)
        return {static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u)};
      return {static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
    } else {
      return {static_cast<uint16_t>(EncodeFromF32(kFormat, x))};
    }
  }
};
template <LowFloat kFormat>
struct AddOp<Low16<kFormat>> {
  static Low16<kFormat> Apply(Low16<kFormat> a, Low16<kFormat> b) {
    return Low16<kFormat>::Encode(a.Decode() + b.Decode());
  }
};
template <LowFloat kFormat>
struct MulOp<Low16<kFormat>> {
  static Low16<kFormat> Apply(Low16<kFormat> a, Low16<kFormat> b) {
    return Low16<kFormat>::Encode(a.Decode() * b.Decode());
  }
};

template <typename T>
struct AndOp {
  static T Apply(T a, T b) { return static_cast<T>(a & b); }
};
template <typename T>
struct OrOp {
  static T Apply(T a, T b) { return static_cast<T>(a | b); }
};
template <typename T>
struct XorOp {
  static T Apply(T a, T b) { return static_cast<T>(a ^ b); }
};
template <typename T>
struct ReplaceOp {
  static T Apply(T, T b) { return b; }
};

// An element of 16 bytes moved as a whole (kReplace on c128).
struct Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

template <typename T, typename Op>
void Combine(int64_t n, const void* a, int64_t a_stride, const void* b, int64_t b_stride,
             void* out) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* o = static_cast<T*>(out);
  if (a_stride == 1 && b_stride == 1) {
    for (int64_t k = 0; k < n; ++k) o[k] = Op::Apply(x[k], y[k]);
  } else if (a_stride == 0 && b_stride == 1) {
    const T c = x[0];
    for (int64_t k = 0; k < n; ++k) o[k] = Op::Apply(c, y[k]);
  } else if (a_stride == 1 && b_stride == 0) {
    const T c = y[0];
    for (int64_t k = 0; k < n; ++k) o[k] = Op::Apply(x[k], c);
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = Op::Apply(x[k * a_stride], y[k * b_stride]);
  }
}

template <typename T, typename Op>
void Accumulate(int64_t n, void* acc, int64_t acc_stride, const void* b, int64_t b_stride) {
  T* a = static_cast<T*>(acc);
  const T* y = static_cast<const T*>(b);
  if (acc_stride == 1 && b_stride == 1) {
    for (int64_t k = 0; k < n; ++k) a[k] = Op::Apply(a[k], y[k]);
  } else {
    for (int64_t k = 0; k < n; ++k) {
      a[k * acc_stride] = Op::Apply(a[k * acc_stride], y[k * b_stride]);
    }
  }
}

template <typename T, typename Op>
void Pairs(int64_t count, void* acc, const int64_t* targets, const void* b,
           const int64_t* sources) {
  T* a = static_cast<T*>(acc);
  const T* y = static_cast<const T*>(b);
  for (int64_t j = 0; j < count; ++j) a[targets[j]] = Op::Apply(a[targets[j]], y[sources[j]]);
}

template <typename T, typename Op>
void Scan(int64_t n, const void* init, const void* x, int64_t x_stride, void* out,
          int64_t out_stride) {
  const T* in = static_cast<const T*>(x);
  T* o = static_cast<T*>(out);
  T acc;
  std::memcpy(&acc, init, sizeof(T));
  for (int64_t k = 0; k < n; ++k) {
    acc = Op::Apply(acc, in[k * x_stride]);
    o[k * out_stride] = acc;
  }
}

// Pairwise reduction of x[0..k), k >= 1 (numpy's scheme: eight interleaved partial results per
// block of up to 128 elements, halves above that).
template <typename T, typename Op>
T PairwiseBlock(const T* x, int64_t k) {
  if (k < 8) {
    T acc = x[0];
    for (int64_t i = 1; i < k; ++i) acc = Op::Apply(acc, x[i]);
    return acc;
  }
  if (k <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = x[j];
    int64_t i = 8;
    for (; i + 8 <= k; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] = Op::Apply(r[j], x[i + j]);
    }
    T acc = Op::Apply(Op::Apply(Op::Apply(r[0], r[1]), Op::Apply(r[2], r[3])),
                      Op::Apply(Op::Apply(r[4], r[5]), Op::Apply(r[6], r[7])));
    for (; i < k; ++i) acc = Op::Apply(acc, x[i]);
    return acc;
  }
  int64_t half = k / 2;
  half -= half % 8;
  return Op::Apply(PairwiseBlock<T, Op>(x, half), PairwiseBlock<T, Op>(x + half, k - half));
}

template <typename T, typename Op>
void ReduceContiguous(const void* x, int64_t m, int64_t k, void* out) {
  const T* in = static_cast<const T*>(x);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < m; ++i) o[i] = PairwiseBlock<T, Op>(in + i * k, k);
}

// Columns reduced per pass of ReduceRows (its scratch holds one such row per tree level).
constexpr int64_t kRowChunk = 256;
// Rows reduced sequentially at the leaves of ReduceRows' tree.
constexpr int64_t kRowLeaf = 8;

// Levels of ReduceRows' tree for k rows.
int64_t RowTreeDepth(int64_t k) {
  int64_t depth = 0;
  while (k > kRowLeaf) {
    k -= k / 2;
    ++depth;
  }
  return depth;
}

// dst[0..c) = reduction of rows [lo, hi) of x (row stride rs); scratch: one row per level below.
template <typename T, typename Op>
void ReduceRowRange(const T* x, int64_t lo, int64_t hi, int64_t rs, int64_t c, T* dst, T* scratch) {
  if (hi - lo <= kRowLeaf) {
    const T* row = x + lo * rs;
    for (int64_t j = 0; j < c; ++j) dst[j] = row[j];
    for (int64_t r = lo + 1; r < hi; ++r) {
      row = x + r * rs;
      for (int64_t j = 0; j < c; ++j) dst[j] = Op::Apply(dst[j], row[j]);
    }
    return;
  }
  const int64_t mid = lo + (hi - lo) / 2;
  ReduceRowRange<T, Op>(x, lo, mid, rs, c, dst, scratch);
  ReduceRowRange<T, Op>(x, mid, hi, rs, c, scratch, scratch + c);
  for (int64_t j = 0; j < c; ++j) dst[j] = Op::Apply(dst[j], scratch[j]);
}

template <typename T, typename Op>
void ReduceRows(const void* x, int64_t k, int64_t row_stride, int64_t width, void* out,
                void* scratch) {
  const T* in = static_cast<const T*>(x);
  T* o = static_cast<T*>(out);
  T* s = static_cast<T*>(scratch);
  for (int64_t c0 = 0; c0 < width; c0 += kRowChunk) {
    const int64_t c = std::min(kRowChunk, width - c0);
    ReduceRowRange<T, Op>(in + c0, 0, k, row_stride, c, o + c0, s);
  }
}

// Fills `loops` with the instantiations for T and Op.
struct Filler {
  TypedCombiner* loops;
  template <typename T, typename Op>
  void Run() {
    loops->combine = &Combine<T, Op>;
    loops->accumulate = &Accumulate<T, Op>;
    loops->pairs = &Pairs<T, Op>;
    loops->reduce_contiguous = &ReduceContiguous<T, Op>;
    loops->reduce_rows = &ReduceRows<T, Op>;
    loops->scan = &Scan<T, Op>;
  }
};

// Integers: add, multiply and the bitwise ops on the unsigned type U, maximum/minimum on Ord.
template <typename U, typename Ord>
bool VisitInteger(Combiner combiner, Filler* f) {
  switch (combiner) {
    case Combiner::kAdd:
      f->Run<U, AddOp<U>>();
      return true;
    case Combiner::kMultiply:
      f->Run<U, MulOp<U>>();
      return true;
    case Combiner::kMaximum:
      f->Run<Ord, MaxOp<Ord>>();
      return true;
    case Combiner::kMinimum:
      f->Run<Ord, MinOp<Ord>>();
      return true;
    case Combiner::kAnd:
      f->Run<U, AndOp<U>>();
      return true;
    case Combiner::kOr:
      f->Run<U, OrOp<U>>();
      return true;
    case Combiner::kXor:
      f->Run<U, XorOp<U>>();
      return true;
    default:
      return false;
  }
}

// f16/bf16: add and multiply (maximum and minimum have format-specific rules: the engine's).
template <LowFloat kFormat>
bool VisitLowFloat(Combiner combiner, Filler* f) {
  using L = Low16<kFormat>;
  switch (combiner) {
    case Combiner::kAdd:
      f->Run<L, AddOp<L>>();
      return true;
    case Combiner::kMultiply:
      f->Run<L, MulOp<L>>();
      return true;
    default:
      return false;
  }
}

template <typename F>
bool VisitFloat(Combiner combiner, Filler* f) {
  switch (combiner) {
    case Combiner::kAdd:
      f->Run<F, AddOp<F>>();
      return true;
    case Combiner::kMultiply:
      f->Run<F, MulOp<F>>();
      return true;
    case Combiner::kMaximum:
      f->Run<F, MaxOp<F>>();
      return true;
    case Combiner::kMinimum:
      f->Run<F, MinOp<F>>();
      return true;
    default:
      return false;
  }
}

// pred: add and maximum are or, multiply and minimum are and (values are 0 or 1).
bool VisitPred(Combiner combiner, Filler* f) {
  switch (combiner) {
    case Combiner::kAdd:
    case Combiner::kMaximum:
    case Combiner::kOr:
      f->Run<uint8_t, OrOp<uint8_t>>();
      return true;
    case Combiner::kMultiply:
    case Combiner::kMinimum:
    case Combiner::kAnd:
      f->Run<uint8_t, AndOp<uint8_t>>();
      return true;
    case Combiner::kXor:
      f->Run<uint8_t, XorOp<uint8_t>>();
      return true;
    default:
      return false;
  }
}

bool VisitReplace(ElementType type, Filler* f) {
  switch (ElementTypeBits(type)) {
    case 8:
      f->Run<uint8_t, ReplaceOp<uint8_t>>();
      return true;
    case 16:
      f->Run<uint16_t, ReplaceOp<uint16_t>>();
      return true;
    case 32:
      f->Run<uint32_t, ReplaceOp<uint32_t>>();
      return true;
    case 64:
      f->Run<uint64_t, ReplaceOp<uint64_t>>();
      return true;
    case 128:
      f->Run<Bytes16, ReplaceOp<Bytes16>>();
      return true;
    default:
      return false;
  }
}

}  // namespace

int64_t ReduceRowsScratchElements(int64_t k, int64_t width) {
  return std::max<int64_t>(1, RowTreeDepth(k) * std::min(width, kRowChunk));
}

bool GetTypedCombiner(Combiner combiner, ElementType type, TypedCombiner* loops) {
  *loops = TypedCombiner();
  Filler f{loops};
  if (combiner == Combiner::kGeneric) return false;
  if (combiner == Combiner::kReplace) return VisitReplace(type, &f);
  switch (type) {
    case ElementType::kPred:
      return VisitPred(combiner, &f);
    case ElementType::kS8:
      return VisitInteger<uint8_t, int8_t>(combiner, &f);
    case ElementType::kS16:
      return VisitInteger<uint16_t, int16_t>(combiner, &f);
    case ElementType::kS32:
      return VisitInteger<uint32_t, int32_t>(combiner, &f);
    case ElementType::kS64:
      return VisitInteger<uint64_t, int64_t>(combiner, &f);
    case ElementType::kU8:
      return VisitInteger<uint8_t, uint8_t>(combiner, &f);
    case ElementType::kU16:
      return VisitInteger<uint16_t, uint16_t>(combiner, &f);
    case ElementType::kU32:
      return VisitInteger<uint32_t, uint32_t>(combiner, &f);
    case ElementType::kU64:
      return VisitInteger<uint64_t, uint64_t>(combiner, &f);
    case ElementType::kF16:
      return VisitLowFloat<LowFloat::kF16>(combiner, &f);
    case ElementType::kBF16:
      return VisitLowFloat<LowFloat::kBF16>(combiner, &f);
    case ElementType::kF32:
      return VisitFloat<float>(combiner, &f);
    case ElementType::kF64:
      return VisitFloat<double>(combiner, &f);
    case ElementType::kC64:
      if (combiner != Combiner::kAdd) return false;
      f.Run<Cplx<float>, AddOp<Cplx<float>>>();
      return true;
    case ElementType::kC128:
      if (combiner != Combiner::kAdd) return false;
      f.Run<Cplx<double>, AddOp<Cplx<double>>>();
      return true;
    default:
      return false;
  }
}

CombineFn GetCombineFn(Combiner combiner, ElementType type) {
  TypedCombiner loops;
  return GetTypedCombiner(combiner, type, &loops) ? loops.combine : nullptr;
}

}  // namespace sim
}  // namespace pjrtkit
