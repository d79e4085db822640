// CostModel: what one execution of a DeviceProgram costs, estimated from its instructions (what
// PJRT_Executable_GetCostAnalysis reports: JAX's Compiled.cost_analysis()).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COST_MODEL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COST_MODEL_H_

#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// Estimated work of one execution on one device. As XLA's cost analysis does, a loop body and a
// branch count once.
struct ProgramCost {
  double flops = 0;            // Arithmetic: 2*M*N*K per dot, one per elementwise op and element.
  double transcendentals = 0;  // exp, log, tanh, sin, ... per element.
  double bytes_accessed = 0;   // Operand and result bytes of every instruction.
};

// The cost of `program` (validated).
ProgramCost EstimateCost(const DeviceProgram& program);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_COST_MODEL_H_
