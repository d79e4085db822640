// AsyncHostToDeviceTransferManager: buffers created empty and filled later, chunk by chunk, from
// host memory (PJRT_Client_CreateBuffersForAsyncHostToDevice).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_HOST_TO_DEVICE_TRANSFER_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_HOST_TO_DEVICE_TRANSFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

class Device;

// Element type and dimensions of one buffer of an asynchronous transfer.
struct BufferShape {
  ElementType type = ElementType::kInvalid;  // Element type.
  std::vector<int64_t> dims;                 // Dimensions.
};

// Owns the buffers of one asynchronous host-to-device transfer until they are retrieved. Each
// buffer becomes ready when its last chunk has arrived (TransferData with is_last) or carries an
// error set with SetBufferError. Made by Client::CreateBuffersForAsyncHostToDevice.
class AsyncHostToDeviceTransferManager {
 public:
  virtual ~AsyncHostToDeviceTransferManager() = default;

  // Number of buffers.
  virtual size_t buffer_count() const = 0;
  // On-device size in bytes of buffer `index` (the bytes TransferData fills);
  // INVALID_ARGUMENT for an index out of range.
  virtual StatusOr<size_t> buffer_size(int index) const = 0;
  // The device the buffers live on.
  virtual Device* device() const = 0;
  // Copies `size` bytes at `data` to byte `offset` of buffer `index`; `is_last` marks the final
  // chunk of that buffer. The returned event is ready when `data` may be reused.
  virtual StatusOr<std::shared_ptr<Event>> TransferData(int index, const void* data,
                                                        int64_t offset, int64_t size,
                                                        bool is_last) = 0;
  // Hands out buffer `index` (once); it may still be waiting for data (see its ReadyEvent).
  virtual StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int index) = 0;
  // Fails buffer `index` with `error` (not OK): its ready event and every read report it.
  virtual Status SetBufferError(int index, const Status& error) = 0;
  // Attaches transfer metadata (device-specific hints).
  virtual Status AddMetadata(const AttributeMap& metadata) {
    return Unimplemented(
        "AsyncHostToDeviceTransferManager::AddMetadata is not implemented by this device");
  }
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_HOST_TO_DEVICE_TRANSFER_H_
