// Sample DevicePrograms for serialization tests and the fuzzer's seeds (testonly). Their shapes
// follow what the compiler emits, but they are not run and not checked by ValidateProgram.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SAMPLE_PROGRAMS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SAMPLE_PROGRAMS_H_

#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// f32[4] x -> x + 1: one fused instruction with a constant step.
DeviceProgram AddOneProgram();

// A counted loop: s32 i, f32[2] x -> while (i < 10) { i + 1, x * 2 } with cond and body
// computations, a captured value, parameter aliasing and donation.
DeviceProgram WhileLoopProgram();

// One instruction per InstructionParams alternative (all 22), with a value other than the
// default in every field of every struct the format stores (vectors non-empty, enums past their
// first value, negative and 64-bit-wide integers, bytes including '\0'), plus a default-constructed
// element of every vector of structs (the smallest encodings).
DeviceProgram EveryParamsProgram();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SAMPLE_PROGRAMS_H_
