// Copy, transpose, slice, concatenate and reverse (data_movement.h). Every kernel moves bytes
// through BoxCopy, so one instantiation per element size serves every element type.
#include "xla_plugin/devices/sim/kernels/data_movement.h"

#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/box_copy.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {

Status CheckCopy(const ArrayTypes& operands, const ArrayTypes& results) {
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts("copy", operands, 1, results, 1));
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType("copy", "operand", *operands[0]));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs("copy", "result", *results[0], operands[0]->type));
  if (results[0]->num_elements() != operands[0]->num_elements()) {
    return InvalidArgument("copy: result " + results[0]->ToString() + " has " +
                           std::to_string(results[0]->num_elements()) + " elements; expected " +
                           std::to_string(operands[0]->num_elements()) + " (operand " +
                           operands[0]->ToString() + ")");
  }
  return OkStatus();
}

Status RunCopy(const std::vector<ArrayArg>& operands, const std::vector<ArrayResult>& results) {
  const int64_t bytes = results[0].type->byte_size();
  if (bytes > 0 && results[0].data != operands[0].data) {
    std::memcpy(results[0].data, operands[0].data, static_cast<size_t>(bytes));
  }
  return OkStatus();
}

Status CheckTranspose(const TransposeParams& params, const ArrayTypes& operands,
                      const ArrayTypes& results) {
  const char* op = "transpose";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 1, results, 1));
  const ArrayType& operand = *operands[0];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "permutation", params.permutation, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(op, "permutation", params.permutation, rank,
                                                /*sorted=*/false));
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) dims[i] = operand.dims[params.permutation[i]];
  return CheckResultDims(op, *results[0], dims);
}

Status RunTranspose(const TransposeParams& params, const std::vector<ArrayArg>& operands,
                    const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  const ArrayType& result = *results[0].type;
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims);
  std::vector<int64_t> src_strides(result.dims.size());
  for (size_t i = 0; i < src_strides.size(); ++i) {
    src_strides[i] = operand_strides[params.permutation[i]];
  }
  BoxCopy copy(operand.element_bytes(), result.dims, src_strides, RowMajorStrides(result.dims));
  copy.Run(static_cast<const char*>(operands[0].data), static_cast<char*>(results[0].data));
  return OkStatus();
}

Status CheckSlice(const SliceParams& params, const ArrayTypes& operands,
                  const ArrayTypes& results) {
  const char* op = "slice";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 1, results, 1));
  const ArrayType& operand = *operands[0];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  const size_t rank = operand.dims.size();
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "start", params.start, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "limit", params.limit, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "strides", params.strides, rank));
  std::vector<int64_t> dims(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t start = params.start[k], limit = params.limit[k], stride = params.strides[k];
    if (start < 0 || start > limit || limit > operand.dims[k]) {
      return InvalidArgument("slice: dimension " + std::to_string(k) + " has start " +
                             std::to_string(start) + " and limit " + std::to_string(limit) +
                             "; expected 0 <= start <= limit <= " +
                             std::to_string(operand.dims[k]) + " (the operand's dimension)");
    }
    if (stride < 1) {
      return InvalidArgument("slice: strides " + DimsString(params.strides) + " has " +
                             std::to_string(stride) + "; expected strides >= 1");
    }
    dims[k] = limit == start ? 0 : (limit - start - 1) / stride + 1;
  }
  return CheckResultDims(op, *results[0], dims);
}

Status RunSlice(const SliceParams& params, const std::vector<ArrayArg>& operands,
                const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  const ArrayType& result = *results[0].type;
  if (result.num_elements() == 0) return OkStatus();
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims);
  std::vector<int64_t> src_strides(operand.dims.size());
  int64_t offset = 0;
  for (size_t k = 0; k < src_strides.size(); ++k) {
    offset += params.start[k] * operand_strides[k];
    src_strides[k] = params.strides[k] * operand_strides[k];
  }
  const int64_t bytes = operand.element_bytes();
  BoxCopy copy(bytes, result.dims, src_strides, RowMajorStrides(result.dims));
  copy.Run(static_cast<const char*>(operands[0].data) + offset * bytes,
           static_cast<char*>(results[0].data));
  return OkStatus();
}

Status CheckConcatenate(const ConcatenateParams& params, const ArrayTypes& operands,
                        const ArrayTypes& results) {
  const char* op = "concatenate";
  if (operands.empty()) {
    return InvalidArgument("concatenate: expected at least 1 operand, got 0");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, operands.size(), results, 1));
  const ArrayType& first = *operands[0];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand 0", first));
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  const int64_t dim = params.dimension;
  if (dim < 0 || dim >= rank) {
    return InvalidArgument("concatenate: dimension " + std::to_string(dim) +
                           " is out of range; expected [0, " + std::to_string(rank) +
                           ") (the operands' rank)");
  }
  std::vector<int64_t> dims = first.dims;
  for (size_t i = 1; i < operands.size(); ++i) {
    const std::string what = "operand " + std::to_string(i);
    const ArrayType& operand = *operands[i];
    PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, what, operand, first.type));
    bool same = operand.dims.size() == first.dims.size();
    for (int64_t k = 0; same && k < rank; ++k) {
      same = k == dim || operand.dims[k] == first.dims[k];
    }
    if (!same) {
      return InvalidArgument("concatenate: " + what + " has dimensions " +
                             DimsString(operand.dims) + "; expected operand 0's " +
                             DimsString(first.dims) + " except in dimension " +
                             std::to_string(dim));
    }
    if (__builtin_add_overflow(dims[dim], operand.dims[dim], &dims[dim])) {
      return InvalidArgument("concatenate: the result's dimension " + std::to_string(dim) +
                             " overflows int64");
    }
  }
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], first.type));
  return CheckResultDims(op, *results[0], dims);
}

Status RunConcatenate(const ConcatenateParams& params, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results) {
  const ArrayType& result = *results[0].type;
  const std::vector<int64_t> result_strides = RowMajorStrides(result.dims);
  const int64_t bytes = result.element_bytes();
  char* dst = static_cast<char*>(results[0].data);
  int64_t offset = 0;  // Along params.dimension.
  for (const ArrayArg& operand : operands) {
    const std::vector<int64_t>& dims = operand.type->dims;
    if (operand.type->num_elements() > 0) {
      BoxCopy copy(bytes, dims, RowMajorStrides(dims), result_strides);
      copy.Run(static_cast<const char*>(operand.data),
               dst + offset * result_strides[params.dimension] * bytes);
    }
    offset += dims[params.dimension];
  }
  return OkStatus();
}

Status CheckReverse(const ReverseParams& params, const ArrayTypes& operands,
                    const ArrayTypes& results) {
  const char* op = "reverse";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 1, results, 1));
  const ArrayType& operand = *operands[0];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(op, "dimensions", params.dimensions,
                                                static_cast<int64_t>(operand.dims.size()),
                                                /*sorted=*/false));
  return CheckResultDims(op, *results[0], operand.dims);
}

Status RunReverse(const ReverseParams& params, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  if (operand.num_elements() == 0) return OkStatus();
  std::vector<int64_t> src_strides = RowMajorStrides(operand.dims);
  int64_t offset = 0;
  for (int64_t d : params.dimensions) {
    offset += (operand.dims[d] - 1) * src_strides[d];
    src_strides[d] = -src_strides[d];
  }
  const int64_t bytes = operand.element_bytes();
  BoxCopy copy(bytes, operand.dims, src_strides, RowMajorStrides(operand.dims));
  copy.Run(static_cast<const char*>(operands[0].data) + offset * bytes,
           static_cast<char*>(results[0].data));
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
