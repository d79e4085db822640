#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {

std::string DimensionsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

Status CheckDimensions(const std::string& fn, const std::string& what, const int64_t* dims,
                       size_t num_dims) {
  for (size_t i = 0; i < num_dims; ++i) {
    if (dims[i] < 0) {
      return InvalidArgument(fn + ": " + what + "[" + std::to_string(i) + "] is " +
                             std::to_string(dims[i]) + "; dimensions must be >= 0");
    }
  }
  return OkStatus();
}

Status CheckDimensions(const std::string& fn, const std::string& what,
                       const std::vector<int64_t>& dims) {
  return CheckDimensions(fn, what, dims.data(), dims.size());
}

Status CheckShape(const std::string& fn, ElementType type, const std::vector<int64_t>& dims) {
  const int value = static_cast<int>(type);
  if (value <= 0 || value > kMaxElementType) {
    return InvalidArgument(fn + ": invalid element type " + std::to_string(value));
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensions(fn, "dims", dims));
  // The byte size must fit in 63 bits (DenseByteSize would wrap around).
  unsigned __int128 bits = static_cast<unsigned __int128>(ElementTypeBits(type));
  const unsigned __int128 limit = static_cast<unsigned __int128>(INT64_MAX) * 8;
  for (int64_t d : dims) {
    bits *= static_cast<uint64_t>(d);
    if (bits > limit) {
      return InvalidArgument(fn + ": the dimensions " + DimensionsText(dims) +
                             " make an array of more than 2^63 bytes");
    }
  }
  return OkStatus();
}

}  // namespace pjrtkit
