// WrappedBuffer: a buffer of the reference device, wrapping one inner PJRT_Buffer.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_H_

#include <atomic>
#include <memory>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer_info.h"
#include "xla_plugin/plugin_wrapper/wrapped_device.h"
#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

class WrappedClient;

// Owns an inner buffer. Metadata (type, dims, layout, size, device, memory; WrappedBufferInfo) is
// read at creation, or shared with earlier outputs of the same executable, and stays available
// after deletion; every use of the data checks first that the buffer is live and fails with
// FAILED_PRECONDITION otherwise. The buffer is deleted after Delete() or once RefreshDeleted()
// saw that the inner plugin donated it (Execute asks after every run that could donate it).
// Buffers in "device" memory count in their device's statistics from creation until Delete,
// donation or destruction.
class WrappedBuffer : public Buffer {
 public:
  // Wraps `inner` (taking ownership; destroyed on error) as a buffer of `client`.
  static StatusOr<std::unique_ptr<WrappedBuffer>> Wrap(WrappedClient* client, PJRT_Buffer* inner);
  // Wraps `inner` (taking ownership) whose metadata is `info` (non-null, as ReadInfo returned for
  // a buffer like it): no inner call. `known_ready` says the contents are known to be ready (the
  // execution or copy that made them finished well): ReadyEvent() then needs no inner call
  // either.
  static std::unique_ptr<WrappedBuffer> WrapWithInfo(WrappedClient* client, PJRT_Buffer* inner,
                                                    std::shared_ptr<const WrappedBufferInfo> info,
                                                    bool known_ready = false);
  // Reads the metadata of `inner` (seven inner calls).
  static StatusOr<std::shared_ptr<const WrappedBufferInfo>> ReadInfo(WrappedClient* client,
                                                                    PJRT_Buffer* inner);
  ~WrappedBuffer() override;

  // The inner buffer.
  NativeHandle native_handle() const override;
  ElementType element_type() const override { return info_->element_type; }
  const std::vector<int64_t>& dimensions() const override { return info_->dims; }
  StatusOr<MemoryLayout> layout() const override { return info_->layout; }
  Device* device() const override { return info_->device; }
  Memory* memory() const override { return info_->memory; }
  StatusOr<size_t> OnDeviceSizeInBytes() const override { return info_->on_device_size; }
  std::shared_ptr<Event> ReadyEvent() override;
  void Delete() override;
  bool IsDeleted() const override { return deleted_.load(std::memory_order_acquire); }
  bool IsOnCpu() const override { return info_->is_on_cpu; }
  StatusOr<size_t> HostBufferSize(const MemoryLayout* host_layout) const override;
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                const MemoryLayout* host_layout) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) override;
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size) override;
  StatusOr<uintptr_t> UnsafePointer() override;
  StatusOr<void*> OpaqueDeviceMemoryDataPointer() override;
  // The inner plugin's PJRT_Buffer_Bitcast (UNIMPLEMENTED naming the inner version when it has
  // none: XLA:CPU 0.81).
  StatusOr<std::unique_ptr<Buffer>> Bitcast(ElementType type, const std::vector<int64_t>& dims,
                                            const std::optional<MemoryLayout>& layout) override;
  // The inner plugin's PJRT_Buffer_DonateWithControlDependency; this buffer then reads as
  // donated (and stops counting in its device's statistics). UNIMPLEMENTED as above.
  StatusOr<ControlledDonation> DonateWithControlDependency() override;

  // The inner buffer (JAX never sees it).
  PJRT_Buffer* inner() const { return inner_; }
  // The shared metadata.
  const std::shared_ptr<const WrappedBufferInfo>& info() const { return info_; }
  // Asks the inner plugin whether it deleted the buffer (an execution donated it) and, if so,
  // marks it deleted; returns IsDeleted().
  bool RefreshDeleted();
  // The client the buffer belongs to.
  WrappedClient* client() const { return client_; }

 private:
  WrappedBuffer(WrappedClient* client, PJRT_Buffer* inner,
               std::shared_ptr<const WrappedBufferInfo> info, bool known_ready);
  // ToHostBuffer into `layout` when the buffer stores its elements in another order (XLA:CPU
  // ignores host layouts, host_layout.h): reads the bytes as stored into a staging copy and
  // permutes them into `dst`.
  StatusOr<std::shared_ptr<Event>> ToHostBufferPermuted(void* dst, size_t dst_size,
                                                        const MemoryLayout& layout);
  // The inner pinned_host memory to read this buffer through (pinned_host_read.h), or nullptr
  // when the policy does not ask for it or the read is not one for it: below
  // kMinPinnedReadBytes, not in "device" memory, sub-byte elements, padding, or a destination
  // shorter than the array.
  PJRT_Memory* PinnedHostForReads(size_t dst_size) const;
  // Reads the buffer's bytes as stored (its own layout) into `staging`, which holds exactly
  // the array's dense size.
  StatusOr<std::shared_ptr<Event>> ReadAsStored(std::vector<char>* staging);
  // CopyToDevice / CopyToMemory of a buffer whose layout is not row-major (XLA:CPU's copies
  // lose the layout, host_layout.h): a new buffer on `device` (in `memory`, or its default) with
  // this buffer's layout and bytes. Waits until this buffer is ready.
  StatusOr<std::unique_ptr<Buffer>> CopyPreservingLayout(WrappedDevice* device,
                                                         WrappedMemory* memory);
  // True when the inner plugin moves bytes without looking at layouts (XLA:CPU) and the buffer
  // permutes them itself (DevicePolicy::moves_bytes_ignoring_layouts); false: layouts are passed
  // to the inner plugin, which lays the data out.
  bool FixesLayouts() const;
  // FAILED_PRECONDITION naming `operation` when the buffer is deleted or donated.
  Status CheckLive(const char* operation) const;
  // Stops counting the buffer in its device's statistics (idempotent).
  void ReleaseMemoryCount() const;

  WrappedClient* client_;                              // Owning client.
  PJRT_Buffer* inner_;                                // Owned inner buffer.
  std::shared_ptr<const WrappedBufferInfo> info_;      // Metadata; never null.
  const bool known_ready_;                            // The contents are known to be ready.
  std::atomic<bool> deleted_{false};                  // Deleted or donated.
  mutable std::atomic<bool> counted_{false};          // Counted in the device's counter().
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_H_
