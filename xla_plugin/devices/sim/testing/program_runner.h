// ProgramRunner (tests only): compiles a StableHLO program with the sim compiler and runs it with
// the sim executor on host memory, without a client; and runs the same program on the StableHLO
// reference interpreter, the oracle of the differential tests.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_PROGRAM_RUNNER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_PROGRAM_RUNNER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/compiler.h"
#include "xla_plugin/devices/sim/program/device_program.h"
#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace sim {
namespace testing {

using stablehlo::HostTensor;

// torch-mlir's library from the test's runfiles (@venv//:stablehlo_library), loaded once; null
// when missing.
std::shared_ptr<const stablehlo::StablehloLibrary> TestLibrary();

// Compiles `program` (MLIR text or bytes) for `facts`.
StatusOr<DeviceProgram> CompileText(std::string_view program, const CompileFacts& facts = {},
                                    CompileReport* report = nullptr);

// Runs a compiled program: `inputs[d]` are device d's arguments (one list per device of the
// program, each on its own thread for collectives). Returns each device's results.
StatusOr<std::vector<std::vector<HostTensor>>> RunCompiled(
    const DeviceProgram& program, const std::vector<std::vector<HostTensor>>& inputs);

// CompileText then RunCompiled on one device.
StatusOr<std::vector<HostTensor>> RunOnSim(std::string_view program,
                                           const std::vector<HostTensor>& inputs);

// The reference interpreter's results.
StatusOr<std::vector<HostTensor>> RunOnInterpreter(std::string_view program,
                                                   const std::vector<HostTensor>& inputs);

// A HostTensor of `type` and `dims` holding `values` converted to the element type (float types
// through float/double; integer types through int64).
HostTensor Tensor(ElementType type, std::vector<int64_t> dims, const std::vector<double>& values);
// The values of a HostTensor as doubles (complex: real parts).
std::vector<double> Values(const HostTensor& tensor);

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_TESTING_PROGRAM_RUNNER_H_
