// FakeBuffer: a pjrtkit::Buffer kept in host memory, for the C-API tests.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_BUFFER_H_

// C++ standard library.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace testing {

class FakeDevice;
class FakeMemory;

// A buffer whose bytes are dense row-major in host memory: owned, or aliased (zero-copy) host
// data. The reported layout is whatever was requested; the bytes stay row-major.
class FakeBuffer : public Buffer {
 public:
  // An owned buffer holding `bytes` (DenseByteSize(type, dims) of them).
  FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device, FakeMemory* memory,
             std::vector<uint8_t> bytes, std::shared_ptr<Event> ready);
  // A buffer aliasing `aliased` host data; `on_destroy` is set when the buffer goes away.
  FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device, FakeMemory* memory,
             const uint8_t* aliased, std::shared_ptr<Event> on_destroy);
  // A buffer aliasing `aliased`, which `keep_alive` keeps valid, ready when `ready` is (the
  // buffers of FakeTransferManager: filled after creation).
  FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device, FakeMemory* memory,
             const uint8_t* aliased, std::shared_ptr<void> keep_alive,
             std::shared_ptr<Event> ready);
  ~FakeBuffer() override;

  // Sets the layout that layout() reports.
  void set_layout(MemoryLayout layout) { layout_ = std::move(layout); }
  // The row-major bytes (nullptr once deleted).
  const uint8_t* bytes() const;
  // Marks the buffer donated (as if deleted).
  void Donate() { Delete(); }

  // Buffer:
  ElementType element_type() const override { return type_; }
  const std::vector<int64_t>& dimensions() const override { return dims_; }
  StatusOr<MemoryLayout> layout() const override;
  Device* device() const override;
  Memory* memory() const override;
  StatusOr<size_t> OnDeviceSizeInBytes() const override;
  std::shared_ptr<Event> ReadyEvent() override { return ready_; }
  void Delete() override;
  bool IsDeleted() const override { return deleted_.load(); }
  bool IsOnCpu() const override { return true; }
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                const MemoryLayout* host_layout) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) override;
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) override;
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size) override;
  StatusOr<uintptr_t> UnsafePointer() override;
  StatusOr<void*> OpaqueDeviceMemoryDataPointer() override;
  // A copy of the bytes as `type` and `dims` (the byte sizes must agree), reporting `layout`
  // when given; INVALID_ARGUMENT otherwise.
  StatusOr<std::unique_ptr<Buffer>> Bitcast(ElementType type, const std::vector<int64_t>& dims,
                                            const std::optional<MemoryLayout>& layout) override;
  // The bytes move to a new buffer (same shape, device, memory and layout) that becomes ready
  // with the status given to dependency_ready; this buffer then reads as donated.
  StatusOr<ControlledDonation> DonateWithControlDependency() override;

 private:
  // Frees the memory once (Delete or destruction).
  void Release();

  ElementType type_;                    // Element type.
  std::vector<int64_t> dims_;           // Dimensions.
  std::optional<MemoryLayout> layout_;  // Requested layout; unset: row-major.
  FakeDevice* device_;                  // Holding device.
  FakeMemory* memory_;                  // Holding memory.
  std::vector<uint8_t> owned_;          // Owned bytes (empty when aliased).
  const uint8_t* aliased_ = nullptr;    // Aliased host bytes (zero-copy).
  std::shared_ptr<Event> ready_;        // Ready when the contents are.
  std::shared_ptr<Event> on_destroy_;   // Set on destruction (zero-copy done_with_host_buffer).
  std::shared_ptr<void> keep_alive_;    // Owner of aliased_ bytes, when the buffer shares them.
  std::atomic<bool> deleted_{false};    // Delete() or donation happened.
  std::atomic<bool> released_{false};   // Memory accounting released.
};

// Copies a dense row-major array of `type` and `dims` at `src` into `dst`, laid out with
// `dst_strides` (bytes per dimension). Byte-sized element types only.
void CopyToStrided(ElementType type, const std::vector<int64_t>& dims, const uint8_t* src,
                   uint8_t* dst, const std::vector<int64_t>& dst_strides);

// The inverse: gathers a strided array at `src` into dense row-major `dst`.
void CopyFromStrided(ElementType type, const std::vector<int64_t>& dims, const uint8_t* src,
                     const std::vector<int64_t>& src_strides, uint8_t* dst);

}  // namespace testing
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_BUFFER_H_
