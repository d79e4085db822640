#include "xla_plugin/stablehlo/ir.h"

#include <limits>

namespace pjrtkit {
namespace stablehlo {
namespace {

// ElementType <-> MLIR spelling, one row per type MLIR can name.
struct ElementTypeRow {
  ElementType type;
  const char* name;
};

constexpr ElementTypeRow kElementTypes[] = {
    {ElementType::kPred, "i1"},
    {ElementType::kS2, "i2"},
    {ElementType::kS4, "i4"},
    {ElementType::kS8, "i8"},
    {ElementType::kS16, "i16"},
    {ElementType::kS32, "i32"},
    {ElementType::kS64, "i64"},
    {ElementType::kU1, "ui1"},
    {ElementType::kU2, "ui2"},
    {ElementType::kU4, "ui4"},
    {ElementType::kU8, "ui8"},
    {ElementType::kU16, "ui16"},
    {ElementType::kU32, "ui32"},
    {ElementType::kU64, "ui64"},
    {ElementType::kF16, "f16"},
    {ElementType::kBF16, "bf16"},
    {ElementType::kF32, "f32"},
    {ElementType::kF64, "f64"},
    {ElementType::kC64, "complex<f32>"},
    {ElementType::kC128, "complex<f64>"},
    {ElementType::kF8E5M2, "f8E5M2"},
    {ElementType::kF8E4M3FN, "f8E4M3FN"},
    {ElementType::kF8E4M3B11FNUZ, "f8E4M3B11FNUZ"},
    {ElementType::kF8E5M2FNUZ, "f8E5M2FNUZ"},
    {ElementType::kF8E4M3FNUZ, "f8E4M3FNUZ"},
    {ElementType::kF8E4M3, "f8E4M3"},
    {ElementType::kF8E3M4, "f8E3M4"},
    {ElementType::kF8E8M0FNU, "f8E8M0FNU"},
    {ElementType::kF4E2M1FN, "f4E2M1FN"},
    {ElementType::kF6E2M3FN, "f6E2M3FN"},
    {ElementType::kF6E3M2FN, "f6E3M2FN"},
};

void AppendTypeList(const std::vector<Type>& types, bool parens, std::string* out) {
  if (parens) out->push_back('(');
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out->append(", ");
    out->append(types[i].ToString());
  }
  if (parens) out->push_back(')');
}

}  // namespace

std::string Type::ToString() const {
  std::string out;
  switch (kind) {
    case Kind::kTensor:
      out = "tensor<";
      for (int64_t d : dims) out.append(d == kDynamicDim ? "?" : std::to_string(d)).push_back('x');
      out.append(MlirElementTypeName(element_type));
      if (!encoding.empty()) out.append(", ").append(encoding);
      out.push_back('>');
      return out;
    case Kind::kScalar:
      return MlirElementTypeName(element_type);
    case Kind::kToken:
      return "!stablehlo.token";
    case Kind::kTuple:
      out = "tuple<";
      AppendTypeList(elements, false, &out);
      out.push_back('>');
      return out;
    case Kind::kFunction:
      AppendTypeList(elements, true, &out);
      out.append(" -> ");
      AppendTypeList(results, results.size() != 1 || results[0].kind == Kind::kFunction, &out);
      return out;
    case Kind::kOther:
      return text;
  }
  return text;
}

bool Type::operator==(const Type& other) const {
  return kind == other.kind && element_type == other.element_type && dims == other.dims &&
         encoding == other.encoding && elements == other.elements && results == other.results &&
         text == other.text;
}

int64_t Type::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string Attribute::ExpandedData() const {
  if (!is_splat) return data;
  int64_t n = type.NumElements();
  std::string out;
  if (n <= 0) return out;
  out.reserve(static_cast<size_t>(n) * data.size());
  for (int64_t i = 0; i < n; ++i) out.append(data);
  return out;
}

const Attribute* Attribute::Find(std::string_view name) const {
  return FindAttribute(entries, name);
}

const Attribute* FindAttribute(const AttributeList& list, std::string_view name) {
  for (const NamedAttribute& entry : list) {
    if (entry.name == name) return &entry.value;
  }
  return nullptr;
}

const Attribute* Operation::Find(std::string_view name) const {
  return FindAttribute(attributes, name);
}

const Function* Module::FindFunction(std::string_view name) const {
  for (const Function& function : functions) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

size_t StorageBytes(ElementType type) {
  switch (type) {
    case ElementType::kInvalid:
    case ElementType::kToken:
      return 0;
    case ElementType::kC64:
      return 8;
    case ElementType::kC128:
      return 16;
    default:
      break;
  }
  int bits = ElementTypeBits(type);
  return bits <= 8 ? 1 : static_cast<size_t>(bits / 8);
}

const char* MlirElementTypeName(ElementType type) {
  for (const ElementTypeRow& row : kElementTypes) {
    if (row.type == type) return row.name;
  }
  return "";
}

ElementType ElementTypeFromMlirName(std::string_view name) {
  for (const ElementTypeRow& row : kElementTypes) {
    if (name == row.name) return row.type;
  }
  // Signed integers (si8 ... si64) are the signless ones' storage.
  if (name.size() > 2 && name.substr(0, 2) == "si") {
    std::string signless = "i" + std::string(name.substr(2));
    if (signless != "i1") return ElementTypeFromMlirName(signless);
  }
  return ElementType::kInvalid;
}

}  // namespace stablehlo
}  // namespace pjrtkit
