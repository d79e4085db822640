#include "xla_plugin/devices/sim/kernels/element_kind.h"

namespace pjrtkit {
namespace sim {

ComputeKind ComputeKindOf(ElementType type) {
  switch (type) {
    case ElementType::kPred: return ComputeKind::kPred;
    case ElementType::kS8: return ComputeKind::kS8;
    case ElementType::kS16: return ComputeKind::kS16;
    case ElementType::kS32: return ComputeKind::kS32;
    case ElementType::kS64: return ComputeKind::kS64;
    case ElementType::kU8: return ComputeKind::kU8;
    case ElementType::kU16: return ComputeKind::kU16;
    case ElementType::kU32: return ComputeKind::kU32;
    case ElementType::kU64: return ComputeKind::kU64;
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3:
    case ElementType::kF8E3M4:
    case ElementType::kF8E8M0FNU:
      return ComputeKind::kF32;
    case ElementType::kF64: return ComputeKind::kF64;
    case ElementType::kC64: return ComputeKind::kC64;
    case ElementType::kC128: return ComputeKind::kC128;
    default: return ComputeKind::kInvalid;
  }
}

bool IsSupportedElementType(ElementType type) {
  return ComputeKindOf(type) != ComputeKind::kInvalid;
}

int ComputeKindBytes(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::kPred:
    case ComputeKind::kS8:
    case ComputeKind::kU8:
      return 1;
    case ComputeKind::kS16:
    case ComputeKind::kU16:
      return 2;
    case ComputeKind::kS32:
    case ComputeKind::kU32:
    case ComputeKind::kF32:
      return 4;
    case ComputeKind::kS64:
    case ComputeKind::kU64:
    case ComputeKind::kF64:
    case ComputeKind::kC64:
      return 8;
    case ComputeKind::kC128:
      return 16;
    case ComputeKind::kInvalid:
      return 0;
  }
  return 0;
}

int StorageBytes(ElementType type) {
  return IsSupportedElementType(type) ? ElementTypeBits(type) / 8 : 0;
}

bool IsLowPrecisionFloat(ElementType type) {
  return ComputeKindOf(type) == ComputeKind::kF32 && type != ElementType::kF32;
}

bool IsFloatType(ElementType type) {
  ComputeKind kind = ComputeKindOf(type);
  return kind == ComputeKind::kF32 || kind == ComputeKind::kF64;
}

bool IsComplexType(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128;
}

bool IsSignedIntType(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsignedIntType(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

ElementType ComplexComponentType(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return ElementType::kInvalid;
}

}  // namespace sim
}  // namespace pjrtkit
