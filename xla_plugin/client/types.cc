#include "xla_plugin/client/types.h"

namespace pjrtkit {

int ElementTypeBits(ElementType type) {
  switch (type) {
    case ElementType::kInvalid:
    case ElementType::kToken:
      return 0;
    case ElementType::kS1:
    case ElementType::kU1:
      return 1;
    case ElementType::kS2:
    case ElementType::kU2:
      return 2;
    case ElementType::kS4:
    case ElementType::kU4:
    case ElementType::kF4E2M1FN:
      return 4;
    case ElementType::kF6E2M3FN:
    case ElementType::kF6E3M2FN:
      return 6;
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3:
    case ElementType::kF8E3M4:
    case ElementType::kF8E8M0FNU:
      return 8;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16:
      return 16;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32:
      return 32;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64:
    case ElementType::kC64:
      return 64;
    case ElementType::kC128:
      return 128;
  }
  return 0;
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kInvalid: return "invalid";
    case ElementType::kPred: return "pred";
    case ElementType::kS8: return "s8";
    case ElementType::kS16: return "s16";
    case ElementType::kS32: return "s32";
    case ElementType::kS64: return "s64";
    case ElementType::kU8: return "u8";
    case ElementType::kU16: return "u16";
    case ElementType::kU32: return "u32";
    case ElementType::kU64: return "u64";
    case ElementType::kF16: return "f16";
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
    case ElementType::kBF16: return "bf16";
    case ElementType::kC64: return "c64";
    case ElementType::kC128: return "c128";
    case ElementType::kF8E5M2: return "f8e5m2";
    case ElementType::kF8E4M3FN: return "f8e4m3fn";
    case ElementType::kF8E4M3B11FNUZ: return "f8e4m3b11fnuz";
    case ElementType::kF8E5M2FNUZ: return "f8e5m2fnuz";
    case ElementType::kF8E4M3FNUZ: return "f8e4m3fnuz";
    case ElementType::kS4: return "s4";
    case ElementType::kU4: return "u4";
    case ElementType::kToken: return "token";
    case ElementType::kS2: return "s2";
    case ElementType::kU2: return "u2";
    case ElementType::kF8E4M3: return "f8e4m3";
    case ElementType::kF8E3M4: return "f8e3m4";
    case ElementType::kF8E8M0FNU: return "f8e8m0fnu";
    case ElementType::kF4E2M1FN: return "f4e2m1fn";
    case ElementType::kS1: return "s1";
    case ElementType::kU1: return "u1";
    case ElementType::kF6E2M3FN: return "f6e2m3fn";
    case ElementType::kF6E3M2FN: return "f6e3m2fn";
  }
  return "invalid";
}

size_t DenseByteSize(ElementType type, const std::vector<int64_t>& dims) {
  uint64_t elements = 1;
  for (int64_t d : dims) elements *= static_cast<uint64_t>(d < 0 ? 0 : d);
  // elements * bits / 8 rounded up, without forming elements * bits (which wraps for arrays of
  // 2^61 bytes and more; callers check that the size fits in 63 bits first).
  const uint64_t bits = static_cast<uint64_t>(ElementTypeBits(type));
  return static_cast<size_t>(elements / 8 * bits + (elements % 8 * bits + 7) / 8);
}

const char* AttributeTypeName(const AttributeValue& value) {
  switch (value.index()) {
    case 0: return "int64";
    case 1: return "string";
    case 2: return "bool";
    case 3: return "float";
    case 4: return "int64 list";
  }
  return "unknown";
}

}  // namespace pjrtkit
