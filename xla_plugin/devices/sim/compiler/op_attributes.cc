#include "xla_plugin/devices/sim/compiler/op_attributes.h"

#include <cstring>

namespace pjrtkit {
namespace sim {
namespace {

Status AttributeError(const stablehlo::Operation& op, const char* name, const std::string& what) {
  return InvalidArgument(op.name + (op.location.text.empty() ? "" : " at " + op.location.text) +
                         ": attribute " + name + " " + what);
}

// Sign-extends the little-endian integer of `bytes` bytes at `data`.
int64_t ReadInteger(const char* data, size_t bytes, bool is_unsigned) {
  uint64_t value = 0;
  std::memcpy(&value, data, bytes);
  if (!is_unsigned && bytes < 8 && (value >> (8 * bytes - 1)) & 1) {
    value |= ~uint64_t{0} << (8 * bytes);
  }
  return static_cast<int64_t>(value);
}

bool IsUnsigned(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64 || type == ElementType::kPred;
}

}  // namespace

StatusOr<std::vector<int64_t>> AttributeInts(const stablehlo::Attribute& attribute) {
  using Kind = stablehlo::Attribute::Kind;
  switch (attribute.kind) {
    case Kind::kDenseArray:
      if (!attribute.floats.empty()) return InvalidArgument("holds floats, not integers");
      return attribute.ints;
    case Kind::kInteger:
      return std::vector<int64_t>{attribute.int_value};
    case Kind::kArray: {
      std::vector<int64_t> ints;
      for (const stablehlo::Attribute& element : attribute.elements) {
        if (element.kind != Kind::kInteger) return InvalidArgument("holds a non-integer");
        ints.push_back(element.int_value);
      }
      return ints;
    }
    case Kind::kDenseElements: {
      const ElementType type = attribute.type.element_type;
      const size_t bytes = stablehlo::StorageBytes(type);
      const int64_t n = attribute.type.NumElements();
      if (bytes == 0 || bytes > 8 || n < 0) return InvalidArgument("is not an integer tensor");
      const std::string data = attribute.ExpandedData();
      if (data.size() != bytes * static_cast<size_t>(n)) {
        return InvalidArgument("has the wrong number of bytes");
      }
      std::vector<int64_t> ints(n);
      for (int64_t i = 0; i < n; ++i) {
        ints[i] = ReadInteger(data.data() + i * bytes, bytes, IsUnsigned(type));
      }
      return ints;
    }
    default:
      return InvalidArgument("is not a list of integers");
  }
}

StatusOr<std::vector<int64_t>> OpInts(const stablehlo::Operation& op, const char* name,
                                      std::optional<std::vector<int64_t>> fallback) {
  const stablehlo::Attribute* attribute = op.Find(name);
  if (attribute == nullptr) {
    if (fallback.has_value()) return *fallback;
    return AttributeError(op, name, "is missing");
  }
  StatusOr<std::vector<int64_t>> ints = AttributeInts(*attribute);
  if (!ints.ok()) return AttributeError(op, name, ints.status().message());
  return ints;
}

StatusOr<int64_t> OpInt(const stablehlo::Operation& op, const char* name,
                        std::optional<int64_t> fallback) {
  const stablehlo::Attribute* attribute = op.Find(name);
  if (attribute == nullptr) {
    if (fallback.has_value()) return *fallback;
    return AttributeError(op, name, "is missing");
  }
  if (attribute->kind != stablehlo::Attribute::Kind::kInteger) {
    return AttributeError(op, name, "is not an integer");
  }
  return attribute->int_value;
}

bool OpBool(const stablehlo::Operation& op, const char* name) {
  const stablehlo::Attribute* attribute = op.Find(name);
  if (attribute == nullptr) return false;
  if (attribute->kind == stablehlo::Attribute::Kind::kBool) return attribute->bool_value;
  return attribute->kind == stablehlo::Attribute::Kind::kUnit;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> OpPadding(const stablehlo::Operation& op,
                                                             const char* name, size_t rank) {
  std::vector<std::pair<int64_t, int64_t>> padding(rank, {0, 0});
  if (op.Find(name) == nullptr) return padding;
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> ints, OpInts(op, name, std::nullopt));
  if (ints.size() != 2 * rank) {
    return AttributeError(op, name, "must hold (low, high) for each of the " +
                                        std::to_string(rank) + " dimensions");
  }
  for (size_t i = 0; i < rank; ++i) padding[i] = {ints[2 * i], ints[2 * i + 1]};
  return padding;
}

}  // namespace sim
}  // namespace pjrtkit
