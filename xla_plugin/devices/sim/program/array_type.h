// ArrayType: the static element type and shape of one value of a sim program.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_ARRAY_TYPE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_ARRAY_TYPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// An array type: element type and static dimensions. The device stores every array dense and
// row-major, one element per ElementTypeBits()/8 bytes (pred: one byte).
struct ArrayType {
  ElementType type = ElementType::kInvalid;  // Element type.
  std::vector<int64_t> dims;                 // Dimensions; empty for a scalar.

  // Number of elements (1 for a scalar).
  int64_t num_elements() const;
  // Bytes of the dense array.
  int64_t byte_size() const;
  // Bytes of one element.
  int64_t element_bytes() const;
  // "f32[2,3]", "pred[]".
  std::string ToString() const;

  bool operator==(const ArrayType& other) const {
    return type == other.type && dims == other.dims;
  }
  bool operator!=(const ArrayType& other) const { return !(*this == other); }
};

// Row-major element strides of `dims` (the last dimension has stride 1).
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_ARRAY_TYPE_H_
