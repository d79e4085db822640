// BlockAllocator: best-fit allocation of byte ranges [offset, offset + size) inside one region,
// with coalescing of neighbouring free blocks. Pure bookkeeping (no memory, no lock): MemoryPool
// puts it over an mmap'ed region and guards it with a mutex.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_BLOCK_ALLOCATOR_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_BLOCK_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace pjrtkit {
namespace sim {

// Every block starts at a multiple of kBlockAlignment and its size is one (requests are rounded
// up; a 0-byte request takes one unit, so that every allocation has an address of its own).
inline constexpr int64_t kBlockAlignment = 64;

// Manages the offsets of a region of `capacity` bytes (rounded down to kBlockAlignment).
// Best fit: a request takes the smallest free block that holds it (the lowest offset among equal
// sizes), split when larger; a released block merges with free neighbours. Every operation is
// O(log n) in the number of free blocks. Not thread-safe.
class BlockAllocator {
 public:
  // A region of `capacity` bytes (>= 0), all free.
  explicit BlockAllocator(int64_t capacity);

  // `bytes` (>= 0) rounded up to kBlockAlignment, at least one unit: the size of the block a
  // request of `bytes` takes. -1 when the rounding overflows.
  static int64_t BlockSize(int64_t bytes);

  // The offset of a block of BlockSize(bytes) bytes; nullopt when no free block holds it.
  std::optional<int64_t> Allocate(int64_t bytes);
  // Returns the block of `block_size` bytes at `offset` (what Allocate handed out).
  void Free(int64_t offset, int64_t block_size);

  // Usable bytes (the constructor's capacity rounded down to kBlockAlignment).
  int64_t capacity() const { return capacity_; }
  // Bytes in allocated blocks.
  int64_t bytes_in_use() const { return bytes_in_use_; }
  // Size of the largest free block (0 when none).
  int64_t largest_free_block() const;
  // Number of free blocks (1 for an empty region of non-zero capacity).
  int64_t free_block_count() const { return static_cast<int64_t>(free_by_offset_.size()); }

 private:
  // Adds / removes the free block [offset, offset + size) to / from both indexes.
  void InsertFree(int64_t offset, int64_t size);
  void EraseFree(std::map<int64_t, int64_t>::iterator it);

  int64_t capacity_;                                    // Usable bytes.
  int64_t bytes_in_use_ = 0;                            // Bytes in allocated blocks.
  std::map<int64_t, int64_t> free_by_offset_;           // Free blocks: offset -> size.
  std::set<std::pair<int64_t, int64_t>> free_by_size_;  // Free blocks: (size, offset).
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_BLOCK_ALLOCATOR_H_
