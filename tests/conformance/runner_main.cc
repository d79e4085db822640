// Runs the PJRT C-API conformance suite against any plugin .so.
//
//   runner --plugin=path/to/plugin.so [--option=name=int:4] [--option=name=str:text] ...
//          [--expect_platform=cpu] [--expect_devices=4] [--expect_addressable_devices=4]
//          [--expect_device_kind=...] [--expect_api_minor=81] [--expect_all_api_slots]
//          [--known_deviation=NAME]... [gtest flags]
//
// Option values: int:N, str:TEXT, path:FILE (made absolute), bool:true|false, float:X, ints:1,2,3.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// Everything the command line says.
struct Flags {
  std::string plugin;                                    // --plugin
  std::vector<pjrt_conformance::NamedOption> options;  // --option (repeated)
  pjrt_conformance::PluginTraits traits;                // --expect_*
  bool check_skips = false;                              // --expect_skips was given.
  std::set<std::string> expected_skips;                  // --expect_skips=Suite.Case,...
};

constexpr char kUsage[] =
    "usage: runner --plugin=PATH.so [--option=NAME=TYPE:VALUE]... [--expect_platform=NAME]\n"
    "              [--expect_devices=N] [--expect_addressable_devices=N]\n"
    "              [--expect_device_kind=KIND] [--expect_api_minor=N] [--expect_all_api_slots]\n"
    "              [--known_deviation=NAME]... [--expect_skips=Suite.Case,...]\n"
    "  TYPE is int, str, path (a file, made absolute), bool, float or ints (comma-separated\n"
    "  int64 list).\n";

// If `arg` is "--name=value" sets *value and returns true.
bool Match(const std::string& arg, const char* name, std::string* value) {
  const std::string prefix = std::string("--") + name + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

// Parses an int flag value; exits with a message when malformed.
int ParseInt(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const long parsed = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0') {
    std::fprintf(stderr, "runner: %s needs an integer, got '%s'\n", flag.c_str(), value.c_str());
    std::exit(2);
  }
  return static_cast<int>(parsed);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    if (Match(arg, "plugin", &value)) {
      flags.plugin = value;
    } else if (Match(arg, "option", &value)) {
      pjrt_conformance::NamedOption option;
      std::string error;
      if (!pjrt_conformance::ParseNamedOption(value, &option, &error)) {
        std::fprintf(stderr, "runner: bad --option: %s\n%s", error.c_str(), kUsage);
        std::exit(2);
      }
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
      // "header": the minor version of the pjrt_c_api.h this suite was built with.
      flags.traits.api_minor_version =
          std::string(value) == "header" ? PJRT_API_MINOR : ParseInt(arg, value);
    } else if (Match(arg, "known_deviation", &value)) {
      flags.traits.known_deviations.insert(value);
    } else if (Match(arg, "expect_skips", &value)) {
      // The exact set of cases allowed to skip; any other skip (or a missing one) fails the run.
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
    } else {
      std::fprintf(stderr, "runner: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      std::exit(2);
    }
  }
  if (flags.plugin.empty()) {
    std::fprintf(stderr, "runner: --plugin is required\n%s", kUsage);
    std::exit(2);
  }
  return flags;
}

// dlopens the plugin and returns its API table; exits with a message on failure.
const PJRT_Api* LoadPlugin(const std::string& path) {
  // A bare file name would be searched on the library path; make it relative instead.
  const std::string resolved = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "runner: dlopen(%s) failed: %s\n", resolved.c_str(), dlerror());
    std::exit(1);
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) {
    std::fprintf(stderr, "runner: %s has no GetPjrtApi symbol\n", resolved.c_str());
    std::exit(1);
  }
  const PJRT_Api* api = get_api();
  if (api == nullptr) {
    std::fprintf(stderr, "runner: GetPjrtApi() returned NULL\n");
    std::exit(1);
  }
  // The handle is never closed: plugins generally do not support being unloaded.
  return api;
}

// The full names ("Suite.Case") of the cases that skipped in this run.
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

// With --expect_skips: 0 when the skipped cases are exactly the expected ones, else 1 with a
// message naming each difference.
int CheckSkips(const Flags& flags) {
  if (!flags.check_skips) return 0;
  const std::set<std::string> skipped = SkippedCases();
  int status = 0;
  for (const std::string& name : skipped) {
    if (flags.expected_skips.count(name) == 0) {
      std::fprintf(stderr, "conformance: unexpected skip: %s\n", name.c_str());
      status = 1;
    }
  }
  for (const std::string& name : flags.expected_skips) {
    if (skipped.count(name) == 0) {
      std::fprintf(stderr, "conformance: expected %s to skip, but it did not (update "
                           "--expect_skips)\n", name.c_str());
      status = 1;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // Removes the gtest flags from argv.
  const Flags flags = ParseFlags(argc, argv);
  const PJRT_Api* api = LoadPlugin(flags.plugin);
  std::printf("conformance: plugin %s, PJRT C API %d.%d\n", flags.plugin.c_str(),
              api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version);
  pjrt_conformance::RegisterPlugin(api, flags.options, flags.traits);
  const int result = RUN_ALL_TESTS();
  const int skips = CheckSkips(flags);
  return result != 0 ? result : skips;
}
