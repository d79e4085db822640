// WrappedTransferManager: an asynchronous host-to-device transfer of the reference device,
// wrapping XLA:CPU's PJRT_AsyncHostToDeviceTransferManager.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TRANSFER_MANAGER_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TRANSFER_MANAGER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/plugin_wrapper/wrapped_device.h"
#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

class WrappedClient;

// Owns an inner transfer manager; every call is forwarded. Buffers handed out are WrappedBuffers
// of the client (they stay valid after the manager is destroyed). Indices are checked by the
// C-API layer; this class checks them again, so direct C++ callers get INVALID_ARGUMENT too.
class WrappedTransferManager : public AsyncHostToDeviceTransferManager {
 public:
  // Creates the inner buffers of `shapes` (with `layouts`, when given) in `memory` of `client`.
  static StatusOr<std::unique_ptr<WrappedTransferManager>> Create(
      WrappedClient* client, const std::vector<BufferShape>& shapes,
      const std::vector<std::optional<MemoryLayout>>& layouts, WrappedMemory* memory);
  ~WrappedTransferManager() override;

  size_t buffer_count() const override { return buffer_count_; }
  StatusOr<size_t> buffer_size(int index) const override;
  Device* device() const override { return device_; }
  StatusOr<std::shared_ptr<Event>> TransferData(int index, const void* data, int64_t offset,
                                                int64_t size, bool is_last) override;
  StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int index) override;
  Status SetBufferError(int index, const Status& error) override;
  // Forwards the entries as PJRT_NamedValues; XLA:CPU's answer is returned as is.
  Status AddMetadata(const AttributeMap& metadata) override;

 private:
  WrappedTransferManager(WrappedClient* client, PJRT_AsyncHostToDeviceTransferManager* inner)
      : client_(client), inner_(inner) {}
  // Reads the buffer count and the device.
  Status Init();
  // INVALID_ARGUMENT unless 0 <= index < buffer_count_.
  Status CheckIndex(int index) const;

  WrappedClient* client_;                          // Owning client.
  PJRT_AsyncHostToDeviceTransferManager* inner_;  // Owned inner manager.
  size_t buffer_count_ = 0;                       // Number of buffers.
  WrappedDevice* device_ = nullptr;                // Where the buffers live.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TRANSFER_MANAGER_H_
