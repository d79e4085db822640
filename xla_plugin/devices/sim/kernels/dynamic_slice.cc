// Dynamic slice and dynamic update slice (data_movement.h): start indices of any integer type,
// clamped so the window fits, as the StableHLO spec says.
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/box_copy.h"
#include "xla_plugin/devices/sim/kernels/data_movement.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {
namespace {

// Checks the scalar start indices operands[first...] (one per dimension of `rank`).
Status CheckStartIndices(const char* op, const ArrayTypes& operands, size_t first, size_t rank) {
  for (size_t k = 0; k < rank; ++k) {
    PJRTKIT_RETURN_IF_ERROR(CheckIndexScalar(
        op, "start index " + std::to_string(k) + " (operand " + std::to_string(first + k) + ")",
        *operands[first + k]));
  }
  return OkStatus();
}

// The element offset of the window of `window` dims in an array of `dims`, its start indices
// (operands[first...]) clamped to [0, dims - window].
int64_t WindowOffset(const std::vector<ArrayArg>& operands, size_t first,
                     const std::vector<int64_t>& dims, const std::vector<int64_t>& window) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t offset = 0;
  for (size_t k = 0; k < dims.size(); ++k) {
    const ArrayArg& index = operands[first + k];
    offset += ClampIndex(ReadIndex(index.type->type, index.data), dims[k] - window[k]) * strides[k];
  }
  return offset;
}

}  // namespace

Status CheckDynamicSlice(const DynamicSliceParams& params, const ArrayTypes& operands,
                         const ArrayTypes& results) {
  const char* op = "dynamic_slice";
  if (operands.empty() || operands[0] == nullptr) {
    return InvalidArgument("dynamic_slice: expected an operand and its start indices, got " +
                           std::to_string(operands.size()) + " operands");
  }
  const ArrayType& operand = *operands[0];
  const size_t rank = operand.dims.size();
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 1 + rank, results, 1));
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  PJRTKIT_RETURN_IF_ERROR(CheckStartIndices(op, operands, 1, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "sizes", params.sizes, rank));
  for (size_t k = 0; k < rank; ++k) {
    if (params.sizes[k] < 0 || params.sizes[k] > operand.dims[k]) {
      return InvalidArgument("dynamic_slice: sizes " + DimsString(params.sizes) +
                             " do not fit operand " + operand.ToString() +
                             "; expected 0 <= sizes <= the operand's dimensions");
    }
  }
  return CheckResultDims(op, *results[0], params.sizes);
}

Status RunDynamicSlice(const DynamicSliceParams& params, const std::vector<ArrayArg>& operands,
                       const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  const ArrayType& result = *results[0].type;
  if (result.num_elements() == 0) return OkStatus();
  const int64_t offset = WindowOffset(operands, 1, operand.dims, params.sizes);
  const int64_t bytes = operand.element_bytes();
  BoxCopy copy(bytes, result.dims, RowMajorStrides(operand.dims), RowMajorStrides(result.dims));
  copy.Run(static_cast<const char*>(operands[0].data) + offset * bytes,
           static_cast<char*>(results[0].data));
  return OkStatus();
}

Status CheckDynamicUpdateSlice(const DynamicUpdateSliceParams& params, const ArrayTypes& operands,
                               const ArrayTypes& results) {
  (void)params;
  const char* op = "dynamic_update_slice";
  if (operands.empty() || operands[0] == nullptr) {
    return InvalidArgument(
        "dynamic_update_slice: expected an operand, an update and start indices, got " +
        std::to_string(operands.size()) + " operands");
  }
  const ArrayType& operand = *operands[0];
  const size_t rank = operand.dims.size();
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 2 + rank, results, 1));
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  const ArrayType& update = *operands[1];
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "update", update, operand.type));
  bool fits = update.dims.size() == rank;
  for (size_t k = 0; fits && k < rank; ++k) fits = update.dims[k] <= operand.dims[k];
  if (!fits) {
    return InvalidArgument("dynamic_update_slice: update " + update.ToString() +
                           " does not fit operand " + operand.ToString() +
                           "; expected the operand's rank and dimensions <= the operand's");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckStartIndices(op, operands, 2, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  return CheckResultDims(op, *results[0], operand.dims);
}

Status RunDynamicUpdateSlice(const DynamicUpdateSliceParams& params,
                             const std::vector<ArrayArg>& operands,
                             const std::vector<ArrayResult>& results) {
  (void)params;
  const ArrayType& operand = *operands[0].type;
  const ArrayType& update = *operands[1].type;
  char* dst = static_cast<char*>(results[0].data);
  const int64_t bytes = operand.element_bytes();
  if (dst != operands[0].data && operand.num_elements() > 0) {
    std::memmove(dst, operands[0].data, static_cast<size_t>(operand.byte_size()));
  }
  if (update.num_elements() == 0) return OkStatus();
  const int64_t offset = WindowOffset(operands, 2, operand.dims, update.dims);
  BoxCopy copy(bytes, update.dims, RowMajorStrides(update.dims), RowMajorStrides(operand.dims));
  copy.Run(static_cast<const char*>(operands[1].data), dst + offset * bytes);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
