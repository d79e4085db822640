// Resolves one fused elementwise step (op, result type, operand types, attr) to the block kernel
// that runs it, checking its types; the single source of truth for what the engine supports
// (internal to the kernels folder; CheckSupported and Validate are built on it).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_REGISTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_REGISTRY_H_

#include <cstdint>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/kernels/ew_kernel.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {

// How the engine runs one non-leaf step.
struct StepKernel {
  KernelFn fn = nullptr;  // The block kernel.
  int32_t aux = 0;        // Passed as KernelArgs::aux.
  int32_t rounding = 0;   // LowRounding (ew_kernels.h) applied to the float results after fn.
};

// The number of operands of `op` (0 for leaves).
int NumOperands(EwOp op);

// Checks one step's types and attr and finds its kernel. `operand_types` holds NumOperands(op)
// types. Leaves only check their type (kernel->fn stays null). INVALID_ARGUMENT for inconsistent
// types or a malformed attr, UNIMPLEMENTED for an op the sim device does not support on those
// types; messages name the op and the types.
Status ResolveStep(EwOp op, ElementType type, const ElementType* operand_types, int64_t attr,
                   StepKernel* kernel);

// UNIMPLEMENTED naming `type` when the sim device does not support the element type at all
// (sub-byte types, token, invalid).
Status CheckElementType(ElementType type);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_REGISTRY_H_
