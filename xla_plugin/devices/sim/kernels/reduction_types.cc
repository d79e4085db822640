#include "xla_plugin/devices/sim/kernels/reduction_types.h"

#include <limits>

namespace pjrtkit {
namespace sim {

TypeClass ClassOfType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
      return TypeClass::kBool;
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      return TypeClass::kSignedInt;
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
      return TypeClass::kUnsignedInt;
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
      return TypeClass::kFloat;
    case ElementType::kC64:
    case ElementType::kC128:
      return TypeClass::kComplex;
    default:
      return TypeClass::kOther;
  }
}

bool KernelSupportsType(ElementType type) { return ClassOfType(type) != TypeClass::kOther; }

int64_t TypeBytes(ElementType type) {
  const int bits = ElementTypeBits(type);
  return bits <= 8 ? 1 : bits / 8;
}

bool IsPromotable(ElementType from, ElementType to) {
  const TypeClass a = ClassOfType(from);
  const TypeClass b = ClassOfType(to);
  const bool int_a = a == TypeClass::kSignedInt || a == TypeClass::kUnsignedInt;
  const bool int_b = b == TypeClass::kSignedInt || b == TypeClass::kUnsignedInt;
  if (a == TypeClass::kOther || b == TypeClass::kOther) return false;
  if (!(a == b || (int_a && int_b))) return false;
  return ElementTypeBits(from) <= ElementTypeBits(to);
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::string Describe(const char* op, const std::string& what, const ArrayType* type) {
  std::string text = std::string(op) + ": " + what;
  if (type != nullptr) text += " (" + type->ToString() + ")";
  return text;
}

Status CheckArrayType(const char* op, const std::string& what, const ArrayType* type) {
  if (type == nullptr) return InvalidArgument(std::string(op) + ": " + what + " has no type");
  if (!KernelSupportsType(type->type)) {
    return InvalidArgument(Describe(op, what, type) +
                           ": element type not supported by the sim kernels (expected pred, "
                           "s8-s64, u8-u64, f16, bf16, f32, f64, c64, c128 or a one-byte f8)");
  }
  const int64_t limit = std::numeric_limits<int64_t>::max() / 16;
  int64_t count = 1;
  for (size_t d = 0; d < type->dims.size(); ++d) {
    const int64_t size = type->dims[d];
    if (size < 0) {
      return InvalidArgument(Describe(op, what, type) + ": dimension " + std::to_string(d) +
                             " is negative (expected >= 0)");
    }
    // Every product of a subset of the dimensions must fit (zero-sized ones count as 1 here).
    if (size != 0 && count > limit / size) {
      return InvalidArgument(Describe(op, what, type) +
                             ": too many elements (expected fewer than " + std::to_string(limit) +
                             ")");
    }
    if (size != 0) count *= size;
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
