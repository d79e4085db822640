// FakeTransferManager: the fake device's asynchronous host-to-device transfer. Each buffer's
// bytes live in host memory shared with the buffer handed out, so chunks may arrive before or
// after RetrieveBuffer; a buffer becomes ready at its last chunk or fails with SetBufferError.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TRANSFER_MANAGER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TRANSFER_MANAGER_H_

// C++ standard library.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace testing {

class FakeDevice;
class FakeMemory;

// Buffers of `shapes` in `memory` of `device`, filled chunk by chunk.
class FakeTransferManager : public AsyncHostToDeviceTransferManager {
 public:
  // Buffers of `shapes` (laid out as `layouts`, when given) in `memory` of `device`.
  FakeTransferManager(FakeDevice* device, FakeMemory* memory,
                      const std::vector<BufferShape>& shapes,
                      const std::vector<std::optional<MemoryLayout>>& layouts);

  // The metadata given to AddMetadata so far (test hook).
  AttributeMap metadata() const;

  // AsyncHostToDeviceTransferManager:
  size_t buffer_count() const override { return slots_.size(); }
  StatusOr<size_t> buffer_size(int index) const override;
  Device* device() const override;
  StatusOr<std::shared_ptr<Event>> TransferData(int index, const void* data, int64_t offset,
                                                int64_t size, bool is_last) override;
  StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int index) override;
  Status SetBufferError(int index, const Status& error) override;
  Status AddMetadata(const AttributeMap& metadata) override;

 private:
  // One buffer.
  struct Slot {
    BufferShape shape;                             // Type and dimensions.
    std::optional<MemoryLayout> layout;            // Requested layout.
    std::shared_ptr<std::vector<uint8_t>> bytes;   // Shared with the retrieved buffer.
    std::shared_ptr<Event> ready;                  // Set at the last chunk or on error.
    bool retrieved = false;                        // RetrieveBuffer was called.
  };

  FakeDevice* device_;              // Where the buffers live.
  FakeMemory* memory_;              // Their memory.
  mutable std::mutex mu_;           // Guards slots_ and metadata_.
  std::vector<Slot> slots_;         // One per buffer.
  AttributeMap metadata_;           // AddMetadata's entries.
};

}  // namespace testing
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TRANSFER_MANAGER_H_
