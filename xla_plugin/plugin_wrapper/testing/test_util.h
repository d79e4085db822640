// Helpers for the shared wrapper's tests (testonly): clients of the inner plugin this machine has
// (XLA:CPU, under XlaCpuPolicy), programs and buffers.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_TESTING_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_TESTING_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace xla_cpu {
namespace testing {

// Absolute path of xla_cpu_pjrt.so in the test's runfiles (a data dependency of every test that
// loads it); empty when it is not there.
std::string XlaCpuPluginPath();

// Create options for XlaCpuFactory::CreateClient: the plugin path and, when > 0, device_count.
AttributeMap ClientOptions(int64_t device_count = 0);

// A client made by XlaCpuFactory::CreateClient(ClientOptions(device_count)); adds a test failure
// and returns nullptr on error.
std::unique_ptr<Client> CreateTestClient(int64_t device_count = 0);

// Copies `values` (dense, row-major, `dims`) of `type` to `device` (or `memory` when set), the
// destination resolved as the C layer resolves it (ResolveDestinationDevice).
template <typename T>
std::unique_ptr<Buffer> Upload(Client* client, ElementType type, const std::vector<T>& values,
                               const std::vector<int64_t>& dims, Device* device,
                               Memory* memory = nullptr) {
  StatusOr<Device*> destination = ResolveDestinationDevice("Upload", device, memory);
  EXPECT_TRUE(destination.ok()) << destination.status().ToString();
  if (!destination.ok()) return nullptr;
  HostBufferArgs args;
  args.data = values.data();
  args.type = type;
  args.dims = dims;
  args.device = *destination;
  args.memory = memory;
  StatusOr<HostBufferResult> result = client->BufferFromHostBuffer(args);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return nullptr;
  EXPECT_TRUE(result->done_with_host_buffer->Await().ok());
  return std::move(result->buffer);
}

// The buffer's contents as `count` values of T (dense, row-major).
template <typename T>
std::vector<T> Download(Buffer* buffer, size_t count) {
  std::vector<T> out(count);
  StatusOr<std::shared_ptr<Event>> event =
      buffer->ToHostBuffer(out.data(), count * sizeof(T), /*host_layout=*/nullptr);
  EXPECT_TRUE(event.ok()) << event.status().ToString();
  if (!event.ok()) return {};
  Status status = (*event)->Await();
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out;
}

// The memory of `device` of `kind`, or nullptr.
Memory* MemoryOfKind(Device* device, const std::string& kind);

}  // namespace testing
}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_TESTING_TEST_UTIL_H_
