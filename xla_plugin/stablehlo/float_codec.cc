#include "xla_plugin/stablehlo/float_codec.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace pjrtkit {
namespace stablehlo {
namespace {

// How a narrow format spends its special encodings.
enum class Specials {
  kIeee,    // Infinity and NaN at the all-ones exponent (f16, bf16, f8E5M2, f8E4M3, f8E3M4).
  kFn,      // No infinity; NaN = all ones (f8E4M3FN).
  kFnuz,    // No infinity, no -0; NaN = the sign bit alone (f8E4M3FNUZ, f8E5M2FNUZ, ...B11FNUZ).
  kFinite,  // Neither infinity nor NaN (f4E2M1FN, f6E2M3FN, f6E3M2FN).
  kE8M0,    // Exponent only, unsigned, NaN = 0xFF (f8E8M0FNU).
};

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

bool NarrowFormat(ElementType type, Format* format) {
  switch (type) {
    case ElementType::kF16: *format = {5, 10, 15, Specials::kIeee}; return true;
    case ElementType::kBF16: *format = {8, 7, 127, Specials::kIeee}; return true;
    case ElementType::kF8E5M2: *format = {5, 2, 15, Specials::kIeee}; return true;
    case ElementType::kF8E4M3: *format = {4, 3, 7, Specials::kIeee}; return true;
    case ElementType::kF8E3M4: *format = {3, 4, 3, Specials::kIeee}; return true;
    case ElementType::kF8E4M3FN: *format = {4, 3, 7, Specials::kFn}; return true;
    case ElementType::kF8E4M3FNUZ: *format = {4, 3, 8, Specials::kFnuz}; return true;
    case ElementType::kF8E5M2FNUZ: *format = {5, 2, 16, Specials::kFnuz}; return true;
    case ElementType::kF8E4M3B11FNUZ: *format = {4, 3, 11, Specials::kFnuz}; return true;
    case ElementType::kF8E8M0FNU: *format = {8, 0, 127, Specials::kE8M0}; return true;
    case ElementType::kF4E2M1FN: *format = {2, 1, 1, Specials::kFinite}; return true;
    case ElementType::kF6E2M3FN: *format = {2, 3, 1, Specials::kFinite}; return true;
    case ElementType::kF6E3M2FN: *format = {3, 2, 3, Specials::kFinite}; return true;
    default: return false;
  }
}

// Rounds a non-negative `x` to an integer, ties to even.
uint64_t RoundHalfEven(double x) {
  double floor = std::floor(x);
  double fraction = x - floor;
  uint64_t result = static_cast<uint64_t>(floor);
  if (fraction > 0.5 || (fraction == 0.5 && (result & 1) != 0)) ++result;
  return result;
}

uint64_t EncodeNarrow(double value, const Format& f) {
  const uint64_t sign_bit = uint64_t{1} << (f.exponent_bits + f.mantissa_bits);
  const uint64_t all_ones_exponent = (uint64_t{1} << f.exponent_bits) - 1;
  const uint64_t mantissa_mask = (uint64_t{1} << f.mantissa_bits) - 1;
  uint64_t nan = 0;
  uint64_t max_finite = 0;
  switch (f.specials) {
    case Specials::kIeee:
      nan = (all_ones_exponent << f.mantissa_bits) | (uint64_t{1} << (f.mantissa_bits - 1));
      max_finite = ((all_ones_exponent - 1) << f.mantissa_bits) | mantissa_mask;
      break;
    case Specials::kFn:
      nan = (all_ones_exponent << f.mantissa_bits) | mantissa_mask;
      max_finite = nan - 1;
      break;
    case Specials::kFnuz:
      nan = sign_bit;
      max_finite = (all_ones_exponent << f.mantissa_bits) | mantissa_mask;
      break;
    case Specials::kFinite:
      max_finite = (all_ones_exponent << f.mantissa_bits) | mantissa_mask;
      break;
    case Specials::kE8M0: {
      if (std::isnan(value) || value <= 0) return 0xFF;
      int exponent = 0;
      double fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent.
      int64_t biased = (fraction > 0.75 ? exponent : exponent - 1) + f.bias;
      return biased < 0 ? 0 : biased > 254 ? 254 : static_cast<uint64_t>(biased);
    }
  }
  if (std::isnan(value)) return nan;
  uint64_t sign = std::signbit(value) ? sign_bit : 0;
  if (f.specials == Specials::kFnuz) sign = value == 0 ? 0 : sign;
  double magnitude = std::fabs(value);
  uint64_t bits;
  if (std::isinf(magnitude)) {
    bits = max_finite + 1;
  } else if (magnitude == 0) {
    bits = 0;
  } else {
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent).
    int64_t biased = static_cast<int64_t>(exponent) - 1 + f.bias;
    if (biased > static_cast<int64_t>(all_ones_exponent) + 1) {
      bits = max_finite + 1;
    } else if (biased >= 1) {
      uint64_t q = RoundHalfEven(std::ldexp(magnitude, f.mantissa_bits - (exponent - 1)));
      bits = ((static_cast<uint64_t>(biased) - 1) << f.mantissa_bits) + q;
    } else {
      bits = RoundHalfEven(std::ldexp(magnitude, f.mantissa_bits - (1 - f.bias)));
    }
  }
  if (bits > max_finite) {
    switch (f.specials) {
      case Specials::kIeee: return sign | (all_ones_exponent << f.mantissa_bits);
      case Specials::kFn:
      case Specials::kFnuz: return nan | (f.specials == Specials::kFn ? sign : 0);
      default: bits = max_finite;
    }
  }
  if (f.specials == Specials::kFnuz && bits == 0) return 0;
  return sign | bits;
}

double DecodeNarrow(uint64_t bits, const Format& f) {
  const uint64_t sign_bit = uint64_t{1} << (f.exponent_bits + f.mantissa_bits);
  const uint64_t all_ones_exponent = (uint64_t{1} << f.exponent_bits) - 1;
  const uint64_t mantissa_mask = (uint64_t{1} << f.mantissa_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  bits &= (sign_bit << 1) - 1;
  if (f.specials == Specials::kE8M0) {
    return bits == 0xFF ? nan : std::ldexp(1.0, static_cast<int>(bits) - f.bias);
  }
  if (f.specials == Specials::kFnuz && bits == sign_bit) return nan;
  double sign = (bits & sign_bit) ? -1.0 : 1.0;
  uint64_t exponent = (bits >> f.mantissa_bits) & all_ones_exponent;
  uint64_t mantissa = bits & mantissa_mask;
  if (f.specials == Specials::kIeee && exponent == all_ones_exponent) {
    return mantissa != 0 ? nan : sign * std::numeric_limits<double>::infinity();
  }
  if (f.specials == Specials::kFn && exponent == all_ones_exponent && mantissa == mantissa_mask) {
    return nan;
  }
  if (exponent == 0) {
    return sign * std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  }
  double significand = static_cast<double>(mantissa | (mantissa_mask + 1));
  return sign * std::ldexp(significand, static_cast<int>(exponent) - f.bias - f.mantissa_bits);
}

int FloatBits(ElementType type) { return ElementTypeBits(type); }

}  // namespace

bool IsFloatElementType(ElementType type) {
  Format format;
  return type == ElementType::kF32 || type == ElementType::kF64 || NarrowFormat(type, &format);
}

uint64_t EncodeFloat(double value, ElementType type) {
  if (type == ElementType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  if (type == ElementType::kF32) {
    float narrow = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &narrow, sizeof bits);
    return bits;
  }
  Format format;
  return NarrowFormat(type, &format) ? EncodeNarrow(value, format) : 0;
}

double DecodeFloat(uint64_t bits, ElementType type) {
  if (type == ElementType::kF64) {
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  if (type == ElementType::kF32) {
    uint32_t narrow_bits = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &narrow_bits, sizeof value);
    return value;
  }
  Format format;
  return NarrowFormat(type, &format) ? DecodeNarrow(bits, format) : 0;
}

StatusOr<double> ParseDecimal(std::string_view literal) {
  std::string_view text = literal;
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars leaves `value` alone on overflow/underflow: MLIR's parser rounds instead.
    bool negative = !text.empty() && text[0] == '-';
    size_t e = text.find_first_of("eE");
    bool tiny = e != std::string_view::npos && e + 1 < text.size() && text[e + 1] == '-';
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    return negative ? -value : value;
  }
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return InvalidArgument("'" + std::string(literal) + "' is not a decimal number");
  }
  return value;
}

StatusOr<uint64_t> FloatLiteralBits(std::string_view literal, ElementType type) {
  if (!IsFloatElementType(type)) {
    return InvalidArgument(std::string(ElementTypeName(type)) + " is not a float type");
  }
  bool negative = !literal.empty() && literal[0] == '-';
  std::string_view digits = negative ? literal.substr(1) : literal;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    if (negative) {
      return InvalidArgument("a hex float literal has no sign: " + std::string(literal));
    }
    uint64_t bits = 0;
    auto result = std::from_chars(digits.data() + 2, digits.data() + digits.size(), bits, 16);
    int width = FloatBits(type);
    if (result.ec != std::errc() || result.ptr != digits.data() + digits.size() ||
        (width < 64 && (bits >> width) != 0)) {
      return InvalidArgument("hex literal " + std::string(literal) + " does not fit " +
                             std::to_string(width) + "-bit " + ElementTypeName(type));
    }
    return bits;
  }
  if (type == ElementType::kF32) {
    // Straight to float: no double rounding.
    std::string_view text = !literal.empty() && literal[0] == '+' ? literal.substr(1) : literal;
    float value = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec == std::errc() && result.ptr == text.data() + text.size()) {
      uint32_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      return bits;
    }
  }
  PJRTKIT_ASSIGN_OR_RETURN(double value, ParseDecimal(literal));
  return EncodeFloat(value, type);
}

}  // namespace stablehlo
}  // namespace pjrtkit
