// The sim device's compile path: program bytes -> StableHLO module (xla_plugin/stablehlo) ->
// DeviceProgram (compiler/) -> SimExecutable loaded on the client's devices.
#include "xla_plugin/devices/sim/sim_compile.h"

#include <memory>
#include <utility>

#include "xla_plugin/devices/sim/compiler/compiler.h"
#include "xla_plugin/devices/sim/sim_client.h"
#include "xla_plugin/devices/sim/sim_compile_options.h"
#include "xla_plugin/devices/sim/sim_executable.h"
#include "xla_plugin/devices/sim/sim_loaded_executable.h"
#include "xla_plugin/devices/sim/sim_stablehlo.h"
#include "xla_plugin/stablehlo/program_reader.h"

namespace pjrtkit {
namespace sim {

namespace {

// Reads and compiles `program` with `library` for `device_count` devices.
StatusOr<std::shared_ptr<SimExecutable>> CompileExecutable(
    std::shared_ptr<const stablehlo::StablehloLibrary> library, const Program& program,
    const std::string& compile_options, int device_count) {
  PJRTKIT_ASSIGN_OR_RETURN(SimCompileOptions options,
                           SimCompileOptions::Read(compile_options, device_count));
  stablehlo::ProgramReader reader(std::move(library));
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::Module module, reader.Read(program));
  CompileFacts facts;
  facts.num_replicas = options.num_replicas;
  facts.num_partitions = options.num_partitions;
  CompileReport report;
  PJRTKIT_ASSIGN_OR_RETURN(DeviceProgram compiled, CompileModule(module, facts, &report));
  return std::make_shared<SimExecutable>(
      std::make_shared<const DeviceProgram>(std::move(compiled)), std::move(options),
      compile_options, program.code, report);
}

}  // namespace

StatusOr<std::unique_ptr<LoadedExecutable>> CompileAndLoad(SimClient& client,
                                                           const Program& program,
                                                           const std::string& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<const stablehlo::StablehloLibrary> library,
                           client.stablehlo_library());
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<SimExecutable> executable,
      CompileExecutable(std::move(library), program, compile_options,
                        static_cast<int>(client.sim_devices().size())));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<SimLoadedExecutable> loaded,
                           SimLoadedExecutable::Load(client, std::move(executable)));
  return std::unique_ptr<LoadedExecutable>(std::move(loaded));
}

Status NoCompiler(const std::string& fn, const std::string& backend) {
  return Unimplemented(fn + ": the " + backend + " device has no compiler yet (it was made "
                       "without one), so it cannot turn programs into executables");
}

StatusOr<std::shared_ptr<Executable>> CompileForTopology(const Program& program,
                                                         const std::string& compile_options,
                                                         int device_count,
                                                         const std::string& library_path) {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<const stablehlo::StablehloLibrary> library,
                           LoadStablehloLibrary(library_path));
  PJRTKIT_ASSIGN_OR_RETURN(
      std::shared_ptr<SimExecutable> executable,
      CompileExecutable(std::move(library), program, compile_options, device_count));
  return std::shared_ptr<Executable>(std::move(executable));
}

StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
    SimClient& client, const std::string& serialized,
    const std::optional<std::string>& compile_options) {
  const int device_count = static_cast<int>(client.sim_devices().size());
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<SimExecutable> executable,
                           SimExecutable::Deserialize(serialized, device_count));
  if (compile_options.has_value()) {
    PJRTKIT_ASSIGN_OR_RETURN(SimCompileOptions options,
                             SimCompileOptions::Read(*compile_options, device_count));
    if (options.num_replicas != executable->program().num_replicas ||
        options.num_partitions != executable->program().num_partitions) {
      return InvalidArgument("the compile options given to load the executable ask for " +
                             std::to_string(options.num_replicas) + " replicas x " +
                             std::to_string(options.num_partitions) +
                             " partitions; it was compiled for " +
                             std::to_string(executable->program().num_replicas) + " x " +
                             std::to_string(executable->program().num_partitions));
    }
    executable = std::make_shared<SimExecutable>(executable->shared_program(), std::move(options),
                                                 *compile_options, executable->stablehlo(),
                                                 executable->report());
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<SimLoadedExecutable> loaded,
                           SimLoadedExecutable::Load(client, std::move(executable)));
  return std::unique_ptr<LoadedExecutable>(std::move(loaded));
}

AttributeMap StablehloAttributesForProcess() {
  StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> library =
      ProcessStablehloLibrary();
  if (!library.ok()) {
    // Without the library nothing compiles (the error says why at the first compile); JAX still
    // reads versions before that: report the oldest StableHLO a reader must accept.
    AttributeMap attributes;
    attributes["stablehlo_current_version"] = std::vector<int64_t>{0, 9, 0};
    attributes["stablehlo_minimum_version"] = std::vector<int64_t>{0, 9, 0};
    return attributes;
  }
  return StablehloVersionAttributes(**library);
}

}  // namespace sim
}  // namespace pjrtkit
