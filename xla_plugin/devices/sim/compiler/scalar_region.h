// Regions on scalars (reduce and scatter bodies, collective reductions, select functions, sort
// comparators) -> ScalarComputation / Comparator.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SCALAR_REGION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SCALAR_REGION_H_

#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/program/op_params.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// Lowers `region` of `op`, whose block arguments and results are scalars and whose ops are
// elementwise (or constants, scalar reshapes and broadcasts), into a ScalarComputation, with the
// combiner it is when it is one binary op of its two arguments. Values defined outside the region
// are allowed when they are constants. UNIMPLEMENTED naming the op otherwise.
StatusOr<ScalarComputation> LowerScalarRegion(Lowerer& lowerer, const stablehlo::Operation& op,
                                              const stablehlo::Region& region);

// A sort comparator: the body, and, when it compares one operand's elements after applying the
// same elementwise function to both (JAX canonicalizes NaNs and signed zeros this way), that
// function and the comparison.
struct LoweredComparator {
  Comparator comparator;  // keys filled only when the key is an operand as it is.
  // When the comparator compares f(operand k) for an elementwise f: k, f's steps (a FusedElementwise
  // with one input, operand k's element type), and the comparison to apply to f's results.
  bool keyed_by_function = false;
  int32_t key_operand = 0;
  FusedElementwise key_function;
  SortKey key;  // `operand` unused when keyed_by_function.
};

// Lowers a sort comparator region (2n scalar arguments lhs0, rhs0, ... -> one pred).
StatusOr<LoweredComparator> LowerComparator(Lowerer& lowerer, const stablehlo::Operation& op,
                                            const stablehlo::Region& region);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_SCALAR_REGION_H_
