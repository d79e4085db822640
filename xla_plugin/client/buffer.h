// Buffer: an array living in one memory of one device.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_BUFFER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "xla_plugin/client/event.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

class Device;
class Memory;
struct ControlledDonation;

// A device array. Destroying the object releases it (PJRT_Buffer_Destroy); Delete() releases the
// device memory early while the object stays queryable (IsDeleted() then returns true).
class Buffer {
 public:
  virtual ~Buffer() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // Element type.
  virtual ElementType element_type() const = 0;
  // Dimensions (static shapes only).
  virtual const std::vector<int64_t>& dimensions() const = 0;
  // On-device layout; dense row-major unless the device says otherwise. PJRT's Layouts extension
  // reports it (jaxlib builds NumPy's zero-copy view of a CPU buffer with its strides), so the
  // bytes in memory must be laid out exactly so.
  virtual StatusOr<MemoryLayout> layout() const;
  // The device holding the buffer.
  virtual Device* device() const = 0;
  // The memory holding the buffer.
  virtual Memory* memory() const = 0;
  // Bytes the buffer occupies on the device.
  virtual StatusOr<size_t> OnDeviceSizeInBytes() const = 0;
  // Becomes ready when the buffer's contents are (an error if producing them failed).
  virtual std::shared_ptr<Event> ReadyEvent() = 0;
  // Releases the device memory; later uses are FAILED_PRECONDITION errors.
  virtual void Delete() = 0;
  // True after Delete() (or after the buffer was donated to an execution).
  virtual bool IsDeleted() const = 0;
  // True when the data lives in host-addressable memory.
  virtual bool IsOnCpu() const = 0;
  // Bytes ToHostBuffer needs for `host_layout` (nullptr: dense row-major).
  virtual StatusOr<size_t> HostBufferSize(const MemoryLayout* host_layout) const;
  // Copies the contents into `dst` (`dst_size` bytes, laid out as `host_layout`, nullptr meaning
  // dense row-major). The returned event is ready when `dst` holds the data.
  virtual StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                        const MemoryLayout* host_layout) = 0;
  // Copies the buffer to `dst_device`'s default memory.
  virtual StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) = 0;
  // Copies the buffer to `dst_memory`.
  virtual StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) = 0;
  // Copies `size` raw bytes from byte `offset` of the on-device data into `dst`.
  virtual StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size);
  // Address of the data for frameworks that alias it (UNIMPLEMENTED unless the device allows it).
  virtual StatusOr<uintptr_t> UnsafePointer();
  // Opaque device pointer to the data (UNIMPLEMENTED unless the device allows it).
  virtual StatusOr<void*> OpaqueDeviceMemoryDataPointer();
  // A new buffer of `type` and `dims` laid out as `layout` (nullopt: the default layout for that
  // shape) over this buffer's device memory, which both then share (PJRT_Buffer_Bitcast); the
  // byte sizes must agree. UNIMPLEMENTED unless the device can.
  virtual StatusOr<std::unique_ptr<Buffer>> Bitcast(ElementType type,
                                                    const std::vector<int64_t>& dims,
                                                    const std::optional<MemoryLayout>& layout);
  // Hands this buffer's memory to a new buffer that becomes ready only once the returned
  // `dependency_ready` has been called (PJRT_Buffer_DonateWithControlDependency); this buffer
  // then reads as donated. UNIMPLEMENTED unless the device can.
  virtual StatusOr<ControlledDonation> DonateWithControlDependency();

  // Records that a framework holds a raw reference to the device memory. The C-API layer then
  // postpones Delete() (and keeps the buffer past PJRT_Buffer_Destroy) until the last reference
  // is dropped, so devices need not look at the count except to refuse donating the buffer.
  Status IncreaseExternalReferenceCount();
  // Drops one such reference; FAILED_PRECONDITION when there is none.
  Status DecreaseExternalReferenceCount();
  // Number of external references held now.
  int external_reference_count() const { return external_references_.load(); }

 private:
  std::atomic<int> external_references_{0};  // Held raw references (see above).
};

// What Buffer::DonateWithControlDependency returns.
struct ControlledDonation {
  std::unique_ptr<Buffer> buffer;  // The donated memory, under a new buffer.
  // Call exactly once, when the work the donation waits for is done (an error makes `buffer`
  // an error). Must be callable from any thread.
  std::function<void(Status)> dependency_ready;
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_BUFFER_H_
