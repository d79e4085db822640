#include "xla_plugin/devices/sim/differential/element_format.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "xla_plugin/stablehlo/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace differential {

bool IsPred(ElementType type) { return type == ElementType::kPred; }

bool IsSigned(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsigned(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

bool IsInteger(ElementType type) { return IsSigned(type) || IsUnsigned(type); }

bool IsFloat(ElementType type) { return MantissaBits(type) >= 0; }

bool IsComplex(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128;
}

ElementType ComponentType(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

int ElementBytes(ElementType type) {
  if (IsComplex(type)) return 2 * ElementBytes(ComponentType(type));
  const int bits = ElementTypeBits(type);
  return bits <= 8 ? 1 : bits / 8;
}

int MantissaBits(ElementType type) {
  switch (type) {
    case ElementType::kF64: return 52;
    case ElementType::kF32: return 23;
    case ElementType::kF16: return 10;
    case ElementType::kBF16: return 7;
    case ElementType::kF8E5M2:
    case ElementType::kF8E5M2FNUZ: return 2;
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E4M3: return 3;
    case ElementType::kF8E3M4: return 4;
    case ElementType::kF8E8M0FNU: return 0;
    default: return -1;
  }
}

double Epsilon(ElementType type) { return std::ldexp(1.0, -MantissaBits(ComponentType(type))); }

int64_t NumElements(const HostTensor& tensor) {
  return static_cast<int64_t>(tensor.data.size()) / ElementBytes(tensor.type);
}

uint64_t ElementBits(const HostTensor& tensor, int64_t i, int part) {
  const ElementType component = ComponentType(tensor.type);
  const int bytes = ElementBytes(component);
  uint64_t bits = 0;
  std::memcpy(&bits, tensor.data.data() + i * ElementBytes(tensor.type) + part * bytes, bytes);
  return bits;
}

void SetElementBits(HostTensor* tensor, int64_t i, uint64_t bits, int part) {
  const ElementType component = ComponentType(tensor->type);
  const int bytes = ElementBytes(component);
  std::memcpy(&tensor->data[i * ElementBytes(tensor->type) + part * bytes], &bits, bytes);
}

double FloatValue(ElementType type, uint64_t bits) { return stablehlo::DecodeFloat(bits, type); }

uint64_t FloatBits(ElementType type, double value) { return stablehlo::EncodeFloat(value, type); }

bool IsNaN(ElementType type, uint64_t bits) { return std::isnan(FloatValue(type, bits)); }

bool IsInf(ElementType type, uint64_t bits) { return std::isinf(FloatValue(type, bits)); }

bool IsFlushedDenormal(ElementType type, uint64_t bits) {
  const double value = std::fabs(FloatValue(type, bits));
  if (value == 0 || std::isnan(value)) return false;
  return value < (type == ElementType::kF64 ? 0x1p-1022 : 0x1p-126);
}

int64_t SignedValue(ElementType type, uint64_t bits) {
  const int width = ElementTypeBits(type);
  if (IsSigned(type) && width < 64 && (bits >> (width - 1)) & 1) {
    return static_cast<int64_t>(bits | (~uint64_t{0} << width));
  }
  return static_cast<int64_t>(bits);
}

uint64_t UlpDistance(ElementType type, uint64_t a, uint64_t b) {
  // Sign-magnitude bits -> a monotonic integer line (f8E8M0FNU has no sign bit).
  const int width = ElementTypeBits(type);
  auto key = [&](uint64_t bits) -> int64_t {
    if (type == ElementType::kF8E8M0FNU) return static_cast<int64_t>(bits);
    const uint64_t sign = uint64_t{1} << (width - 1);
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) != 0 ? -magnitude : magnitude;
  };
  const int64_t ka = key(a), kb = key(b);
  return ka > kb ? static_cast<uint64_t>(ka - kb) : static_cast<uint64_t>(kb - ka);
}

namespace {

std::string FloatText(ElementType type, uint64_t bits) {
  char text[96];
  const int digits = type == ElementType::kF64 ? 17 : 9;
  const int hex_digits = (ElementTypeBits(type) + 3) / 4;
  std::snprintf(text, sizeof text, "%.*g [0x%0*llx]", digits, FloatValue(type, bits), hex_digits,
                static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace

std::string ElementText(const HostTensor& tensor, int64_t i) {
  const ElementType type = tensor.type;
  if (IsComplex(type)) {
    const ElementType part = ComponentType(type);
    return "(" + FloatText(part, ElementBits(tensor, i, 0)) + ", " +
           FloatText(part, ElementBits(tensor, i, 1)) + ")";
  }
  const uint64_t bits = ElementBits(tensor, i);
  if (IsFloat(type)) return FloatText(type, bits);
  if (IsPred(type)) return bits != 0 ? "true" : "false";
  if (IsUnsigned(type)) return std::to_string(bits);
  return std::to_string(SignedValue(type, bits));
}

std::string ShapeText(ElementType type, const std::vector<int64_t>& dims) {
  std::string text = std::string(ElementTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string TensorValuesText(const HostTensor& tensor, int64_t limit) {
  const int64_t n = NumElements(tensor);
  std::string text = "[";
  for (int64_t i = 0; i < n && i < limit; ++i) text += (i > 0 ? ", " : "") + ElementText(tensor, i);
  if (n > limit) text += ", ... (" + std::to_string(n) + " elements)";
  return text + "]";
}

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
