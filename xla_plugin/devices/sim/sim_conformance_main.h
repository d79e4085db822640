// The conformance suite's main for devices linked in from the sim device's parts: the sim
// device itself (sim_conformance_test.cc) and its test devices (testing/).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CONFORMANCE_MAIN_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CONFORMANCE_MAIN_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace sim {

// Runs //tests/conformance against `api` with the command line (gtest flags, the suite's common
// flags of tests/conformance/command_line.h, and --stablehlo_library=PATH); `program` names the
// binary in messages. Returns main's exit status.
int RunConformance(const PJRT_Api* api, const char* program, int argc, char** argv);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_CONFORMANCE_MAIN_H_
