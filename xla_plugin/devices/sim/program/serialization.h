// The sim device's serialized executable: a DeviceProgram as bytes and back, for
// PJRT_Executable_Serialize, JAX's persistent compilation cache and jax.export round trips.
//
// Layout (all integers little-endian; serialization.cc documents the payload and the version
// policy):
//   offset  size  field
//        0    12  magic "PJRTKIT-SIM\0"
//       12     4  format version (kProgramFormatVersion)
//       16     8  payload length in bytes
//       24     8  FNV-1a-64 checksum of the payload
//       32     -  payload: the DeviceProgram's fields in declaration order (varints, zigzag
//                 varints, length-prefixed strings and vectors)
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SERIALIZATION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SERIALIZATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// The first 12 bytes of every serialized program (the last one is '\0').
inline constexpr std::string_view kProgramMagic{"PJRTKIT-SIM\0", 12};
// The format version this build writes and the only one it reads.
inline constexpr uint32_t kProgramFormatVersion = 3;
// Bytes before the payload: magic, version, payload length, checksum.
inline constexpr size_t kProgramHeaderBytes = 32;

// The bytes of `program` (deterministic: equal programs give equal bytes). Never fails; what the
// program means is not checked here (see DeserializeProgram).
std::string SerializeProgram(const DeviceProgram& program);

// Reads bytes SerializeProgram made. INVALID_ARGUMENT with a message for anything else: another
// magic ("not a serialized sim executable"), another format version (naming both), a checksum
// mismatch ("corrupted"), truncation, trailing bytes, counts or sizes that do not fit the bytes
// left, enum values out of range, an out-of-range params alternative, non-canonical varints.
// Checks only that the bytes decode into a DeviceProgram, not that the program is valid: run
// ValidateProgram (executor/program_validator.h) on the result before executing it.
StatusOr<DeviceProgram> DeserializeProgram(std::string_view bytes);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_SERIALIZATION_H_
