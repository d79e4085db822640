// XlaCpuBuffer: a buffer of the reference device, wrapping one inner PJRT_Buffer.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_BUFFER_H_

#include <atomic>
#include <memory>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_device.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_memory.h"

namespace pjrtkit {
namespace xla_cpu {

class XlaCpuClient;

// Owns an inner buffer. Metadata (type, dims, layout, size, device, memory) is read once at
// creation and stays available after deletion; every use of the data checks first that the
// buffer is live (the inner plugin's IsDeleted is the truth, so donation is seen) and fails with
// FAILED_PRECONDITION otherwise. Buffers in "device" memory count in their device's statistics
// from creation until Delete, donation or destruction.
class XlaCpuBuffer : public Buffer {
 public:
  // Wraps `inner` (taking ownership; destroyed on error) as a buffer of `client`.
  static StatusOr<std::unique_ptr<XlaCpuBuffer>> Wrap(XlaCpuClient* client, PJRT_Buffer* inner);
  ~XlaCpuBuffer() override;

  ElementType element_type() const override { return element_type_; }
  const std::vector<int64_t>& dimensions() const override { return dims_; }
  StatusOr<MemoryLayout> layout() const override { return layout_; }
  Device* device() const override { return device_; }
  Memory* memory() const override { return memory_; }
  StatusOr<size_t> OnDeviceSizeInBytes() const override { return on_device_size_; }
  std::shared_ptr<Event> ReadyEvent() override;
  void Delete() override;
  bool IsDeleted() const override;
  bool IsOnCpu() const override { return is_on_cpu_; }
  StatusOr<size_t> HostBufferSize(const MemoryLayout* host_layout) const override;
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                const MemoryLayout* host_layout) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) override;
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size) override;
  StatusOr<uintptr_t> UnsafePointer() override;
  StatusOr<void*> OpaqueDeviceMemoryDataPointer() override;

  // The inner buffer (JAX never sees it).
  PJRT_Buffer* inner() const { return inner_; }
  // The client the buffer belongs to.
  XlaCpuClient* client() const { return client_; }

 private:
  XlaCpuBuffer(XlaCpuClient* client, PJRT_Buffer* inner);
  // Reads the metadata from the inner buffer and starts counting it.
  Status Init();
  // ToHostBuffer for a non-row-major `layout` (XLA:CPU ignores host layouts): reads row-major
  // into a staging copy and permutes it into `dst`.
  StatusOr<std::shared_ptr<Event>> ToHostBufferPermuted(void* dst, size_t dst_size,
                                                        const MemoryLayout& layout);
  // FAILED_PRECONDITION naming `operation` when the buffer is deleted or donated.
  Status CheckLive(const char* operation) const;
  // Stops counting the buffer in its device's statistics (idempotent).
  void ReleaseMemoryCount() const;

  XlaCpuClient* client_;                      // Owning client.
  PJRT_Buffer* inner_;                        // Owned inner buffer.
  XlaCpuDevice* device_ = nullptr;            // Device holding the data.
  XlaCpuMemory* memory_ = nullptr;            // Memory holding the data.
  ElementType element_type_ = ElementType::kInvalid;  // Element type.
  std::vector<int64_t> dims_;                 // Dimensions.
  StatusOr<MemoryLayout> layout_ = MemoryLayout();     // Inner layout (or why it is unknown).
  size_t on_device_size_ = 0;                 // Inner on-device size.
  bool is_on_cpu_ = true;                     // Inner IsOnCpu.
  std::atomic<bool> deleted_{false};          // Delete() was called.
  mutable std::atomic<bool> counted_{false};  // Counted in device_->counter().
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_BUFFER_H_
