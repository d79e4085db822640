// ErrorBuffer: a buffer that holds an error instead of data (PJRT_Client_CreateErrorBuffer).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_ERROR_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_ERROR_BUFFER_H_

// C++ standard library.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// A buffer with a shape, a device and a memory but no device memory: its ready event fails with
// `error`, and so does every operation on its data. PJRT_LoadedExecutable_Execute fails with the
// error when one is an argument. The C-API layer makes these for every device; a device never sees
// one (it is not among the buffers a device made).
class ErrorBuffer : public Buffer {
 public:
  // An error buffer of `type` and `dims` with `layout`, placed on `device` / `memory`; `error` is
  // not OK.
  ErrorBuffer(Status error, ElementType type, std::vector<int64_t> dims, MemoryLayout layout,
              Device* device, Memory* memory);

  // The error every use reports.
  const Status& error() const { return error_; }

  ElementType element_type() const override { return type_; }
  const std::vector<int64_t>& dimensions() const override { return dims_; }
  StatusOr<MemoryLayout> layout() const override { return layout_; }
  Device* device() const override { return device_; }
  Memory* memory() const override { return memory_; }
  // 0: nothing is allocated.
  StatusOr<size_t> OnDeviceSizeInBytes() const override { return size_t{0}; }
  std::shared_ptr<Event> ReadyEvent() override { return ready_; }
  void Delete() override { deleted_.store(true); }
  bool IsDeleted() const override { return deleted_.load(); }
  bool IsOnCpu() const override { return false; }
  // The data operations all fail with error().
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                const MemoryLayout* host_layout) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) override;
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size) override;

 private:
  const Status error_;                 // Never OK.
  const ElementType type_;             // Element type.
  const std::vector<int64_t> dims_;    // Dimensions.
  const MemoryLayout layout_;          // Layout it reports.
  Device* const device_;               // Its device.
  Memory* const memory_;               // Its memory.
  const std::shared_ptr<Event> ready_;  // Ready with error_.
  std::atomic<bool> deleted_{false};   // Delete() was called.
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_ERROR_BUFFER_H_
