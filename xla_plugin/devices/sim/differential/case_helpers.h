// Shared pieces of the differential cases: the element type lists, the trial shapes and the
// builders of one-op programs.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_CASE_HELPERS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_CASE_HELPERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/diff_case.h"
#include "xla_plugin/devices/sim/differential/program_builder.h"
#include "xla_plugin/devices/sim/differential/value_generator.h"

namespace pjrtkit {
namespace sim {
namespace differential {

// s8, s16, s32, s64.
const std::vector<ElementType>& SignedTypes();
// u8, u16, u32, u64.
const std::vector<ElementType>& UnsignedTypes();
// SignedTypes then UnsignedTypes.
const std::vector<ElementType>& IntegerTypes();
// f16, bf16, f32, f64.
const std::vector<ElementType>& FloatTypes();
// The 8-bit float types (f8E5M2, f8E4M3FN, f8E4M3B11FNUZ, f8E5M2FNUZ, f8E4M3FNUZ, f8E4M3,
// f8E3M4, f8E8M0FNU).
const std::vector<ElementType>& Float8Types();
// c64, c128.
const std::vector<ElementType>& ComplexTypes();
// Concatenation of lists.
std::vector<ElementType> Types(std::initializer_list<std::vector<ElementType>> lists);
// pred, the integers, the floats and the complex types (no float8).
std::vector<ElementType> AllTypes();

// The shapes each elementwise (op, type) case runs on: 33x17 (561 elements), 1200 (more than
// one 1024-element block of the fused engine), 7, a scalar and 0x5 (no elements); when measuring
// (PJRTKIT_DIFF_MEASURE=1) also 100000.
const std::vector<std::vector<int64_t>>& ElementwiseShapes();

// A seed derived from `name` (stable: FNV-1a), so every case draws its own reproducible inputs.
uint64_t SeedOf(const std::string& name);

// "s32", "f8E4M3FN": the MLIR element type name, for case names.
std::string TypeName(ElementType type);

// The program of one elementwise op `op` on parameters of `operand_types` (all of `dims`;
// rank-0 operand types listed in `scalar_operands` are scalars) giving `result` elements, with
// `attributes` (inside "<{...}>").
std::string ElementwiseProgram(const std::string& op, const std::vector<ElementType>& operand_types,
                               ElementType result, const std::vector<int64_t>& dims,
                               const std::string& attributes = "",
                               const std::vector<bool>& scalar_operands = {});

// Whether PJRTKIT_DIFF_MEASURE=1 is set (see ExpectAgree).
bool Measuring();

// Runs `cases` as one gtest check: a failure lists the failing cases' messages; prints
// "<family>: N cases run on both, M refused as listed". With PJRTKIT_DIFF_MEASURE=1 in the
// environment, runs every kUlps and kScaled case without its limit and prints the largest
// distance seen per op and element type (how the README's tolerances were measured).
void ExpectAgree(const std::string& family, const std::vector<DiffCase>& cases);

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_CASE_HELPERS_H_
