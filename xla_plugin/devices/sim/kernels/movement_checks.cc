#include "xla_plugin/devices/sim/kernels/movement_checks.h"

#include <cstring>
#include <limits>

namespace pjrtkit {
namespace sim {

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::string TypeName(ElementType type) {
  const int value = static_cast<int>(type);
  if (value <= 0 || value > kMaxElementType) return "element type " + std::to_string(value);
  return ElementTypeName(type);
}

Status CheckArrayCounts(const char* op, const ArrayTypes& operands, size_t num_operands,
                        const ArrayTypes& results, size_t num_results) {
  if (operands.size() != num_operands) {
    return InvalidArgument(std::string(op) + ": expected " + std::to_string(num_operands) +
                           " operands, got " + std::to_string(operands.size()));
  }
  if (results.size() != num_results) {
    return InvalidArgument(std::string(op) + ": expected " + std::to_string(num_results) +
                           " results, got " + std::to_string(results.size()));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr) {
      return InvalidArgument(std::string(op) + ": operand " + std::to_string(i) + " has no type");
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i] == nullptr) {
      return InvalidArgument(std::string(op) + ": result " + std::to_string(i) + " has no type");
    }
  }
  return OkStatus();
}

Status CheckStorableType(const char* op, const std::string& what, const ArrayType& type) {
  const int value = static_cast<int>(type.type);
  const int bits = (value > 0 && value <= kMaxElementType) ? ElementTypeBits(type.type) : 0;
  if (bits == 0 || bits % 8 != 0) {
    return InvalidArgument(std::string(op) + ": " + what + " has element type " +
                           TypeName(type.type) +
                           "; expected a type of whole bytes (pred, s8..s64, u8..u64, f8..f64, "
                           "bf16, c64, c128): the sim device stores no sub-byte or token arrays");
  }
  // The product of the nonzero dimensions (times the element size) must fit too: strides of an
  // empty array with huge dimensions would overflow otherwise.
  int64_t bytes = bits / 8;
  for (int64_t d : type.dims) {
    if (d < 0) {
      return InvalidArgument(std::string(op) + ": " + what + " has dimensions " +
                             DimsString(type.dims) + "; expected every dimension >= 0");
    }
  }
  for (int64_t d : type.dims) {
    if (d == 0) continue;
    if (bytes > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgument(std::string(op) + ": " + what + " " + type.ToString() +
                             " has more bytes than int64 counts (counting its nonzero "
                             "dimensions)");
    }
    bytes *= d;
  }
  return OkStatus();
}

Status CheckIndexScalar(const char* op, const std::string& what, const ArrayType& type) {
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, what, type));
  if (!type.dims.empty() || !IsIntegerType(type.type)) {
    return InvalidArgument(std::string(op) + ": " + what + " is " + type.ToString() +
                           "; expected an integer scalar (s8..s64 or u8..u64, shape [])");
  }
  return OkStatus();
}

Status CheckDimensionNumbers(const char* op, const char* param, const std::vector<int64_t>& dims,
                             int64_t rank, bool sorted) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= rank) {
      return InvalidArgument(std::string(op) + ": " + param + " " + DimsString(dims) + " has " +
                             std::to_string(d) + "; expected values in [0, " +
                             std::to_string(rank) + ")");
    }
    if (seen[d]) {
      return InvalidArgument(std::string(op) + ": " + param + " " + DimsString(dims) + " repeats " +
                             std::to_string(d) + "; expected unique values");
    }
    if (sorted && i > 0 && dims[i - 1] > d) {
      return InvalidArgument(std::string(op) + ": " + param + " " + DimsString(dims) +
                             " is not sorted; expected increasing values");
    }
    seen[d] = true;
  }
  return OkStatus();
}

Status CheckElementTypeIs(const char* op, const std::string& what, const ArrayType& type,
                          ElementType expected) {
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, what, type));
  if (type.type != expected) {
    return InvalidArgument(std::string(op) + ": " + what + " has element type " +
                           TypeName(type.type) + "; expected " + TypeName(expected) +
                           " (the operand's)");
  }
  return OkStatus();
}

Status CheckResultDims(const char* op, const ArrayType& result,
                       const std::vector<int64_t>& expected) {
  if (result.dims != expected) {
    return InvalidArgument(std::string(op) + ": result has dimensions " + DimsString(result.dims) +
                           "; expected " + DimsString(expected));
  }
  return OkStatus();
}

Status CheckParamSize(const char* op, const char* param, const std::vector<int64_t>& values,
                      size_t rank) {
  if (values.size() != rank) {
    return InvalidArgument(std::string(op) + ": " + param + " " + DimsString(values) + " has " +
                           std::to_string(values.size()) + " values; expected " +
                           std::to_string(rank) + " (the operand's rank)");
  }
  return OkStatus();
}

bool IsSignedIntegerType(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsignedIntegerType(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

bool IsIntegerType(ElementType type) {
  return IsSignedIntegerType(type) || IsUnsignedIntegerType(type);
}

namespace {

template <typename T>
int64_t ToIndex(const void* data) {
  T value;
  std::memcpy(&value, data, sizeof(T));
  if (std::numeric_limits<T>::is_signed) return static_cast<int64_t>(value);
  const uint64_t u = static_cast<uint64_t>(value);
  return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(u);
}

template <typename T>
void ToIndices(const void* data, int64_t count, int64_t* out) {
  const char* bytes = static_cast<const char*>(data);
  for (int64_t i = 0; i < count; ++i) out[i] = ToIndex<T>(bytes + i * sizeof(T));
}

}  // namespace

int64_t ReadIndex(ElementType type, const void* data) {
  switch (type) {
    case ElementType::kS8:
      return ToIndex<int8_t>(data);
    case ElementType::kS16:
      return ToIndex<int16_t>(data);
    case ElementType::kS32:
      return ToIndex<int32_t>(data);
    case ElementType::kS64:
      return ToIndex<int64_t>(data);
    case ElementType::kU8:
      return ToIndex<uint8_t>(data);
    case ElementType::kU16:
      return ToIndex<uint16_t>(data);
    case ElementType::kU32:
      return ToIndex<uint32_t>(data);
    case ElementType::kU64:
      return ToIndex<uint64_t>(data);
    default:
      return 0;
  }
}

void ReadIndices(ElementType type, const void* data, int64_t count, int64_t* out) {
  switch (type) {
    case ElementType::kS8:
      return ToIndices<int8_t>(data, count, out);
    case ElementType::kS16:
      return ToIndices<int16_t>(data, count, out);
    case ElementType::kS32:
      return ToIndices<int32_t>(data, count, out);
    case ElementType::kS64:
      return ToIndices<int64_t>(data, count, out);
    case ElementType::kU8:
      return ToIndices<uint8_t>(data, count, out);
    case ElementType::kU16:
      return ToIndices<uint16_t>(data, count, out);
    case ElementType::kU32:
      return ToIndices<uint32_t>(data, count, out);
    case ElementType::kU64:
      return ToIndices<uint64_t>(data, count, out);
    default:
      for (int64_t i = 0; i < count; ++i) out[i] = 0;
  }
}

}  // namespace sim
}  // namespace pjrtkit
