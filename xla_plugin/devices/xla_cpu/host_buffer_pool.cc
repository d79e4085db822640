#include "xla_plugin/devices/xla_cpu/host_buffer_pool.h"

#include <sys/mman.h>

#include <cstdlib>

namespace pjrtkit {
namespace xla_cpu {

HostBufferPool::HostBufferPool(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}

HostBufferPool::~HostBufferPool() {
  for (const auto& entry : free_blocks_) std::free(entry.second);
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
      void* block = it->second;
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stats_.cached_bytes + capacity <= max_cached_bytes_) {
      free_blocks_.emplace(capacity, block);
      stats_.cached_bytes += capacity;
      return;
    }
  }
  std::free(block);
}

HostBufferPool::Stats HostBufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace xla_cpu
}  // namespace pjrtkit
