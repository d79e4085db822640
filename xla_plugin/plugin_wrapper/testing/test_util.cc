#include "xla_plugin/plugin_wrapper/testing/test_util.h"

#include <limits.h>
#include <stdlib.h>

#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

namespace pjrtkit {
namespace xla_cpu {
namespace testing {

std::string XlaCpuPluginPath() {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  // Bazel 4 lays external runfiles out both under the main workspace and beside it.
  for (const char* relative : {"/pjrtkit/external/venv/xla_cpu_pjrt.so", "/venv/xla_cpu_pjrt.so"}) {
    std::string candidate = std::string(srcdir) + relative;
    char resolved[PATH_MAX];
    if (realpath(candidate.c_str(), resolved) != nullptr) return resolved;
  }
  return "";
}

AttributeMap ClientOptions(int64_t device_count) {
  AttributeMap options;
  options[kPluginPathOption] = XlaCpuPluginPath();
  if (device_count > 0) options[kDeviceCountOption] = device_count;
  return options;
}

std::unique_ptr<Client> CreateTestClient(int64_t device_count) {
  StatusOr<std::unique_ptr<Client>> client =
      XlaCpuFactory::CreateClient(ClientOptions(device_count));
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  if (!client.ok()) return nullptr;
  return std::move(client).value();
}

Memory* MemoryOfKind(Device* device, const std::string& kind) {
  for (Memory* memory : device->memories()) {
    if (memory->kind() == kind) return memory;
  }
  return nullptr;
}

}  // namespace testing
}  // namespace xla_cpu
}  // namespace pjrtkit
