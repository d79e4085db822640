#include "xla_plugin/devices/sim/sim_test_util.h"

#include <utility>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace testing {

std::unique_ptr<SimClient> MakeClient(int device_count, int64_t memory_mib) {
  StatusOr<SimOptions> options =
      SimOptions::Parse({{"device_count", int64_t{device_count}}, {"memory_mib", memory_mib}});
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  if (!options.ok()) return nullptr;
  StatusOr<std::unique_ptr<SimClient>> client = SimClient::Create(*options);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

StatusOr<std::unique_ptr<Buffer>> Upload(SimClient& client, Device* device, const void* data,
                                         ElementType type, const std::vector<int64_t>& dims,
                                         HostBufferSemantics semantics,
                                         std::optional<std::vector<int64_t>> byte_strides,
                                         std::shared_ptr<Event>* done) {
  HostBufferArgs args;
  args.data = data;
  args.type = type;
  args.dims = dims;
  args.byte_strides = std::move(byte_strides);
  args.semantics = semantics;
  args.device = device;
  StatusOr<HostBufferResult> result = client.BufferFromHostBuffer(args);
  if (!result.ok()) return result.status();
  if (done != nullptr) *done = result->done_with_host_buffer;
  return std::move(result->buffer);
}

StatusOr<std::vector<uint8_t>> ReadBytes(Buffer& buffer) {
  StatusOr<size_t> size = buffer.HostBufferSize(nullptr);
  if (!size.ok()) return size.status();
  std::vector<uint8_t> bytes(*size);
  StatusOr<std::shared_ptr<Event>> event = buffer.ToHostBuffer(bytes.data(), bytes.size(), nullptr);
  if (!event.ok()) return event.status();
  Status status = (*event)->Await();
  if (!status.ok()) return status;
  return bytes;
}

int64_t BytesInUse(Device& device) {
  StatusOr<MemoryStats> stats = device.GetMemoryStats();
  EXPECT_TRUE(stats.ok());
  return stats.ok() ? stats->bytes_in_use : -1;
}

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit
