// The sim device's compiler, as the client layer calls it. SimClient::Compile and
// SimClient::DeserializeAndLoad delegate to these functions and SimFactory reports the StableHLO
// versions of StablehloAttributesForProcess. They are defined by the target
// //xla_plugin/devices/sim:sim_compile (sim_compile.cc: the StableHLO library reads the program,
// compiler/ builds a DeviceProgram, executor/ runs it).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_H_

#include <memory>
#include <optional>
#include <string>

#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

class SimClient;

// Compiles `program` (format "mlir": StableHLO bytecode, a portable artifact or text) with
// `compile_options` (a serialized xla.CompileOptionsProto) for `client`'s devices and loads it.
StatusOr<std::unique_ptr<LoadedExecutable>> CompileAndLoad(SimClient& client,
                                                           const Program& program,
                                                           const std::string& compile_options);

// Loads bytes made by the executable's Serialize() onto `client`'s devices; `compile_options`,
// when set, replace the serialized ones.
StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
    SimClient& client, const std::string& serialized,
    const std::optional<std::string>& compile_options);

// Compiles `program` ahead of time for a topology of `device_count` sim devices, reading it with
// the StableHLO library at `library_path` ("": the process's). The executable's Serialize() bytes
// load on a client of as many devices (DeserializeAndLoad).
StatusOr<std::shared_ptr<Executable>> CompileForTopology(const Program& program,
                                                         const std::string& compile_options,
                                                         int device_count,
                                                         const std::string& library_path);

// UNIMPLEMENTED for `fn` on a device made without a compiler (SimOptions::WithoutCompiler), naming
// the device by `backend`.
Status NoCompiler(const std::string& fn, const std::string& backend);

// The plugin attributes stablehlo_current_version and stablehlo_minimum_version (int64 triples)
// this process's StableHLO reader accepts: what JAX reads before it serializes a program.
AttributeMap StablehloAttributesForProcess();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_COMPILE_H_
