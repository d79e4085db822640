// DeviceMemory: a simulated device's own memory, one region reserved up front and managed by our
// own allocator. A device team replaces it with its hardware's memory (the driver's allocator).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_DEVICE_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_DEVICE_MEMORY_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/runtime/allocation.h"

namespace pjrtkit {
namespace sim {

class MemoryPool;

// The memory of one device: `capacity_bytes` of address space reserved with one mmap
// (PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE: no memory is committed
// until touched) and handed out in blocks by a best-fit allocator that merges neighbouring free
// blocks (BlockAllocator, O(log n) per call). Thread-safe.
//
// Alignment: every block starts at a multiple of 64 bytes (kBlockAlignment) and takes a multiple
// of 64 bytes; a 0-byte request takes 64, so every Allocation has an address of its own.
//
// Lifetime: every Allocation shares the MemoryPool behind this object (region, allocator,
// statistics), so the memory an Allocation points to stays mapped until it is released, even
// after its DeviceMemory is gone; the region is unmapped with the last of them. SimClient relies
// on this: it destroys each device's queue (running what is queued) before the device's
// DeviceMemory, and work or buffers that still hold an Allocation afterwards stay valid.
class DeviceMemory {
 public:
  // The memory of device `device_id`, of `capacity_bytes` (>= 64; the usable capacity is that
  // rounded down to a multiple of 64). INVALID_ARGUMENT below 64 bytes; RESOURCE_EXHAUSTED when
  // the system refuses the address space (the text names the device and the size).
  static StatusOr<std::unique_ptr<DeviceMemory>> Create(int device_id, int64_t capacity_bytes);
  ~DeviceMemory();

  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // A block of `bytes` (>= 0; INVALID_ARGUMENT otherwise), returned to this memory when the last
  // std::shared_ptr to it is dropped. RESOURCE_EXHAUSTED when no free block holds it; the text
  // names the device, the request, `purpose` ("buffer f32[1024,1024]", "temporaries of jit_f"),
  // the bytes in use, the largest free block and the capacity.
  StatusOr<std::shared_ptr<Allocation>> Allocate(int64_t bytes, std::string_view purpose);

  // Exact figures, in bytes of whole blocks (requests rounded up to 64, at least 64):
  //   bytes_in_use              blocks held now
  //   peak_bytes_in_use         highest bytes_in_use since creation or ClearPeaks()
  //   num_allocs                successful Allocate calls since creation
  //   largest_alloc_size        largest block handed out since creation or ClearPeaks()
  //   bytes_limit, pool_bytes, peak_pool_bytes   the capacity (the region is reserved up front)
  //   largest_free_block_bytes  largest free block now
  MemoryStats Stats() const;
  // Starts the peaks over: peak_bytes_in_use becomes bytes_in_use, largest_alloc_size 0.
  void ClearPeaks();
  // Usable bytes (capacity_bytes rounded down to a multiple of 64).
  int64_t capacity() const;
  // The device this memory belongs to.
  int device_id() const;

 private:
  explicit DeviceMemory(std::shared_ptr<MemoryPool> pool);

  std::shared_ptr<MemoryPool> pool_;  // The region, its allocator and statistics.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_DEVICE_MEMORY_H_
