// XlaCpuTransferManager: an asynchronous host-to-device transfer of the reference device,
// wrapping XLA:CPU's PJRT_AsyncHostToDeviceTransferManager.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_TRANSFER_MANAGER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_TRANSFER_MANAGER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_device.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_memory.h"

namespace pjrtkit {
namespace xla_cpu {

class XlaCpuClient;

// Owns an inner transfer manager; every call is forwarded. Buffers handed out are XlaCpuBuffers
// of the client (they stay valid after the manager is destroyed). Indices are checked by the
// C-API layer; this class checks them again, so direct C++ callers get INVALID_ARGUMENT too.
class XlaCpuTransferManager : public AsyncHostToDeviceTransferManager {
 public:
  // Creates the inner buffers of `shapes` (with `layouts`, when given) in `memory` of `client`.
  static StatusOr<std::unique_ptr<XlaCpuTransferManager>> Create(
      XlaCpuClient* client, const std::vector<BufferShape>& shapes,
      const std::vector<std::optional<MemoryLayout>>& layouts, XlaCpuMemory* memory);
  ~XlaCpuTransferManager() override;

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
  XlaCpuTransferManager(XlaCpuClient* client, PJRT_AsyncHostToDeviceTransferManager* inner)
      : client_(client), inner_(inner) {}
  // Reads the buffer count and the device.
  Status Init();
  // INVALID_ARGUMENT unless 0 <= index < buffer_count_.
  Status CheckIndex(int index) const;

  XlaCpuClient* client_;                          // Owning client.
  PJRT_AsyncHostToDeviceTransferManager* inner_;  // Owned inner manager.
  size_t buffer_count_ = 0;                       // Number of buffers.
  XlaCpuDevice* device_ = nullptr;                // Where the buffers live.
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_TRANSFER_MANAGER_H_
