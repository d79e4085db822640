// Helpers shared by dot_general and convolution: the compute type of a contraction, staging
// operands into it (convert + transpose into host scratch), and strided copies.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {
namespace contraction_util {

// The type a contraction multiplies and accumulates in, chosen from the result's element type:
// f32 for f32/f16/bf16/f8 results (f64 when an operand is f64), f64, c64 (c128 when an operand is
// f64 or c128), c128, wrapping unsigned 32/64-bit integers for integer results of up to 32 / 64
// bits, and OR-of-AND bytes for pred.
enum class Accumulator : uint8_t { kF32, kF64, kC64, kC128, kU32, kU64, kPred };

// The element type an accumulator's values are stored as (u32 -> kU32, pred -> kPred, ...).
ElementType AccumulatorElementType(Accumulator accumulator);

// Bytes of one accumulator value.
int64_t AccumulatorBytes(Accumulator accumulator);

// Whether the device's contraction kernels take `type`: pred, s8..s64, u8..u64, f16, bf16, f32,
// f64, c64, c128 and the one-byte float8 types. Sub-byte types, token and invalid are refused.
bool IsSupportedType(ElementType type);

// Picks the accumulator for `op` ("dot_general", "convolution") with operands of `lhs` and `rhs`
// and a `result` element type; INVALID_ARGUMENT naming the types when the combination has none
// (e.g. complex operands with a real result, a float operand with an integer result, a pred
// result from non-pred operands) or a type is not supported.
Status ChooseAccumulator(const char* op, ElementType lhs, ElementType rhs, ElementType result,
                         Accumulator* accumulator);

// INVALID_ARGUMENT unless every dimension of `type` is >= 0 and its element count times its
// element size stays below 2^62 bytes ("<op> <what> ..." in the message).
Status CheckArrayType(const char* op, const char* what, const ArrayType* type);

// Converts `n` elements of `from` at `src` to the accumulator's storage at `dst`: integers are
// sign- or zero-extended as their type says, floats and complex converted as XLA's convert does.
// `dst` must not overlap `src`.
void ConvertToAccumulator(ElementType from, const void* src, Accumulator accumulator, void* dst,
                          int64_t n);

// Converts `n` accumulator values at `src` to elements of `to` at `dst` (integers keep their low
// bits: the wrapping result; pred stays 0/1).
void ConvertFromAccumulator(Accumulator accumulator, const void* src, ElementType to, void* dst,
                            int64_t n);

// Copies the array of `dims` whose element at index i is at src + sum(i[d] * src_strides[d])
// elements (of `element_bytes` bytes each: 1, 2, 4, 8 or 16) densely, row-major, to dst.
void StridedCopy(int64_t element_bytes, const void* src, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& src_strides, void* dst);

// Merges dimensions `group` (in that order) of an array with `dims` and element `strides` into one
// strided index: true with its size and stride when walking the group's index space in row-major
// order advances by a constant stride (dims of size 1 are skipped; an empty group is size 1).
bool MergeDimensions(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& group, int64_t* size, int64_t* stride);

// Product of dims[d] for d in `group`.
int64_t GroupSize(const std::vector<int64_t>& dims, const std::vector<int64_t>& group);

// "[1,2,3]" for messages.
std::string VectorToString(const std::vector<int64_t>& values);

}  // namespace contraction_util
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_UTIL_H_
