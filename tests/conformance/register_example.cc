// Way (a) into the suite, as a plugin's own cc_test would use it: register the plugin from a
// static initializer and let gtest_main run the cases. A plugin linked into the test would
// pass its GetPjrtApi() directly; this example dlopens XLA:CPU from the test's runfiles.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "tests/conformance/conformance.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// Path of the XLA:CPU plugin relative to the runfiles root (the test's working directory).
constexpr char kXlaCpuPlugin[] = "external/venv/xla_cpu_pjrt.so";

const PJRT_Api* LoadXlaCpu() {
  void* handle = dlopen(kXlaCpuPlugin, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen(%s): %s\n", kXlaCpuPlugin, dlerror());
    std::abort();
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) std::abort();
  return get_api();
}

const bool kRegistered = [] {
  pjrt_conformance::PluginTraits traits;
  traits.platform_name = "cpu";
  traits.device_count = 2;
  traits.known_deviations = {"executable_delete_is_noop", "execute_checks_only_byte_size"};
  pjrt_conformance::RegisterPlugin(
      LoadXlaCpu(), {pjrt_conformance::NamedOption::Int("cpu_device_count", 2)}, traits);
  return true;
}();

}  // namespace
