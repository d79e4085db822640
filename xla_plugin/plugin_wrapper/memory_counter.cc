#include "xla_plugin/plugin_wrapper/memory_counter.h"

namespace pjrtkit {
namespace plugin_wrapper {

void MemoryCounter::RaiseTo(std::atomic<int64_t>& value, int64_t candidate) {
  int64_t current = value.load(std::memory_order_relaxed);
  while (current < candidate &&
         !value.compare_exchange_weak(current, candidate, std::memory_order_relaxed)) {
  }
}

void MemoryCounter::Allocate(int64_t bytes) {
  const int64_t in_use = bytes_in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  RaiseTo(peak_bytes_, in_use);
  RaiseTo(largest_alloc_, bytes);
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
}

void MemoryCounter::Free(int64_t bytes) {
  bytes_in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryCounter::ClearPeak() {
  peak_bytes_.store(bytes_in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

MemoryStats MemoryCounter::Snapshot() const {
  MemoryStats stats;
  stats.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = peak_bytes_.load(std::memory_order_relaxed);
  stats.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  stats.largest_alloc_size = largest_alloc_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
