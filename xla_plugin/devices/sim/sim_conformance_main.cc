// The PJRT C-API conformance suite (//tests/conformance) on the sim device, linked in:
// CreatePjrtApi<sim::SimFactory>() is registered with the suite, as the runner registers a plugin
// .so it dlopens. Takes the runner's flags except --plugin:
//   --option=NAME=TYPE:VALUE  --expect_platform=NAME  --expect_devices=N
//   --expect_addressable_devices=N  --expect_device_kind=KIND  --expect_api_minor=N|header
//   --expect_all_api_slots  --known_deviation=NAME  --expect_skips=Suite.Case,...
// --stablehlo_library=PATH: torch-mlir's library, exported as $PJRTKIT_STABLEHLO_LIBRARY (absolute)
// before the plugin is used, as the Python side exports it (the plugin attributes' StableHLO
// versions come from the process's library);
// and --report_memory: after each case, a "[ MEMORY ]" line with the highest bytes in use on any
// device of the suite's shared client during the case (cases that make clients of their own are
// not counted).
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance.h"
#include "tests/conformance/plugin.h"
#include "tests/conformance/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/devices/sim/sim_factory.h"

namespace {

// Everything the command line says.
struct Flags {
  std::vector<pjrt_conformance::NamedOption> options;  // --option (repeated).
  pjrt_conformance::PluginTraits traits;               // --expect_*, --known_deviation.
  bool check_skips = false;                            // --expect_skips was given.
  std::set<std::string> expected_skips;                // Its cases.
  bool report_memory = false;                          // --report_memory.
};

// If `arg` is "--name=value" sets *value and returns true.
bool Match(const std::string& arg, const char* name, std::string* value) {
  const std::string prefix = std::string("--") + name + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

// Exits with `message` (a malformed command line).
[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "sim_conformance_test: %s\n", message.c_str());
  std::exit(2);
}

int ParseInt(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const long parsed = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0') Usage(flag + " needs an integer");
  return static_cast<int>(parsed);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    if (Match(arg, "option", &value)) {
      pjrt_conformance::NamedOption option;
      std::string error;
      if (!pjrt_conformance::ParseNamedOption(value, &option, &error)) Usage(error);
      flags.options.push_back(option);
    } else if (Match(arg, "expect_platform", &value)) {
      flags.traits.platform_name = value;
    } else if (Match(arg, "expect_devices", &value)) {
      flags.traits.device_count = ParseInt(arg, value);
    } else if (Match(arg, "expect_addressable_devices", &value)) {
      flags.traits.addressable_device_count = ParseInt(arg, value);
    } else if (Match(arg, "expect_device_kind", &value)) {
      flags.traits.device_kind = value;
    } else if (Match(arg, "expect_api_minor", &value)) {
      flags.traits.api_minor_version = value == "header" ? PJRT_API_MINOR : ParseInt(arg, value);
    } else if (Match(arg, "known_deviation", &value)) {
      flags.traits.known_deviations.insert(value);
    } else if (Match(arg, "expect_skips", &value)) {
      flags.check_skips = true;
      size_t start = 0;
      while (start < value.size()) {
        const size_t comma = value.find(',', start);
        const size_t end = comma == std::string::npos ? value.size() : comma;
        if (end > start) flags.expected_skips.insert(value.substr(start, end - start));
        start = end + 1;
      }
    } else if (arg == "--expect_all_api_slots") {
      flags.traits.require_all_api_slots = true;
    } else if (Match(arg, "stablehlo_library", &value)) {
      char resolved[PATH_MAX];
      if (realpath(value.c_str(), resolved) == nullptr) Usage(value + " does not exist");
      setenv("PJRTKIT_STABLEHLO_LIBRARY", resolved, 1);
    } else if (arg == "--report_memory") {
      flags.report_memory = true;
    } else {
      Usage("unknown argument '" + arg + "'");
    }
  }
  return flags;
}

// The devices of the suite's shared client (none when it cannot be made).
std::vector<PJRT_Device*> SharedDevices(const PJRT_Api* api) {
  PJRT_Client* client = nullptr;
  if (!pjrt_conformance::EnsureInitialized().ok()) return {};
  if (!pjrt_conformance::SharedClient(&client).ok() || client == nullptr) return {};
  PJRT_ARGS(PJRT_Client_AddressableDevices_Args, args);
  args.client = client;
  if (!pjrt_conformance::TakeError(api, api->PJRT_Client_AddressableDevices(&args)).ok()) return {};
  return std::vector<PJRT_Device*>(args.addressable_devices,
                                   args.addressable_devices + args.num_addressable_devices);
}

// Prints, after each case, the highest bytes in use on one device of the shared client during
// the case (peaks are cleared before it starts).
class MemoryReporter : public ::testing::EmptyTestEventListener {
 public:
  explicit MemoryReporter(const PJRT_Api* api) : api_(api) {}

  void OnTestStart(const ::testing::TestInfo&) override {
    for (PJRT_Device* device : SharedDevices(api_)) {
      PJRT_ARGS(PJRT_Device_ClearMemoryStats_Args, args);
      args.device = device;
      pjrt_conformance::TakeError(api_, api_->PJRT_Device_ClearMemoryStats(&args));
    }
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    int64_t peak = 0;
    int64_t total = 0;
    for (PJRT_Device* device : SharedDevices(api_)) {
      PJRT_ARGS(PJRT_Device_MemoryStats_Args, args);
      args.device = device;
      if (!pjrt_conformance::TakeError(api_, api_->PJRT_Device_MemoryStats(&args)).ok()) continue;
      if (args.peak_bytes_in_use_is_set && args.peak_bytes_in_use > peak) {
        peak = args.peak_bytes_in_use;
      }
      if (args.peak_bytes_in_use_is_set) total += args.peak_bytes_in_use;
    }
    std::printf("[ MEMORY ] %s.%s: peak %lld bytes on one device, %lld on all\n",
                info.test_suite_name(), info.name(), static_cast<long long>(peak),
                static_cast<long long>(total));
  }

 private:
  const PJRT_Api* api_;  // The sim device's API.
};

// The cases that skipped in this run ("Suite.Case").
std::set<std::string> SkippedCases() {
  std::set<std::string> skipped;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(j);
      if (info.should_run() && info.result()->Skipped()) {
        skipped.insert(std::string(info.test_suite_name()) + "." + info.name());
      }
    }
  }
  return skipped;
}

// With --expect_skips: 1 (and a message per difference) unless exactly the expected cases
// skipped; cases filtered out by --gtest_filter are not expected to skip.
int CheckSkips(const Flags& flags) {
  if (!flags.check_skips) return 0;
  const std::set<std::string> skipped = SkippedCases();
  std::set<std::string> ran;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(j);
      if (info.should_run()) ran.insert(std::string(info.test_suite_name()) + "." + info.name());
    }
  }
  int status = 0;
  for (const std::string& name : skipped) {
    if (flags.expected_skips.count(name) == 0) {
      std::fprintf(stderr, "conformance: unexpected skip: %s\n", name.c_str());
      status = 1;
    }
  }
  for (const std::string& name : flags.expected_skips) {
    if (ran.count(name) > 0 && skipped.count(name) == 0) {
      std::fprintf(stderr, "conformance: expected %s to skip, but it did not\n", name.c_str());
      status = 1;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // Removes the gtest flags from argv.
  const Flags flags = ParseFlags(argc, argv);
  const PJRT_Api* api = pjrtkit::CreatePjrtApi<pjrtkit::sim::SimFactory>();
  std::printf("conformance: the sim device, PJRT C API %d.%d\n",
              api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version);
  pjrt_conformance::RegisterPlugin(api, flags.options, flags.traits);
  if (flags.report_memory) {
    ::testing::UnitTest::GetInstance()->listeners().Append(new MemoryReporter(api));
  }
  const int result = RUN_ALL_TESTS();
  const int skips = CheckSkips(flags);
  return result != 0 ? result : skips;
}
