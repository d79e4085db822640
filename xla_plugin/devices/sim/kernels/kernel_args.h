// The arrays a kernel reads and writes: device memory addresses with their static types.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_ARGS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_ARGS_H_

#include <vector>

#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {

// An operand: `type` describes the dense row-major bytes at `data`.
struct ArrayArg {
  const ArrayType* type = nullptr;
  const void* data = nullptr;
};

// A result: the kernel writes the dense row-major bytes of `type` at `data`. A result never
// overlaps an operand unless the kernel's header says it may.
struct ArrayResult {
  const ArrayType* type = nullptr;
  void* data = nullptr;
};

// The types of a kernel's operands and results, for its Check function.
using ArrayTypes = std::vector<const ArrayType*>;

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_KERNEL_ARGS_H_
