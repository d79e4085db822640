// Pad (data_movement.h): edge padding (negative: cropping) and interior padding in one kernel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/box_copy.h"
#include "xla_plugin/devices/sim/kernels/data_movement.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {
namespace {

// Fills `n` elements of `bytes` bytes at dst with the element at `value`: one copy, then memcpy
// of the filled prefix doubling each time.
void FillElements(char* dst, const char* value, int64_t bytes, int64_t n) {
  if (n <= 0) return;
  std::memcpy(dst, value, static_cast<size_t>(bytes));
  int64_t filled = 1;
  while (filled < n) {
    const int64_t chunk = std::min(filled, n - filled);
    std::memcpy(dst + filled * bytes, dst, static_cast<size_t>(chunk * bytes));
    filled += chunk;
  }
}

// The operand indices [first, first + count) of one dimension that land inside the result:
// result index = low + i * (interior + 1).
struct PadRange {
  int64_t first = 0;         // First operand index inside.
  int64_t count = 0;         // Operand indices inside.
  int64_t result_first = 0;  // Its result index.
};

PadRange OperandRange(int64_t operand_dim, int64_t result_dim, int64_t low, int64_t interior) {
  const __int128 step = static_cast<__int128>(interior) + 1;
  // First i with low + i * step >= 0, last with low + i * step <= result_dim - 1.
  __int128 first = 0;
  if (low < 0) first = (-static_cast<__int128>(low) + step - 1) / step;
  const __int128 top = static_cast<__int128>(result_dim) - 1 - low;
  if (top < 0) return PadRange{};
  const __int128 end = std::min<__int128>(operand_dim, top / step + 1);
  if (end <= first) return PadRange{};
  return PadRange{static_cast<int64_t>(first), static_cast<int64_t>(end - first),
                  static_cast<int64_t>(low + first * step)};
}

}  // namespace

Status CheckPad(const PadParams& params, const ArrayTypes& operands, const ArrayTypes& results) {
  const char* op = "pad";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 2, results, 1));
  const ArrayType& operand = *operands[0];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "padding value", *operands[1], operand.type));
  if (!operands[1]->dims.empty()) {
    return InvalidArgument("pad: padding value is " + operands[1]->ToString() +
                           "; expected a scalar");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  const size_t rank = operand.dims.size();
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "low", params.low, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "high", params.high, rank));
  PJRTKIT_RETURN_IF_ERROR(CheckParamSize(op, "interior", params.interior, rank));
  std::vector<int64_t> dims(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (params.interior[k] < 0) {
      return InvalidArgument("pad: interior " + DimsString(params.interior) + " has " +
                             std::to_string(params.interior[k]) + "; expected interior >= 0");
    }
    const __int128 d = operand.dims[k];
    const __int128 size = d + params.low[k] + params.high[k] +
                          (d > 0 ? (d - 1) * static_cast<__int128>(params.interior[k]) : 0);
    if (size < 0 || size > static_cast<__int128>(INT64_MAX)) {
      return InvalidArgument("pad: dimension " + std::to_string(k) + " of operand " +
                             operand.ToString() + " with low " + std::to_string(params.low[k]) +
                             ", high " + std::to_string(params.high[k]) + " and interior " +
                             std::to_string(params.interior[k]) +
                             " has no valid size; expected a size in [0, 2^63)");
    }
    dims[k] = static_cast<int64_t>(size);
  }
  return CheckResultDims(op, *results[0], dims);
}

Status RunPad(const PadParams& params, const std::vector<ArrayArg>& operands,
              const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  const ArrayType& result = *results[0].type;
  const int64_t bytes = operand.element_bytes();
  char* dst = static_cast<char*>(results[0].data);
  FillElements(dst, static_cast<const char*>(operands[1].data), bytes, result.num_elements());
  const size_t rank = operand.dims.size();
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims);
  const std::vector<int64_t> result_strides = RowMajorStrides(result.dims);
  std::vector<int64_t> box(rank), dst_strides(rank);
  int64_t src_offset = 0, dst_offset = 0;
  for (size_t k = 0; k < rank; ++k) {
    const PadRange range =
        OperandRange(operand.dims[k], result.dims[k], params.low[k], params.interior[k]);
    if (range.count == 0) return OkStatus();
    box[k] = range.count;
    src_offset += range.first * operand_strides[k];
    dst_offset += range.result_first * result_strides[k];
    // A single index needs no stride (and interior may be huge then).
    dst_strides[k] = range.count == 1 ? 0 : (params.interior[k] + 1) * result_strides[k];
  }
  BoxCopy copy(bytes, box, operand_strides, dst_strides);
  copy.Run(static_cast<const char*>(operands[0].data) + src_offset * bytes,
           dst + dst_offset * bytes);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
