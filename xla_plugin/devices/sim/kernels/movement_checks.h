// Shared checks and small helpers of the data movement and indexing kernels (internal to them).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_CHECKS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"

namespace pjrtkit {
namespace sim {

// "[2,3]" ("[]" when empty).
std::string DimsString(const std::vector<int64_t>& dims);

// The name of `type` for messages ("f32"; "element type 99" for a value pjrtkit does not know).
std::string TypeName(ElementType type);

// Checks that there are `num_operands` operands and `num_results` results, none null.
Status CheckArrayCounts(const char* op, const ArrayTypes& operands, size_t num_operands,
                        const ArrayTypes& results, size_t num_results);

// Checks that `type` is an array this device stores: a known element type of a whole number of
// bytes (sub-byte types, token and invalid are refused), dimensions >= 0, and a byte size that
// fits in int64 even counting only its nonzero dimensions (so every stride and offset of the
// array fits). `what` names the array in the message ("operand 0", "result").
Status CheckStorableType(const char* op, const std::string& what, const ArrayType& type);

// Checks that `type` is a storable integer scalar (s8..s64, u8..u64): a start index.
Status CheckIndexScalar(const char* op, const std::string& what, const ArrayType& type);

// Checks that `dims` (named `param`) holds values in [0, rank), each at most once, and, when
// `sorted`, in increasing order.
Status CheckDimensionNumbers(const char* op, const char* param, const std::vector<int64_t>& dims,
                             int64_t rank, bool sorted);

// Checks that `type` is storable and has element type `expected` (the operand's).
Status CheckElementTypeIs(const char* op, const std::string& what, const ArrayType& type,
                          ElementType expected);

// Checks that the result's dimensions are `expected` (computed from the operands and params).
Status CheckResultDims(const char* op, const ArrayType& result,
                       const std::vector<int64_t>& expected);

// Checks that a per-dimension param (named `param`) has `rank` values.
Status CheckParamSize(const char* op, const char* param, const std::vector<int64_t>& values,
                      size_t rank);

// Element type classes.
bool IsSignedIntegerType(ElementType type);
bool IsUnsignedIntegerType(ElementType type);  // u8..u64 (not pred).
bool IsIntegerType(ElementType type);          // Signed or unsigned, not pred.

// Reads the integer element of `type` (IsIntegerType) at `data` as int64; unsigned values above
// INT64_MAX read as INT64_MAX (every clamp to an array bound then gives the same result as in the
// index's own type).
int64_t ReadIndex(ElementType type, const void* data);

// Converts `count` integer elements of `type` at `data` to int64 (as ReadIndex does).
void ReadIndices(ElementType type, const void* data, int64_t count, int64_t* out);

// clamp(value, 0, high) for high >= 0.
inline int64_t ClampIndex(int64_t value, int64_t high) {
  return value < 0 ? 0 : (value > high ? high : value);
}

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_CHECKS_H_
