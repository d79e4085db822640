// The conformance suite's command line, shared by every main that runs it: the dlopen runner
// (runner_main.cc) and a device's own cc_test that links its PJRT_Api in.
//
//   --option=NAME=TYPE:VALUE          a PJRT_Client_Create option (repeatable)
//   --expect_platform=NAME  --expect_devices=N  --expect_addressable_devices=N
//   --expect_device_kind=KIND  --expect_api_minor=N|header  --expect_all_api_slots
//   --known_deviation=NAME            a named departure the run accepts (repeatable)
//   --expect_skips=Suite.Case,...     exactly these cases may skip
//   --no_compiler                     the device declares no compiler yet
//   --no_sub_byte_types               the device declares no 4- and 2-bit element types
//   --device_memory_bytes=N           the device memory the suite may use per device
//   --report_memory                   a "[ MEMORY ]" line per case (peak bytes in use)
#ifndef PJRTKIT_TESTS_CONFORMANCE_COMMAND_LINE_H_
#define PJRTKIT_TESTS_CONFORMANCE_COMMAND_LINE_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tests/conformance/conformance.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {

// Everything the common flags say.
struct CommandLine {
  std::vector<NamedOption> options;    // --option (repeated).
  PluginTraits traits;                 // --expect_*, --known_deviation, capabilities.
  bool check_skips = false;            // --expect_skips was given.
  std::set<std::string> expected_skips;  // Its cases.
  bool report_memory = false;          // --report_memory.
};

// One flag a main takes besides the common ones: returns true when it consumed `arg`; sets
// `*error` (and returns true) when `arg` is its flag but malformed.
using ExtraFlag = std::function<bool(const std::string& arg, std::string* error)>;

// Parses argv (gtest's own flags already removed by InitGoogleTest). Flags the common set does
// not know go to `extra` (may be empty); an unknown or malformed flag prints `program`: the
// problem and `usage` to stderr and exits with status 2.
CommandLine ParseCommandLine(int argc, char** argv, const std::string& program,
                             const std::string& usage, const ExtraFlag& extra = {});

// The usage lines of the common flags.
const char* CommonFlagsUsage();

// Registers `api` with the command line's options and traits, runs every case, and returns 0
// when all passed and (with --expect_skips) exactly the expected cases skipped, else 1.
int RunSuite(const PJRT_Api* api, const CommandLine& command_line);

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_COMMAND_LINE_H_
