#include "xla_plugin/stablehlo/dense_elements.h"

#include <charconv>

#include "xla_plugin/stablehlo/float_codec.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One scalar: a number, true or false.
StatusOr<std::string_view> ParseScalar(TextCursor* cursor) {
  if (cursor->TryConsumeKeyword("true")) return std::string_view("true");
  if (cursor->TryConsumeKeyword("false")) return std::string_view("false");
  return cursor->NumberToken("a number, true or false in a dense literal");
}

// Parses a scalar, a complex (re, im) pair or a nested list at list depth `depth`.
Status ParseItem(TextCursor* cursor, int depth, int max_depth, int* leaf_depth,
                 DenseLiteral* literal) {
  if (depth > max_depth) return cursor->Error("a dense literal nested less deeply");
  if (cursor->TryConsume("[")) {
    auto& shape = literal->shape;
    if (static_cast<int>(shape.size()) == depth) shape.push_back(-1);  // Length not known yet.
    int64_t count = 0;
    if (!cursor->TryConsume("]")) {
      do {
        PJRTKIT_RETURN_IF_ERROR(ParseItem(cursor, depth + 1, max_depth, leaf_depth, literal));
        ++count;
      } while (cursor->TryConsume(","));
      PJRTKIT_RETURN_IF_ERROR(cursor->Expect("]", "',' or ']' in a dense literal"));
    }
    if (shape[depth] == -1) {
      shape[depth] = count;
    } else if (shape[depth] != count) {
      return cursor->ErrorAt(literal->offset, "dense literal has lists of different lengths");
    }
    return OkStatus();
  }
  if (*leaf_depth == -1) *leaf_depth = depth;
  if (*leaf_depth != depth) {
    return cursor->ErrorAt(literal->offset, "dense literal mixes scalars and lists at one level");
  }
  bool pair = cursor->TryConsume("(");
  if (!literal->elements.empty() && pair != literal->complex) {
    return cursor->ErrorAt(literal->offset, "dense literal mixes complex and real values");
  }
  literal->complex = pair;
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view first, ParseScalar(cursor));
  literal->elements.push_back(first);
  if (pair) {
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect(",", "',' in a complex (re, im) value"));
    PJRTKIT_ASSIGN_OR_RETURN(std::string_view second, ParseScalar(cursor));
    literal->elements.push_back(second);
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect(")", "')' closing a complex (re, im) value"));
  }
  return OkStatus();
}

void AppendLittleEndian(uint64_t bits, size_t bytes, std::string* out) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

// The bits of one scalar `literal` of `type` (not complex).
StatusOr<uint64_t> ScalarBits(std::string_view literal, ElementType type) {
  if (IsFloatElementType(type)) {
    if (literal == "true" || literal == "false") {
      return InvalidArgument("'" + std::string(literal) + "' is not a " + ElementTypeName(type) +
                             " value");
    }
    return FloatLiteralBits(literal, type);
  }
  int bits = ElementTypeBits(type);
  if (type == ElementType::kPred) {
    if (literal == "true" || literal == "1") return 1;
    if (literal == "false" || literal == "0") return 0;
    return InvalidArgument("'" + std::string(literal) + "' is not an i1 value (true or false)");
  }
  return IntegerLiteralBits(literal, bits);
}

}  // namespace

StatusOr<uint64_t> IntegerLiteralBits(std::string_view literal, int bits) {
  if (bits < 1 || bits > 64) return InvalidArgument("integer width " + std::to_string(bits));
  if (literal == "true") return 1;
  if (literal == "false") return 0;
  bool negative = !literal.empty() && literal[0] == '-';
  std::string_view digits = negative || (!literal.empty() && literal[0] == '+')
                                ? literal.substr(1) : literal;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  auto result = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (digits.empty() || result.ec != std::errc() || result.ptr != digits.data() + digits.size()) {
    return InvalidArgument("'" + std::string(literal) + "' is not an integer of " +
                           std::to_string(bits) + " bits");
  }
  uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  // Signless integers accept [-2^(bits-1), 2^bits - 1].
  bool fits = negative ? magnitude <= (uint64_t{1} << (bits - 1)) : (magnitude & ~mask) == 0;
  if (!fits) {
    return InvalidArgument("integer " + std::string(literal) + " does not fit " +
                           std::to_string(bits) + " bits");
  }
  return (negative ? (~magnitude + 1) : magnitude) & mask;
}

StatusOr<DenseLiteral> ParseDenseLiteral(TextCursor* cursor, int max_depth) {
  DenseLiteral literal;
  cursor->SkipSpace();
  literal.offset = cursor->offset();
  if (cursor->TryConsume(">")) return literal;
  if (cursor->Peek() == '"') {
    PJRTKIT_ASSIGN_OR_RETURN(std::string hex, cursor->StringLiteral("a hex string"));
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') || hex.size() % 2) {
      return cursor->ErrorAt(literal.offset, "dense string literal is not \"0x\" and hex bytes");
    }
    literal.form = DenseLiteral::Form::kHex;
    literal.hex_bytes.reserve(hex.size() / 2 - 1);
    for (size_t i = 2; i < hex.size(); i += 2) {
      int high = HexDigit(hex[i]), low = HexDigit(hex[i + 1]);
      if (high < 0 || low < 0) return cursor->ErrorAt(literal.offset, "bad hex digit in dense");
      literal.hex_bytes.push_back(static_cast<char>(high * 16 + low));
    }
  } else {
    literal.form = DenseLiteral::Form::kElements;
    int leaf_depth = -1;
    PJRTKIT_RETURN_IF_ERROR(ParseItem(cursor, 0, max_depth, &leaf_depth, &literal));
    if (leaf_depth != -1 && static_cast<int>(literal.shape.size()) != leaf_depth) {
      return cursor->ErrorAt(literal.offset, "dense literal has lists of different depths");
    }
  }
  PJRTKIT_RETURN_IF_ERROR(cursor->Expect(">", "'>' closing dense<...>"));
  return literal;
}

Status DecodeDenseLiteral(const DenseLiteral& literal, const Type& type, const TextCursor& cursor,
                          Attribute* attribute) {
  const int64_t count = type.NumElements();
  const ElementType element = type.element_type;
  const bool complex = element == ElementType::kC64 || element == ElementType::kC128;
  const size_t element_bytes = StorageBytes(element);
  auto error = [&](const std::string& message) {
    return cursor.ErrorAt(literal.offset, message + " (dense literal of " + type.ToString() + ")");
  };
  if (count < 0) return error("a dense constant needs static dims");
  if (element_bytes == 0) return error("unsupported element type");
  attribute->is_splat = false;
  attribute->data.clear();
  switch (literal.form) {
    case DenseLiteral::Form::kEmpty:
      if (count != 0) return error("dense<> has no elements");
      return OkStatus();
    case DenseLiteral::Form::kHex: {
      const size_t size = literal.hex_bytes.size();
      if (count == 0 && size != 0) return error("hex data given for no elements");
      if (count > 0 && size == element_bytes && count != 1) {
        attribute->is_splat = true;
      } else if (size % element_bytes != 0 ||
                 size / element_bytes != static_cast<uint64_t>(count)) {
        return error("hex data of " + std::to_string(size) + " bytes is neither one element nor " +
                     std::to_string(count));
      }
      attribute->data = literal.hex_bytes;
      return OkStatus();
    }
    case DenseLiteral::Form::kElements:
      break;
  }
  if (literal.complex != complex) {
    return error(complex ? "complex elements are written (re, im)" : "a real type has no pairs");
  }
  const size_t per_value = complex ? 2 : 1;
  const size_t values = literal.elements.size() / per_value;
  if (literal.shape.empty()) {
    if (values != 1) return error("expected one value");
    attribute->is_splat = count != 1;
  } else if (literal.shape != type.dims) {
    std::string shape;
    for (int64_t d : literal.shape) shape += std::to_string(d) + "x";
    return error("the literal's shape " + shape + " does not match");
  }
  const ElementType component = element == ElementType::kC64    ? ElementType::kF32
                                : element == ElementType::kC128 ? ElementType::kF64
                                                                : element;
  const size_t component_bytes = element_bytes / per_value;
  attribute->data.reserve(literal.elements.size() * component_bytes);
  for (std::string_view scalar : literal.elements) {
    StatusOr<uint64_t> bits = ScalarBits(scalar, component);
    if (!bits.ok()) return error(bits.status().message());
    AppendLittleEndian(*bits, component_bytes, &attribute->data);
  }
  // A splat of a tensor with no elements (MLIR prints `dense<0.0> : tensor<0x17xf32>`) keeps
  // its one value; a list of values for no elements is an error.
  if (count == 0 && !attribute->is_splat && !attribute->data.empty()) {
    return error("values given for no elements");
  }
  return OkStatus();
}

}  // namespace stablehlo
}  // namespace pjrtkit
