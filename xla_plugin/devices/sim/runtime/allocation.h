// Allocation: one block of a device's memory, returned to it when the last holder drops it.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_ALLOCATION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_ALLOCATION_H_

#include <cstdint>
#include <memory>

namespace pjrtkit {
namespace sim {

class MemoryPool;

// A block of device memory, always held by std::shared_ptr: buffers hold it, and so does every
// piece of queued work that reads or writes it, so the block goes back to its device only when
// the last of them is done (SimBuffer::Delete while a copy is queued is safe). The block keeps
// the device's memory region mapped, so an Allocation may outlive the DeviceMemory that made it.
class Allocation {
 public:
  // Made by MemoryPool::Allocate: `size` bytes at `data`, the block [offset, offset + block_size)
  // of `pool`'s region.
  Allocation(std::shared_ptr<MemoryPool> pool, void* data, int64_t size, int64_t offset,
             int64_t block_size);
  // Returns the block to its pool.
  ~Allocation();

  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  // Address of the first byte; never null, also for 0 bytes; a multiple of 64
  // (kBlockAlignment, block_allocator.h).
  void* data() const { return data_; }
  // Bytes requested.
  int64_t size() const { return size_; }
  // Id of the device whose memory this is.
  int device_id() const;
  // Byte offset of the block inside its device's memory.
  int64_t offset() const { return offset_; }
  // Bytes the block takes: size() rounded up to 64, at least 64.
  int64_t block_size() const { return block_size_; }

 private:
  std::shared_ptr<MemoryPool> pool_;  // The device memory the block belongs to.
  void* data_;                        // First byte.
  int64_t size_;                      // Bytes requested.
  int64_t offset_;                    // Offset of the block in the region.
  int64_t block_size_;                // Bytes of the block.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_ALLOCATION_H_
