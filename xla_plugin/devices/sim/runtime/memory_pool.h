// MemoryPool: the state behind a DeviceMemory, shared with its Allocations: the mapped region,
// the BlockAllocator over it, and the statistics, under one mutex.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_MEMORY_POOL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_MEMORY_POOL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/runtime/allocation.h"
#include "xla_plugin/devices/sim/runtime/block_allocator.h"

namespace pjrtkit {
namespace sim {

// Owned by std::shared_ptr: by its DeviceMemory and by every live Allocation, so the region is
// unmapped only when both the DeviceMemory and the last Allocation are gone. Thread-safe.
class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  // Freed blocks of at least this many bytes give their whole pages back to the system lazily
  // (madvise(MADV_FREE)): the kernel reclaims them when it needs memory, and a later allocation
  // that reuses them before that takes no page faults.
  static constexpr int64_t kReleasePagesThreshold = int64_t{1} << 20;

  // Reserves `capacity_bytes` (>= 64) of address space for device `device_id`: one mmap
  // (PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE; pages are only backed
  // once touched). INVALID_ARGUMENT for a capacity below 64 bytes; RESOURCE_EXHAUSTED naming the
  // device and the size when the system refuses the mapping.
  static StatusOr<std::shared_ptr<MemoryPool>> Create(int device_id, int64_t capacity_bytes);
  // Unmaps the region.
  ~MemoryPool();

  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A block of `bytes` (see DeviceMemory::Allocate for the errors).
  StatusOr<std::shared_ptr<Allocation>> Allocate(int64_t bytes, std::string_view purpose);
  // Returns the block [offset, offset + block_size) (called by ~Allocation).
  void Release(int64_t offset, int64_t block_size);
  // The statistics now (see DeviceMemory::Stats).
  MemoryStats Stats() const;
  // Starts the peak figures over (see DeviceMemory::ClearPeaks).
  void ClearPeaks();

  // The device the memory belongs to.
  int device_id() const { return device_id_; }
  // Usable bytes: the capacity asked for, rounded down to a multiple of 64.
  int64_t capacity() const { return allocator_.capacity(); }

 private:
  MemoryPool(int device_id, int64_t capacity, void* base, size_t mapped_bytes);

  const int device_id_;             // Owning device.
  uint8_t* const base_;             // First byte of the region.
  const size_t mapped_bytes_;       // Bytes mapped (capacity rounded up to whole pages).
  mutable std::mutex mu_;           // Guards the fields below.
  BlockAllocator allocator_;        // Which blocks are free.
  int64_t peak_bytes_in_use_ = 0;   // Highest bytes in use since creation or ClearPeaks.
  int64_t num_allocs_ = 0;          // Successful allocations since creation.
  int64_t largest_alloc_size_ = 0;  // Largest block handed out since creation or ClearPeaks.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_MEMORY_POOL_H_
