#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {

int64_t ArrayType::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t ArrayType::element_bytes() const {
  const int bits = ElementTypeBits(type);
  return bits <= 8 ? 1 : bits / 8;
}

int64_t ArrayType::byte_size() const { return num_elements() * element_bytes(); }

std::string ArrayType::ToString() const {
  std::string text = ElementTypeName(type);
  text += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

}  // namespace sim
}  // namespace pjrtkit
