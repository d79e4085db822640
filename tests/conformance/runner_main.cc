// Runs the PJRT C-API conformance suite against any plugin .so.
//
//   runner --plugin=path/to/plugin.so [common flags of command_line.h] [gtest flags]
//
// Option values: int:N, str:TEXT, path:FILE (made absolute), bool:true|false, float:X, ints:1,2,3.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/command_line.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // Removes the gtest flags from argv.
  const std::string usage =
      std::string("usage: runner --plugin=PATH.so\n") + pjrt_conformance::CommonFlagsUsage();
  std::string plugin;
  const pjrt_conformance::CommandLine command_line = pjrt_conformance::ParseCommandLine(
      argc, argv, "runner", usage, [&plugin](const std::string& arg, std::string*) {
        if (arg.rfind("--plugin=", 0) != 0) return false;
        plugin = arg.substr(9);
        return true;
      });
  if (plugin.empty()) {
    std::fprintf(stderr, "runner: --plugin is required\n%s", usage.c_str());
    return 2;
  }
  const PJRT_Api* api = LoadPlugin(plugin);
  std::printf("conformance: plugin %s, PJRT C API %d.%d\n", plugin.c_str(),
              api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version);
  return pjrt_conformance::RunSuite(api, command_line);
}
