// Helpers for the sim device's unit tests: a client, uploads, reads.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/sim_client.h"

namespace pjrtkit {
namespace sim {
namespace testing {

// A client of `device_count` devices of `memory_mib` MiB each (null, with a test failure, when
// creation fails).
std::unique_ptr<SimClient> MakeClient(int device_count = 2, int64_t memory_mib = 64);

// BufferFromHostBuffer of `bytes` as `type` and `dims` on `device`, with `semantics` and optional
// byte strides. The result's done_with_host_buffer is in `done` when given.
StatusOr<std::unique_ptr<Buffer>> Upload(
    SimClient& client, Device* device, const void* data, ElementType type,
    const std::vector<int64_t>& dims,
    HostBufferSemantics semantics = HostBufferSemantics::kImmutableOnlyDuringCall,
    std::optional<std::vector<int64_t>> byte_strides = std::nullopt,
    std::shared_ptr<Event>* done = nullptr);

// Upload of a vector of T.
template <typename T>
StatusOr<std::unique_ptr<Buffer>> UploadVector(SimClient& client, Device* device,
                                               const std::vector<T>& values, ElementType type,
                                               const std::vector<int64_t>& dims) {
  return Upload(client, device, values.data(), type, dims);
}

// The buffer's bytes (dense row-major) through ToHostBuffer, awaited; the error otherwise.
StatusOr<std::vector<uint8_t>> ReadBytes(Buffer& buffer);

// The buffer's contents as T values.
template <typename T>
StatusOr<std::vector<T>> ReadVector(Buffer& buffer) {
  StatusOr<std::vector<uint8_t>> bytes = ReadBytes(buffer);
  if (!bytes.ok()) return bytes.status();
  std::vector<T> values(bytes->size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes->data(), values.size() * sizeof(T));
  return values;
}

// Bytes in use on `device` now.
int64_t BytesInUse(Device& device);

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TEST_UTIL_H_
