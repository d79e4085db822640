#include "tests/conformance/command_line.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/plugin.h"
#include "tests/conformance/status.h"

namespace pjrt_conformance {
namespace {

constexpr char kCommonUsage[] =
    "  [--option=NAME=TYPE:VALUE]... [--expect_platform=NAME] [--expect_devices=N]\n"
    "  [--expect_addressable_devices=N] [--expect_device_kind=KIND]\n"
    "  [--expect_api_minor=N|header] [--expect_all_api_slots] [--known_deviation=NAME]...\n"
    "  [--expect_skips=Suite.Case,...] [--no_compiler] [--no_sub_byte_types]\n"
    "  [--device_memory_bytes=N] [--report_memory]\n"
    "  TYPE is int, str, path (a file, made absolute), bool, float or ints (comma-separated\n"
    "  int64 list).\n";

// If `arg` is "--name=value" sets *value and returns true.
bool Match(const std::string& arg, const char* name, std::string* value) {
  const std::string prefix = std::string("--") + name + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

// Parses a decimal integer; false when `value` is not one.
bool ParseInt64(const std::string& value, int64_t* out) {
  if (value.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = parsed;
  return true;
}

// Consumes one common flag: true when `arg` is one (a malformed value sets *error).
bool ParseCommonFlag(const std::string& arg, CommandLine* line, std::string* error) {
  std::string value;
  int64_t number = 0;
  // Parses `value` into *out; a malformed value, or one outside int's range unless `wide`, sets
  // *error naming the flag.
  auto integer = [&](int64_t* out, bool wide = false) {
    if (!ParseInt64(value, out)) {
      *error = arg + ": needs an integer";
    } else if (!wide && (*out > INT_MAX || *out < INT_MIN)) {
      *error = arg + ": out of range (at most " + std::to_string(INT_MAX) + ")";
    }
  };
  if (Match(arg, "option", &value)) {
    NamedOption option;
    if (ParseNamedOption(value, &option, error)) {
      line->options.push_back(option);
    } else {
      *error = arg + ": " + *error;
    }
    return true;
  }
  if (Match(arg, "expect_platform", &value)) {
    line->traits.platform_name = value;
    return true;
  }
  if (Match(arg, "expect_device_kind", &value)) {
    line->traits.device_kind = value;
    return true;
  }
  if (Match(arg, "expect_devices", &value)) {
    integer(&number);
    line->traits.device_count = static_cast<int>(number);
    return true;
  }
  if (Match(arg, "expect_addressable_devices", &value)) {
    integer(&number);
    line->traits.addressable_device_count = static_cast<int>(number);
    return true;
  }
  if (Match(arg, "expect_api_minor", &value)) {
    // "header": the minor version of the pjrt_c_api.h this suite was built with.
    if (value == "header") {
      line->traits.api_minor_version = PJRT_API_MINOR;
    } else {
      integer(&number);
      line->traits.api_minor_version = static_cast<int>(number);
    }
    return true;
  }
  if (Match(arg, "known_deviation", &value)) {
    line->traits.known_deviations.insert(value);
    return true;
  }
  if (Match(arg, "expect_skips", &value)) {
    line->check_skips = true;
    size_t start = 0;
    while (start < value.size()) {
      const size_t comma = value.find(',', start);
      const size_t end = comma == std::string::npos ? value.size() : comma;
      if (end > start) line->expected_skips.insert(value.substr(start, end - start));
      start = end + 1;
    }
    return true;
  }
  if (Match(arg, "device_memory_bytes", &value)) {
    integer(&number, /*wide=*/true);
    if (error->empty() && number < kMinDeviceMemoryBytes) {
      *error = arg + ": the suite needs at least " + std::to_string(kMinDeviceMemoryBytes) +
               " bytes of device memory per device";
    }
    line->traits.device_memory_bytes = number;
    return true;
  }
  if (arg == "--expect_all_api_slots") {
    line->traits.require_all_api_slots = true;
  } else if (arg == "--no_compiler") {
    line->traits.compiler = false;
  } else if (arg == "--no_sub_byte_types") {
    line->traits.sub_byte_types = false;
  } else if (arg == "--report_memory") {
    line->report_memory = true;
  } else {
    return false;
  }
  return true;
}

// The devices of the suite's shared client (none when it cannot be made).
std::vector<PJRT_Device*> SharedDevices(const PJRT_Api* api) {
  PJRT_Client* client = nullptr;
  if (!EnsureInitialized().ok()) return {};
  if (!SharedClient(&client).ok() || client == nullptr) return {};
  PJRT_ARGS(PJRT_Client_AddressableDevices_Args, args);
  args.client = client;
  if (!TakeError(api, api->PJRT_Client_AddressableDevices(&args)).ok()) return {};
  return std::vector<PJRT_Device*>(args.addressable_devices,
                                   args.addressable_devices + args.num_addressable_devices);
}

// Prints, after each case, the highest bytes in use on one device of the shared client during
// the case, and on all of them together (peaks are cleared before it starts; cases that make
// clients of their own are not counted). Devices without memory statistics count nothing.
class MemoryReporter : public ::testing::EmptyTestEventListener {
 public:
  explicit MemoryReporter(const PJRT_Api* api) : api_(api) {}

  void OnTestStart(const ::testing::TestInfo&) override {
    for (PJRT_Device* device : SharedDevices(api_)) {
      PJRT_ARGS(PJRT_Device_ClearMemoryStats_Args, args);
      args.device = device;
      TakeError(api_, api_->PJRT_Device_ClearMemoryStats(&args));
    }
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    int64_t peak = 0;
    int64_t total = 0;
    for (PJRT_Device* device : SharedDevices(api_)) {
      PJRT_ARGS(PJRT_Device_MemoryStats_Args, args);
      args.device = device;
      if (!TakeError(api_, api_->PJRT_Device_MemoryStats(&args)).ok()) continue;
      if (!args.peak_bytes_in_use_is_set) continue;
      if (args.peak_bytes_in_use > peak) peak = args.peak_bytes_in_use;
      total += args.peak_bytes_in_use;
    }
    std::printf("[ MEMORY ] %s.%s: peak %lld bytes on one device, %lld on all\n",
                info.test_suite_name(), info.name(), static_cast<long long>(peak),
                static_cast<long long>(total));
  }

 private:
  const PJRT_Api* api_;  // The plugin's API.
};

// Which cases Cases() names.
enum class Which { kRegistered, kRan, kSkipped };

// The full names ("Suite.Case") of the registered cases, of those that ran (not filtered out by
// --gtest_filter), or of those that skipped.
std::set<std::string> Cases(Which which) {
  std::set<std::string> names;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(j);
      if (which != Which::kRegistered && !info.should_run()) continue;
      if (which == Which::kSkipped && !info.result()->Skipped()) continue;
      names.insert(std::string(info.test_suite_name()) + "." + info.name());
    }
  }
  return names;
}

// With --expect_skips: 0 when exactly the expected cases skipped, else 1 with a message naming
// each difference. Cases filtered out by --gtest_filter are not expected to skip; a listed name
// that is no case at all (a typo, a renamed case) is an error.
int CheckSkips(const CommandLine& line) {
  if (!line.check_skips) return 0;
  const std::set<std::string> skipped = Cases(Which::kSkipped);
  const std::set<std::string> ran = Cases(Which::kRan);
  const std::set<std::string> registered = Cases(Which::kRegistered);
  int status = 0;
  for (const std::string& name : line.expected_skips) {
    if (registered.count(name) == 0) {
      std::fprintf(stderr, "conformance: --expect_skips names %s, which is no case of the suite\n",
                   name.c_str());
      status = 1;
    }
  }
  for (const std::string& name : skipped) {
    if (line.expected_skips.count(name) == 0) {
      std::fprintf(stderr, "conformance: unexpected skip: %s\n", name.c_str());
      status = 1;
    }
  }
  for (const std::string& name : line.expected_skips) {
    if (ran.count(name) > 0 && skipped.count(name) == 0) {
      std::fprintf(stderr, "conformance: expected %s to skip, but it did not (update "
                           "--expect_skips)\n", name.c_str());
      status = 1;
    }
  }
  return status;
}

}  // namespace

const char* CommonFlagsUsage() { return kCommonUsage; }

CommandLine ParseCommandLine(int argc, char** argv, const std::string& program,
                             const std::string& usage, const ExtraFlag& extra) {
  CommandLine line;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string error;
    const bool known = ParseCommonFlag(arg, &line, &error) || (extra && extra(arg, &error));
    if (!known) error = "unknown argument '" + arg + "'";
    if (!error.empty()) {
      std::fprintf(stderr, "%s: %s\n%s", program.c_str(), error.c_str(), usage.c_str());
      std::exit(2);
    }
  }
  return line;
}

int RunSuite(const PJRT_Api* api, const CommandLine& command_line) {
  RegisterPlugin(api, command_line.options, command_line.traits);
  if (command_line.report_memory) {
    ::testing::UnitTest::GetInstance()->listeners().Append(new MemoryReporter(api));
  }
  const int result = RUN_ALL_TESTS();
  const int skips = CheckSkips(command_line);
  return result != 0 ? 1 : skips;
}

}  // namespace pjrt_conformance
