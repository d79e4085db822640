// Reading integer attributes of StableHLO ops for lowering (dense arrays, dense elements,
// integers), with errors naming the op, its location and the attribute.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_OP_ATTRIBUTES_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_OP_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// The integers of `attribute`: array<i64: ...>, dense<...> : tensor<Nxi64> (any integer width;
// row-major for 2-D), [1, 2] of integers, or one integer.
StatusOr<std::vector<int64_t>> AttributeInts(const stablehlo::Attribute& attribute);

// `op`'s integer-list attribute `name`; `fallback` when absent (nullopt: required).
StatusOr<std::vector<int64_t>> OpInts(const stablehlo::Operation& op, const char* name,
                                      std::optional<std::vector<int64_t>> fallback);

// `op`'s integer attribute `name`; `fallback` when absent (nullopt: required).
StatusOr<int64_t> OpInt(const stablehlo::Operation& op, const char* name,
                        std::optional<int64_t> fallback);

// `op`'s boolean attribute `name` (a bool, or a unit attribute meaning true); false when absent.
bool OpBool(const stablehlo::Operation& op, const char* name);

// `op`'s padding attribute `name` (an N x 2 dense i64): (low, high) per dimension; `rank` pairs
// of (0, 0) when absent.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> OpPadding(const stablehlo::Operation& op,
                                                             const char* name, size_t rank);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_OP_ATTRIBUTES_H_
