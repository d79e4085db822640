#include "xla_plugin/devices/sim/runtime/block_allocator.h"

#include <iterator>
#include <limits>

namespace pjrtkit {
namespace sim {

BlockAllocator::BlockAllocator(int64_t capacity)
    : capacity_(capacity < 0 ? 0 : capacity / kBlockAlignment * kBlockAlignment) {
  if (capacity_ > 0) InsertFree(0, capacity_);
}

int64_t BlockAllocator::BlockSize(int64_t bytes) {
  if (bytes <= 0) return kBlockAlignment;
  if (bytes > std::numeric_limits<int64_t>::max() - (kBlockAlignment - 1)) return -1;
  return (bytes + kBlockAlignment - 1) / kBlockAlignment * kBlockAlignment;
}

std::optional<int64_t> BlockAllocator::Allocate(int64_t bytes) {
  const int64_t size = BlockSize(bytes);
  if (size < 0 || size > capacity_) return std::nullopt;
  // The smallest free block of at least `size` bytes, lowest offset first among equals.
  auto best = free_by_size_.lower_bound({size, std::numeric_limits<int64_t>::min()});
  if (best == free_by_size_.end()) return std::nullopt;
  const int64_t block_size = best->first;
  const int64_t offset = best->second;
  EraseFree(free_by_offset_.find(offset));
  if (block_size > size) InsertFree(offset + size, block_size - size);
  bytes_in_use_ += size;
  return offset;
}

void BlockAllocator::Free(int64_t offset, int64_t block_size) {
  bytes_in_use_ -= block_size;
  int64_t start = offset;
  int64_t end = offset + block_size;
  // Merge with the free block that ends where this one starts, and the one that starts at its end.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      EraseFree(previous);
    }
  }
  if (next != free_by_offset_.end() && next->first == end) {
    end += next->second;
    EraseFree(next);
  }
  InsertFree(start, end - start);
}

int64_t BlockAllocator::largest_free_block() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

void BlockAllocator::InsertFree(int64_t offset, int64_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void BlockAllocator::EraseFree(std::map<int64_t, int64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

}  // namespace sim
}  // namespace pjrtkit
