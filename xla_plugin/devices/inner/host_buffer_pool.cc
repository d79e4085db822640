#include "xla_plugin/devices/inner/host_buffer_pool.h"

#include <sys/mman.h>

#include <cstdlib>
#include <vector>

namespace pjrtkit {
namespace inner {

HostBufferPool::HostBufferPool(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}

HostBufferPool::~HostBufferPool() {
  for (const auto& entry : free_blocks_) std::free(entry.second.block);
}

size_t HostBufferPool::Capacity(size_t size) {
  const size_t unit = size >= kHugePageBytes ? kHugePageBytes : kAlignment;
  return (size + unit - 1) / unit * unit;
}

void* HostBufferPool::Acquire(size_t size, size_t* capacity) {
  const size_t rounded = Capacity(size);
  *capacity = rounded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_blocks_.find(rounded);
    if (it != free_blocks_.end()) {
      void* block = it->second.block;
      free_blocks_.erase(it);
      stats_.cached_bytes -= rounded;
      ++stats_.reused;
      return block;
    }
    ++stats_.allocated;
  }
  const bool huge = rounded >= kHugePageBytes;
  void* block = std::aligned_alloc(huge ? kHugePageBytes : kAlignment, rounded);
  // Huge pages: one fault (and one TLB entry) per 2 MiB instead of per 4 KiB. Advice only.
  if (block != nullptr && huge) madvise(block, rounded, MADV_HUGEPAGE);
  return block;
}

void HostBufferPool::Release(void* block, size_t capacity) {
  if (block == nullptr) return;
  std::vector<void*> evicted;  // Freed after the lock is released.
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (capacity <= max_cached_bytes_) {
      // Make room by evicting the least recently released blocks (the pool holds few blocks, so a
      // scan is cheaper than keeping a second index).
      while (stats_.cached_bytes + capacity > max_cached_bytes_ && !free_blocks_.empty()) {
        auto oldest = free_blocks_.begin();
        for (auto it = free_blocks_.begin(); it != free_blocks_.end(); ++it) {
          if (it->second.released_at < oldest->second.released_at) oldest = it;
        }
        stats_.cached_bytes -= oldest->first;
        ++stats_.evicted;
        evicted.push_back(oldest->second.block);
        free_blocks_.erase(oldest);
      }
      free_blocks_.emplace(capacity, Kept{block, ++release_clock_});
      stats_.cached_bytes += capacity;
      kept = true;
    }
  }
  for (void* old : evicted) std::free(old);
  if (!kept) std::free(block);
}

HostBufferPool::Stats HostBufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace inner
}  // namespace pjrtkit
