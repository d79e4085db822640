// Which elementwise op a StableHLO op is: shared by the graph lowering and the lowering of scalar
// regions (reduce bodies, sort comparators, ...).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_ELEMENTWISE_OPS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_ELEMENTWISE_OPS_H_

#include <cstdint>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// An elementwise op and its EwStep::attr.
struct ElementwiseOp {
  EwOp op;
  int64_t attr = 0;
};

// The elementwise op `op` is (add, compare with its direction and type, convert, same-size
// bitcast_convert, ...); UNIMPLEMENTED naming the op when it is not one.
StatusOr<ElementwiseOp> ClassifyElementwise(Lowerer& lowerer, const stablehlo::Operation& op);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_ELEMENTWISE_OPS_H_
