// main() of the PJRT C-API conformance suite (//tests/conformance) for a device made of the sim
// device's parts and linked in (sim_conformance_test.cc: CreatePjrtApi<sim::SimFactory>();
// testing/runtime_only_conformance_test.cc), registered with the suite as the runner registers a
// plugin .so it dlopens. Takes the runner's flags except --plugin (tests/conformance/command_line.h),
// and --stablehlo_library=PATH: torch-mlir's library, exported as $PJRTKIT_STABLEHLO_LIBRARY
// (absolute) before the plugin is used, as the Python side exports it (the plugin attributes'
// StableHLO versions come from the process's library).
#include "xla_plugin/devices/sim/sim_conformance_main.h"

#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/command_line.h"

namespace pjrtkit {
namespace sim {

int RunConformance(const PJRT_Api* api, const char* program, int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // Removes the gtest flags from argv.
  const std::string usage = std::string("usage: ") + program +
                            " [--stablehlo_library=PATH]\n" +
                            pjrt_conformance::CommonFlagsUsage();
  const pjrt_conformance::CommandLine command_line = pjrt_conformance::ParseCommandLine(
      argc, argv, program, usage, [](const std::string& arg, std::string* error) {
        const std::string prefix = "--stablehlo_library=";
        if (arg.rfind(prefix, 0) != 0) return false;
        char resolved[PATH_MAX];
        const std::string path = arg.substr(prefix.size());
        if (realpath(path.c_str(), resolved) == nullptr) {
          *error = arg + ": " + path + " does not exist";
        } else {
          setenv("PJRTKIT_STABLEHLO_LIBRARY", resolved, 1);
        }
        return true;
      });
  std::printf("conformance: %s, PJRT C API %d.%d\n", program, api->pjrt_api_version.major_version,
              api->pjrt_api_version.minor_version);
  return pjrt_conformance::RunSuite(api, command_line);
}

}  // namespace sim
}  // namespace pjrtkit
