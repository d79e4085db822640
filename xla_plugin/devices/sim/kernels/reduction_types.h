// Element-type facts the reduction kernels and ScalarComputation checks use: which types the sim
// kernels handle, their sizes, and StableHLO's is_promotable.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_TYPES_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {

// The kinds of element types for is_promotable.
enum class TypeClass : uint8_t { kBool, kSignedInt, kUnsignedInt, kFloat, kComplex, kOther };

// The class of `type`.
TypeClass ClassOfType(ElementType type);

// Whether the sim kernels handle `type`: pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128
// and the one-byte float8 types (not the sub-byte types, token or invalid values).
bool KernelSupportsType(ElementType type);

// Bytes of one element of a supported `type`.
int64_t TypeBytes(ElementType type);

// StableHLO's is_promotable(from, to): the same class and at least as many bits (for floats, the
// same type or a wider one among f16/bf16 -> f32 -> f64 and float8 -> anything wider).
bool IsPromotable(ElementType from, ElementType to);

// "op: what (f32[2,3])": the prefix of messages about one array.
std::string Describe(const char* op, const std::string& what, const ArrayType* type);

// Checks an array type of a kernel: not null, a supported element type, dimensions >= 0 and an
// element count whose bytes fit in int64. `what` names it ("operand 0").
Status CheckArrayType(const char* op, const std::string& what, const ArrayType* type);

// "[1, 2, 3]".
std::string DimsToString(const std::vector<int64_t>& dims);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_TYPES_H_
