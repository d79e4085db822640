// ValidateProgram: the checks a DeviceProgram passes before the executor runs it.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_PROGRAM_VALIDATOR_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_PROGRAM_VALIDATOR_H_

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// Checks that `program` is well formed for the executor: slot, computation and place indices in
// range; computations referring only to later ones; every slot's type supported and its bytes
// inside its place; instruction operand and result counts and types as each opcode requires,
// checked by the kernels' own Check functions; results never written into parameters; the entry
// computation's parameters and results matching the program's. INVALID_ARGUMENT naming the
// computation, the instruction index, its opcode and origin. The compiler runs it on what it built
// and the executable reader on every deserialized program, so the executor never reads or writes
// outside the memory it was given.
Status ValidateProgram(const DeviceProgram& program);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_PROGRAM_VALIDATOR_H_
