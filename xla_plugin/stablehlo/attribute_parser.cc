#include "xla_plugin/stablehlo/attribute_parser.h"

#include <utility>

#include "xla_plugin/stablehlo/dense_elements.h"
#include "xla_plugin/stablehlo/float_codec.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

bool IsHexLiteral(std::string_view token) {
  if (!token.empty() && token[0] == '-') token.remove_prefix(1);
  return token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X');
}

bool LooksLikeFloat(std::string_view token) {
  return !IsHexLiteral(token) && token.find_first_of(".eE") != std::string_view::npos;
}

bool IsSignedIntegerType(ElementType type) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsIntegerType(ElementType type) {
  return type != ElementType::kInvalid && type != ElementType::kToken &&
         type != ElementType::kC64 && type != ElementType::kC128 && !IsFloatElementType(type);
}

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

// True for the bare identifiers that name types other than the element types (kept as text).
bool IsOtherTypeKeyword(std::string_view word) {
  if (word == "index" || word == "none" || word == "tf32") return true;
  std::string_view digits = word;
  if (digits.substr(0, 2) == "si" || digits.substr(0, 2) == "ui") {
    digits.remove_prefix(2);
  } else if (!digits.empty() && (digits[0] == 'i' || digits[0] == 'f')) {
    digits.remove_prefix(1);
  } else {
    return false;
  }
  return !digits.empty() && digits[0] >= '0' && digits[0] <= '9';
}

Type MakeScalar(ElementType type) {
  Type scalar;
  scalar.kind = Type::Kind::kScalar;
  scalar.element_type = type;
  return scalar;
}

Type MakeOther(std::string_view text) {
  Type other;
  other.kind = Type::Kind::kOther;
  other.text = std::string(text);
  return other;
}

}  // namespace

Status AttributeParser::CheckDepth(int depth) {
  if (depth <= max_depth_) return OkStatus();
  return cursor_->Error("less nesting (more than " + std::to_string(max_depth_) + " levels)");
}

void AttributeParser::DefineAttributeAlias(std::string_view name, Attribute value, size_t size) {
  attr_aliases_[std::string(name)] = {std::move(value), size};
}

void AttributeParser::DefineTypeAlias(std::string_view name, Type type, size_t size) {
  type_aliases_[std::string(name)] = {std::move(type), size};
}

Status AttributeParser::ChargeAliasUse(size_t size, size_t offset) {
  if (size > alias_budget_) {
    return cursor_->ErrorAt(offset, "aliases expand to more than " +
                                        std::to_string(kAliasExpansion) + " times the text");
  }
  alias_budget_ -= size;
  return OkStatus();
}

StatusOr<std::vector<Type>> AttributeParser::ParseTypeList(int depth) {
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("(", "'(' opening a type list"));
  std::vector<Type> types;
  if (cursor_->TryConsume(")")) return types;
  do {
    PJRTKIT_ASSIGN_OR_RETURN(Type type, ParseType(depth + 1));
    types.push_back(std::move(type));
  } while (cursor_->TryConsume(","));
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(")", "',' or ')' in a type list"));
  return types;
}

StatusOr<std::vector<Type>> AttributeParser::ParseResultTypes(int depth) {
  if (cursor_->Peek() == '(') return ParseTypeList(depth);
  PJRTKIT_ASSIGN_OR_RETURN(Type type, ParseType(depth + 1));
  return std::vector<Type>{std::move(type)};
}

StatusOr<Type> AttributeParser::ParseType(int depth) {
  PJRTKIT_RETURN_IF_ERROR(CheckDepth(depth));
  cursor_->SkipSpace();
  size_t begin = cursor_->offset();
  char c = cursor_->Peek();
  if (c == '(') {
    Type function;
    function.kind = Type::Kind::kFunction;
    PJRTKIT_ASSIGN_OR_RETURN(function.elements, ParseTypeList(depth));
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("->", "'->' in a function type"));
    PJRTKIT_ASSIGN_OR_RETURN(function.results, ParseResultTypes(depth));
    return function;
  }
  if (c == '!') {
    cursor_->TryConsume("!");
    PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_->SuffixIdentifier("a type name"));
    if (name == "stablehlo.token") {
      Type token;
      token.kind = Type::Kind::kToken;
      return token;
    }
    auto alias = type_aliases_.find(std::string(name));
    if (alias != type_aliases_.end()) {
      PJRTKIT_RETURN_IF_ERROR(ChargeAliasUse(alias->second.second, begin));
      return alias->second.first;
    }
    if (name.find('.') == std::string_view::npos) {
      return cursor_->ErrorAt(begin, "undefined type alias !" + std::string(name));
    }
    if (cursor_->PeekAt(0) == '<') {
      cursor_->TryConsume("<");
      PJRTKIT_RETURN_IF_ERROR(cursor_->BalancedBody('<', "a dialect type").status());
    }
    return MakeOther(cursor_->Slice(begin, cursor_->offset()));
  }
  // A simple tensor type seen before: the cached one.
  const std::string_view text = cursor_->text();
  size_t end = begin;
  if (text.compare(begin, 7, "tensor<") == 0) {
    end = begin + 7;
    while (end < text.size() && (IsIdentifierChar(text[end]) || text[end] == '?')) ++end;
    if (end < text.size() && text[end] == '>') {
      auto cached = tensor_types_.find(text.substr(begin, end + 1 - begin));
      if (cached != tensor_types_.end()) {
        cursor_->set_offset(end + 1);
        return cached->second;
      }
    } else {
      end = begin;
    }
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view keyword, cursor_->BareIdentifier("a type"));
  PJRTKIT_ASSIGN_OR_RETURN(Type type, ParseKeywordType(keyword, begin, depth));
  if (end != begin && cursor_->offset() == end + 1 && tensor_types_.size() < 4096) {
    tensor_types_.emplace(text.substr(begin, end + 1 - begin), type);
  }
  return type;
}

StatusOr<Type> AttributeParser::ParseKeywordType(std::string_view keyword, size_t begin,
                                                 int depth) {
  if (keyword == "tensor") {
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("<", "'<' after tensor"));
    return ParseTensorBody(begin, depth);
  }
  if (keyword == "tuple") {
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("<", "'<' after tuple"));
    Type tuple;
    tuple.kind = Type::Kind::kTuple;
    if (cursor_->TryConsume(">")) return tuple;
    do {
      PJRTKIT_ASSIGN_OR_RETURN(Type element, ParseType(depth + 1));
      tuple.elements.push_back(std::move(element));
    } while (cursor_->TryConsume(","));
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(">", "',' or '>' in tuple<...>"));
    return tuple;
  }
  if (keyword == "complex") {
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("<", "'<' after complex"));
    PJRTKIT_ASSIGN_OR_RETURN(Type component, ParseType(depth + 1));
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(">", "'>' closing complex<...>"));
    if (component.kind == Type::Kind::kScalar && component.element_type == ElementType::kF32) {
      return MakeScalar(ElementType::kC64);
    }
    if (component.kind == Type::Kind::kScalar && component.element_type == ElementType::kF64) {
      return MakeScalar(ElementType::kC128);
    }
    return MakeOther(cursor_->Slice(begin, cursor_->offset()));
  }
  ElementType element = ElementTypeFromMlirName(keyword);
  if (element != ElementType::kInvalid) return MakeScalar(element);
  if (IsOtherTypeKeyword(keyword)) return MakeOther(keyword);
  if (cursor_->PeekAt(0) == '<') {  // vector<...>, memref<...>: kept as text.
    cursor_->TryConsume("<");
    PJRTKIT_RETURN_IF_ERROR(cursor_->BalancedBody('<', "a type").status());
    return MakeOther(cursor_->Slice(begin, cursor_->offset()));
  }
  return cursor_->ErrorAt(begin, "expected a type, found '" + std::string(keyword) + "'");
}

StatusOr<Type> AttributeParser::ParseTensorBody(size_t begin, int depth) {
  Type tensor;
  tensor.kind = Type::Kind::kTensor;
  bool other = false;
  if (cursor_->TryConsume("*")) {  // Unranked: kept as text.
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("x", "'x' after '*' in tensor<*x...>"));
    other = true;
  }
  while (!other) {
    char c = cursor_->Peek();
    if (c == '?') {
      cursor_->TryConsume("?");
      tensor.dims.push_back(kDynamicDim);
    } else if (c >= '0' && c <= '9') {
      PJRTKIT_ASSIGN_OR_RETURN(int64_t dim, cursor_->DecimalInteger("a dimension size"));
      tensor.dims.push_back(dim);
    } else {
      break;
    }
    if (cursor_->PeekAt(0) != 'x') return cursor_->Error("'x' after a dimension size");
    cursor_->TryConsume("x");
    if (tensor.dims.size() > 4096) return cursor_->Error("a tensor of at most 4096 dims");
  }
  PJRTKIT_ASSIGN_OR_RETURN(Type element, ParseType(depth + 1));
  if (element.kind != Type::Kind::kScalar) other = true;
  tensor.element_type = element.element_type;
  if (cursor_->TryConsume(",")) {
    cursor_->SkipSpace();
    size_t encoding_begin = cursor_->offset();
    PJRTKIT_RETURN_IF_ERROR(ParseAttribute(depth + 1).status());
    tensor.encoding = std::string(cursor_->Slice(encoding_begin, cursor_->offset()));
  }
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(">", "'>' closing tensor<...>"));
  if (other) return MakeOther(cursor_->Slice(begin, cursor_->offset()));
  return tensor;
}

StatusOr<Attribute> AttributeParser::ParseAttribute(int depth) {
  PJRTKIT_RETURN_IF_ERROR(CheckDepth(depth));
  cursor_->SkipSpace();
  size_t begin = cursor_->offset();
  Attribute attribute;
  char c = cursor_->Peek();
  if (c == '{') {
    cursor_->TryConsume("{");
    attribute.kind = Attribute::Kind::kDictionary;
    PJRTKIT_ASSIGN_OR_RETURN(attribute.entries, ParseDictionaryBody(depth));
    return attribute;
  }
  if (c == '[') {
    cursor_->TryConsume("[");
    attribute.kind = Attribute::Kind::kArray;
    if (cursor_->TryConsume("]")) return attribute;
    do {
      PJRTKIT_ASSIGN_OR_RETURN(Attribute element, ParseAttribute(depth + 1));
      attribute.elements.push_back(std::move(element));
    } while (cursor_->TryConsume(","));
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("]", "',' or ']' in an array attribute"));
    return attribute;
  }
  if (c == '"') {
    attribute.kind = Attribute::Kind::kString;
    PJRTKIT_ASSIGN_OR_RETURN(attribute.string_value, cursor_->StringLiteral("a string"));
    if (cursor_->TryConsume(":")) {
      PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
    }
    return attribute;
  }
  if (c == '@') return ParseSymbolRef();
  if (c == '#') return ParseHashAttribute(depth);
  if ((c >= '0' && c <= '9') || c == '-' || c == '+') return ParseNumberAttribute(depth);
  if (c == '(' || c == '!') {
    attribute.kind = Attribute::Kind::kType;
    PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
    return attribute;
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view word, cursor_->BareIdentifier("an attribute"));
  if (word == "true" || word == "false") {
    attribute.kind = Attribute::Kind::kBool;
    attribute.bool_value = word == "true";
    return attribute;
  }
  if (word == "unit") return attribute;
  if (word == "dense") return ParseDenseAttribute(begin, depth);
  if (word == "array") return ParseDenseArrayAttribute(depth);
  if (word == "dense_resource" || word == "sparse" || word == "opaque" || word == "affine_map" ||
      word == "affine_set" || word == "strided" || word == "distinct" || word == "loc") {
    return ParseOpaqueBuiltin(word, begin, depth);
  }
  attribute.kind = Attribute::Kind::kType;
  PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseKeywordType(word, begin, depth + 1));
  return attribute;
}

StatusOr<AttributeList> AttributeParser::ParseDictionaryBody(int depth) {
  AttributeList entries;
  if (cursor_->TryConsume("}")) return entries;
  do {
    NamedAttribute entry;
    if (cursor_->Peek() == '"') {
      PJRTKIT_ASSIGN_OR_RETURN(entry.name, cursor_->StringLiteral("an attribute name"));
    } else {
      PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_->BareIdentifier("an attribute name"));
      entry.name = std::string(name);
    }
    if (cursor_->TryConsume("=")) {
      PJRTKIT_ASSIGN_OR_RETURN(entry.value, ParseAttribute(depth + 1));
    }
    entries.push_back(std::move(entry));
  } while (cursor_->TryConsume(","));
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("}", "',' or '}' in an attribute dictionary"));
  return entries;
}

StatusOr<Attribute> AttributeParser::ParseHashAttribute(int depth) {
  cursor_->SkipSpace();
  size_t begin = cursor_->offset();
  cursor_->TryConsume("#");
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_->SuffixIdentifier("an attribute name"));
  Attribute attribute;
  attribute.kind = Attribute::Kind::kDialect;
  size_t dot = name.find('.');
  attribute.dialect = std::string(name.substr(0, dot));
  if (dot != std::string_view::npos) attribute.mnemonic = std::string(name.substr(dot + 1));
  if (cursor_->PeekAt(0) == '<') {
    cursor_->TryConsume("<");
    PJRTKIT_ASSIGN_OR_RETURN(std::string_view body, cursor_->BalancedBody('<', "an attribute"));
    if (dot == std::string_view::npos) {  // #dialect<mnemonic ...>
      size_t end = 0;
      while (end < body.size() && IsIdentifierChar(body[end])) ++end;
      attribute.mnemonic = std::string(body.substr(0, end));
    }
    attribute.text = std::string(cursor_->Slice(begin, cursor_->offset()));
    return attribute;
  }
  auto alias = attr_aliases_.find(std::string(name));
  if (alias != attr_aliases_.end()) {
    PJRTKIT_RETURN_IF_ERROR(ChargeAliasUse(alias->second.second, begin));
    return alias->second.first;
  }
  if (dot == std::string_view::npos) {
    return cursor_->ErrorAt(begin, "undefined attribute alias #" + std::string(name));
  }
  attribute.text = std::string(cursor_->Slice(begin, cursor_->offset()));
  (void)depth;
  return attribute;
}

StatusOr<Attribute> AttributeParser::ParseNumberAttribute(int depth) {
  cursor_->SkipSpace();
  size_t begin = cursor_->offset();
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view token, cursor_->NumberToken("a number"));
  Attribute attribute;
  if (cursor_->TryConsume(":")) {
    PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
  } else {
    attribute.type = MakeScalar(LooksLikeFloat(token) ? ElementType::kF64 : ElementType::kS64);
  }
  const Type& type = attribute.type;
  ElementType element =
      type.kind == Type::Kind::kScalar ? type.element_type : ElementType::kInvalid;
  if (IsFloatElementType(element)) {
    StatusOr<uint64_t> bits = FloatLiteralBits(token, element);
    if (!bits.ok()) return cursor_->ErrorAt(begin, bits.status().message());
    attribute.kind = Attribute::Kind::kFloat;
    attribute.float_value = DecodeFloat(*bits, element);
    return attribute;
  }
  bool index = type.kind == Type::Kind::kOther && type.text == "index";
  if (!IsIntegerType(element) && !index) {
    return cursor_->ErrorAt(begin, "a number needs an integer or float type, not " +
                                       type.ToString());
  }
  if (LooksLikeFloat(token)) {
    return cursor_->ErrorAt(begin, std::string(token) + " is not an integer");
  }
  int bits = index ? 64 : ElementTypeBits(element);
  StatusOr<uint64_t> value = IntegerLiteralBits(token, bits);
  if (!value.ok()) return cursor_->ErrorAt(begin, value.status().message());
  attribute.kind = Attribute::Kind::kInteger;
  bool is_signed = index || IsSignedIntegerType(element);
  attribute.int_value = is_signed ? SignExtend(*value, bits) : static_cast<int64_t>(*value);
  return attribute;
}

StatusOr<Attribute> AttributeParser::ParseDenseAttribute(size_t begin, int depth) {
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("<", "'<' after dense"));
  PJRTKIT_ASSIGN_OR_RETURN(DenseLiteral literal,
                           ParseDenseLiteral(cursor_, max_depth_ - depth));
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(":", "':' and the type of a dense attribute"));
  Attribute attribute;
  PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
  if (attribute.type.kind != Type::Kind::kTensor) {  // vector<...>, tensor<4xindex>: as text.
    attribute.kind = Attribute::Kind::kDialect;
    attribute.dialect = "builtin";
    attribute.mnemonic = "dense";
    attribute.text = std::string(cursor_->Slice(begin, cursor_->offset()));
    return attribute;
  }
  attribute.kind = Attribute::Kind::kDenseElements;
  PJRTKIT_RETURN_IF_ERROR(DecodeDenseLiteral(literal, attribute.type, *cursor_, &attribute));
  return attribute;
}

StatusOr<Attribute> AttributeParser::ParseDenseArrayAttribute(int depth) {
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("<", "'<' after array"));
  Attribute attribute;
  attribute.kind = Attribute::Kind::kDenseArray;
  PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
  ElementType element = attribute.type.kind == Type::Kind::kScalar ? attribute.type.element_type
                                                                   : ElementType::kInvalid;
  bool is_float = IsFloatElementType(element);
  if (!is_float && !IsIntegerType(element)) {
    return cursor_->Error("an integer or float element type in array<...>");
  }
  if (cursor_->TryConsume(":")) {
    do {
      cursor_->SkipSpace();
      size_t at = cursor_->offset();
      std::string_view token;
      if (cursor_->TryConsumeKeyword("true")) {
        token = "true";
      } else if (cursor_->TryConsumeKeyword("false")) {
        token = "false";
      } else {
        PJRTKIT_ASSIGN_OR_RETURN(token, cursor_->NumberToken("a value in array<...>"));
      }
      if (is_float) {
        StatusOr<uint64_t> bits = FloatLiteralBits(token, element);
        if (!bits.ok()) return cursor_->ErrorAt(at, bits.status().message());
        attribute.floats.push_back(DecodeFloat(*bits, element));
        continue;
      }
      int width = ElementTypeBits(element);
      StatusOr<uint64_t> bits = IntegerLiteralBits(token, width);
      if (!bits.ok()) return cursor_->ErrorAt(at, bits.status().message());
      bool is_signed = IsSignedIntegerType(element);
      attribute.ints.push_back(is_signed ? SignExtend(*bits, width) : static_cast<int64_t>(*bits));
    } while (cursor_->TryConsume(","));
  }
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(">", "',' or '>' in array<...>"));
  return attribute;
}

StatusOr<Attribute> AttributeParser::ParseSymbolRef() {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kSymbolRef;
  bool root = true;
  do {
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("@", "'@' and a symbol name"));
    std::string name;
    if (cursor_->PeekAt(0) == '"') {
      PJRTKIT_ASSIGN_OR_RETURN(name, cursor_->StringLiteral("a symbol name"));
    } else {
      PJRTKIT_ASSIGN_OR_RETURN(std::string_view bare, cursor_->SuffixIdentifier("a symbol name"));
      name = std::string(bare);
    }
    if (root) {
      attribute.string_value = std::move(name);
    } else {
      Attribute nested;
      nested.kind = Attribute::Kind::kSymbolRef;
      nested.string_value = std::move(name);
      attribute.elements.push_back(std::move(nested));
    }
    root = false;
  } while (cursor_->TryConsume("::"));
  return attribute;
}

StatusOr<Attribute> AttributeParser::ParseOpaqueBuiltin(std::string_view keyword, size_t begin,
                                                        int depth) {
  if (keyword == "distinct") {
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("[", "'[' after distinct"));
    PJRTKIT_RETURN_IF_ERROR(cursor_->DecimalInteger("a distinct id").status());
    PJRTKIT_RETURN_IF_ERROR(cursor_->Expect("]", "']' after the distinct id"));
  }
  char open = keyword == "loc" ? '(' : '<';
  PJRTKIT_RETURN_IF_ERROR(cursor_->Expect(std::string(1, open), "'" + std::string(1, open) +
                                                                    "' after " +
                                                                    std::string(keyword)));
  PJRTKIT_RETURN_IF_ERROR(cursor_->BalancedBody(open, keyword).status());
  Attribute attribute;
  attribute.kind = Attribute::Kind::kDialect;
  attribute.dialect = "builtin";
  attribute.mnemonic = std::string(keyword);
  if ((keyword == "dense_resource" || keyword == "sparse" || keyword == "opaque") &&
      cursor_->TryConsume(":")) {
    PJRTKIT_ASSIGN_OR_RETURN(attribute.type, ParseType(depth + 1));
  }
  attribute.text = std::string(cursor_->Slice(begin, cursor_->offset()));
  return attribute;
}

}  // namespace stablehlo
}  // namespace pjrtkit
