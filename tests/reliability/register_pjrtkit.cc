// Registers pjrtkit's plugin from the test's runfiles with the conformance harness
// (tests/conformance/conformance.h): 2 devices on the XLA:CPU plugin from the runfiles. Linked
// into the reliability cc_tests, which then use ClientTestBase and its helpers.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>

#include "tests/conformance/conformance.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {
namespace {

// Runfiles paths (the test's working directory is the runfiles root).
constexpr char kPjrtkitPlugin[] = "xla_plugin/pjrtkit_plugin.so";
constexpr char kXlaCpuPlugin[] = "external/venv/xla_cpu_pjrt.so";

// Registers pjrtkit's plugin (2 devices on the XLA:CPU plugin from the runfiles).
const bool kRegistered = [] {
  void* handle = dlopen(kPjrtkitPlugin, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen(%s): %s\n", kPjrtkitPlugin, dlerror());
    std::abort();
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) std::abort();
  char resolved[PATH_MAX];
  if (realpath(kXlaCpuPlugin, resolved) == nullptr) {
    std::fprintf(stderr, "cannot find %s\n", kXlaCpuPlugin);
    std::abort();
  }
  PluginTraits traits;
  traits.platform_name = "pjrtkit";
  traits.device_count = 2;
  RegisterPlugin(get_api(),
                 {NamedOption::Str("xla_cpu_plugin_path", resolved),
                  NamedOption::Int("device_count", 2)},
                 traits);
  return true;
}();

}  // namespace
}  // namespace pjrt_conformance
