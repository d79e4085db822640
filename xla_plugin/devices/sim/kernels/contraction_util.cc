#include "xla_plugin/devices/sim/kernels/contraction_util.h"

#include <cstring>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace contraction_util {
namespace {

bool IsSignedInt(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsignedInt(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

bool IsInt(ElementType type) { return IsSignedInt(type) || IsUnsignedInt(type); }

bool IsComplex(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128;
}

bool IsFloat(ElementType type) {
  switch (type) {
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
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

// Copies the low bytes of each wide unsigned value into a narrower integer (wrapping).
template <typename Wide, typename Narrow>
void Truncate(const void* src, void* dst, int64_t n) {
  const Wide* in = static_cast<const Wide*>(src);
  Narrow* out = static_cast<Narrow*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Narrow>(in[i]);
}

// One element of `Bytes` bytes, copied as a unit.
template <int Bytes>
struct Element {
  unsigned char bytes[Bytes];
};

template <typename T>
void StridedCopyTyped(const T* src, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& strides, T* dst) {
  const int rank = static_cast<int>(dims.size());
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    *dst = *src;
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  const T* base = src;
  while (true) {
    if (inner_stride == 1) {
      std::memcpy(dst, base, static_cast<size_t>(inner) * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = base[i * inner_stride];
    }
    dst += inner;
    int d = rank - 2;
    for (; d >= 0; --d) {
      base += strides[d];
      if (++index[d] < dims[d]) break;
      base -= strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

ElementType AccumulatorElementType(Accumulator accumulator) {
  switch (accumulator) {
    case Accumulator::kF32: return ElementType::kF32;
    case Accumulator::kF64: return ElementType::kF64;
    case Accumulator::kC64: return ElementType::kC64;
    case Accumulator::kC128: return ElementType::kC128;
    case Accumulator::kU32: return ElementType::kU32;
    case Accumulator::kU64: return ElementType::kU64;
    case Accumulator::kPred: return ElementType::kPred;
  }
  return ElementType::kInvalid;
}

int64_t AccumulatorBytes(Accumulator accumulator) {
  switch (accumulator) {
    case Accumulator::kF32: return 4;
    case Accumulator::kF64: return 8;
    case Accumulator::kC64: return 8;
    case Accumulator::kC128: return 16;
    case Accumulator::kU32: return 4;
    case Accumulator::kU64: return 8;
    case Accumulator::kPred: return 1;
  }
  return 0;
}

bool IsSupportedType(ElementType type) {
  return type == ElementType::kPred || IsInt(type) || IsFloat(type) || IsComplex(type);
}

Status ChooseAccumulator(const char* op, ElementType lhs, ElementType rhs, ElementType result,
                         Accumulator* accumulator) {
  const ElementType types[3] = {lhs, rhs, result};
  const char* names[3] = {"lhs", "rhs", "result"};
  for (int i = 0; i < 3; ++i) {
    if (!IsSupportedType(types[i])) {
      return InvalidArgument(std::string(op) + ": the " + names[i] + " element type " +
                             ElementTypeName(types[i]) +
                             " is not supported (expected pred, s8..s64, u8..u64, f16, bf16, "
                             "f32, f64, c64, c128 or a one-byte float8 type)");
    }
  }
  const auto mismatch = [&](const char* expected) {
    return InvalidArgument(std::string(op) + ": operand element types " + ElementTypeName(lhs) +
                           " x " + ElementTypeName(rhs) + " cannot produce a " +
                           ElementTypeName(result) + " result (expected " + expected + ")");
  };
  const bool any_f64 = lhs == ElementType::kF64 || rhs == ElementType::kF64;
  const bool any_c128 = lhs == ElementType::kC128 || rhs == ElementType::kC128;
  const bool any_complex = IsComplex(lhs) || IsComplex(rhs);
  const bool int_or_pred_operands = (IsInt(lhs) || lhs == ElementType::kPred) &&
                                    (IsInt(rhs) || rhs == ElementType::kPred);
  if (result == ElementType::kPred) {
    if (lhs != ElementType::kPred || rhs != ElementType::kPred) return mismatch("pred operands");
    *accumulator = Accumulator::kPred;
  } else if (IsInt(result)) {
    if (!int_or_pred_operands) return mismatch("integer or pred operands");
    *accumulator = ElementTypeBits(result) <= 32 ? Accumulator::kU32 : Accumulator::kU64;
  } else if (IsFloat(result)) {
    if (any_complex) return mismatch("real operands");
    *accumulator =
        result == ElementType::kF64 || any_f64 ? Accumulator::kF64 : Accumulator::kF32;
  } else {
    *accumulator = result == ElementType::kC128 || any_f64 || any_c128 ? Accumulator::kC128
                                                                        : Accumulator::kC64;
  }
  return OkStatus();
}

Status CheckArrayType(const char* op, const char* what, const ArrayType* type) {
  if (type == nullptr) return InvalidArgument(std::string(op) + ": the " + what + " type is null");
  constexpr int64_t kMaxBytes = int64_t{1} << 62;
  int64_t bytes = type->element_bytes();
  for (int64_t d : type->dims) {
    if (d < 0) {
      return InvalidArgument(std::string(op) + ": the " + what + " " + type->ToString() +
                             " has a negative dimension (expected sizes >= 0)");
    }
    if (d != 0 && bytes > kMaxBytes / d) {
      return InvalidArgument(std::string(op) + ": the " + what + " " + type->ToString() +
                             " is too large (expected fewer than 2^62 bytes)");
    }
    bytes = d == 0 ? 0 : bytes * d;
  }
  return OkStatus();
}

void ConvertToAccumulator(ElementType from, const void* src, Accumulator accumulator, void* dst,
                          int64_t n) {
  if (n == 0) return;
  ElementType to = AccumulatorElementType(accumulator);
  if (accumulator == Accumulator::kU32 && IsSignedInt(from)) to = ElementType::kS32;
  if (accumulator == Accumulator::kU64 && IsSignedInt(from)) to = ElementType::kS64;
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(n * AccumulatorBytes(accumulator)));
    return;
  }
  ConvertArray(from, src, to, dst, n);
}

void ConvertFromAccumulator(Accumulator accumulator, const void* src, ElementType to, void* dst,
                            int64_t n) {
  if (n == 0) return;
  const ElementType from = AccumulatorElementType(accumulator);
  if (accumulator == Accumulator::kU32 || accumulator == Accumulator::kU64 ||
      accumulator == Accumulator::kPred) {
    switch (ElementTypeBits(to)) {
      case 8:
        return accumulator == Accumulator::kU64 ? Truncate<uint64_t, uint8_t>(src, dst, n)
               : accumulator == Accumulator::kU32 ? Truncate<uint32_t, uint8_t>(src, dst, n)
                                                  : Truncate<uint8_t, uint8_t>(src, dst, n);
      case 16:
        return Truncate<uint32_t, uint16_t>(src, dst, n);
      case 32:
        return Truncate<uint32_t, uint32_t>(src, dst, n);
      default:
        return Truncate<uint64_t, uint64_t>(src, dst, n);
    }
  }
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(n * AccumulatorBytes(accumulator)));
    return;
  }
  ConvertArray(from, src, to, dst, n);
}

void StridedCopy(int64_t element_bytes, const void* src, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& src_strides, void* dst) {
  switch (element_bytes) {
    case 1:
      return StridedCopyTyped(static_cast<const Element<1>*>(src), dims, src_strides,
                              static_cast<Element<1>*>(dst));
    case 2:
      return StridedCopyTyped(static_cast<const Element<2>*>(src), dims, src_strides,
                              static_cast<Element<2>*>(dst));
    case 4:
      return StridedCopyTyped(static_cast<const Element<4>*>(src), dims, src_strides,
                              static_cast<Element<4>*>(dst));
    case 8:
      return StridedCopyTyped(static_cast<const Element<8>*>(src), dims, src_strides,
                              static_cast<Element<8>*>(dst));
    default:
      return StridedCopyTyped(static_cast<const Element<16>*>(src), dims, src_strides,
                              static_cast<Element<16>*>(dst));
  }
}

bool MergeDimensions(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& group, int64_t* size, int64_t* stride) {
  *size = GroupSize(dims, group);
  *stride = 0;
  if (*size == 0) return true;
  int64_t previous = -1;  // The last dimension of size > 1 seen.
  for (int64_t d : group) {
    if (dims[d] == 1) continue;
    if (previous >= 0 && strides[previous] != strides[d] * dims[d]) return false;
    previous = d;
  }
  if (previous >= 0) *stride = strides[previous];
  return true;
}

int64_t GroupSize(const std::vector<int64_t>& dims, const std::vector<int64_t>& group) {
  int64_t size = 1;
  for (int64_t d : group) size *= dims[d];
  return size;
}

std::string VectorToString(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(values[i]);
  }
  return text + "]";
}

}  // namespace contraction_util
}  // namespace sim
}  // namespace pjrtkit
