#include "xla_plugin/devices/xla_cpu/memory_counter.h"

#include <algorithm>

namespace pjrtkit {
namespace xla_cpu {

void MemoryCounter::Allocate(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_in_use_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, bytes_in_use_);
  largest_alloc_ = std::max(largest_alloc_, bytes);
  ++num_allocs_;
}

void MemoryCounter::Free(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_in_use_ -= bytes;
}

MemoryStats MemoryCounter::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats stats;
  stats.bytes_in_use = bytes_in_use_;
  stats.peak_bytes_in_use = peak_bytes_;
  stats.num_allocs = num_allocs_;
  stats.largest_alloc_size = largest_alloc_;
  return stats;
}

}  // namespace xla_cpu
}  // namespace pjrtkit
