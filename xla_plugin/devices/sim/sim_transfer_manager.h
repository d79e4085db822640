// SimTransferManager: buffers created empty and filled chunk by chunk from the host
// (PJRT_Client_CreateBuffersForAsyncHostToDevice).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TRANSFER_MANAGER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TRANSFER_MANAGER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/devices/sim/runtime/allocation.h"

namespace pjrtkit {
namespace sim {

class SimDevice;

// Allocates every buffer up front (RESOURCE_EXHAUSTED then). Each chunk is copied into the
// buffer's memory during TransferData, on the caller's thread, not through the device's queue:
// work queued on the device may already be waiting for the buffer (a read of it), and a chunk
// queued behind that work would never arrive. Nothing else touches the memory until the buffer is
// ready, which it becomes once its last chunk and every chunk before it are in, or with the error
// given to SetBufferError. Destroying the manager fails every buffer that is still waiting
// (CANCELLED), so that work queued on them does not wait forever. Thread-safe.
class SimTransferManager : public AsyncHostToDeviceTransferManager {
 public:
  // Buffers of `shapes` (dense row-major) on `device`.
  static StatusOr<std::unique_ptr<SimTransferManager>> Create(
      SimDevice* device, const std::vector<BufferShape>& shapes);

  // Fails the buffers that did not get their last chunk or an error.
  ~SimTransferManager() override;

  // AsyncHostToDeviceTransferManager:
  size_t buffer_count() const override { return slots_.size(); }
  StatusOr<size_t> buffer_size(int index) const override;
  Device* device() const override;
  // Copies the chunk now (the returned event is ready). FAILED_PRECONDITION after the buffer's
  // last chunk or error; INVALID_ARGUMENT for bytes outside the buffer.
  StatusOr<std::shared_ptr<Event>> TransferData(int index, const void* data, int64_t offset,
                                                int64_t size, bool is_last) override;
  // FAILED_PRECONDITION the second time.
  StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int index) override;
  // FAILED_PRECONDITION after the buffer's last chunk or error.
  Status SetBufferError(int index, const Status& error) override;

 private:
  // One buffer being filled.
  struct Slot {
    BufferShape shape;                       // Type and dimensions.
    std::shared_ptr<Allocation> allocation;  // Its memory.
    std::shared_ptr<Event> ready;            // Set after the last chunk, or with the error.
    bool closed = false;                     // Last chunk sent, or error set.
    bool failed = false;                     // SetBufferError was called.
    int copying = 0;                         // Chunks being copied now.
    bool retrieved = false;                  // RetrieveBuffer was called.
  };

  SimTransferManager(SimDevice* device, std::vector<Slot> slots);
  // INVALID_ARGUMENT naming `fn` for an index out of range.
  Status CheckIndex(const char* fn, int index) const;

  SimDevice* device_;        // Where the buffers live.
  mutable std::mutex mu_;    // Guards the slots' flags.
  std::vector<Slot> slots_;  // One per buffer.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_TRANSFER_MANAGER_H_
