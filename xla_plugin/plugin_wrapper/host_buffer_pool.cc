#include "xla_plugin/plugin_wrapper/host_buffer_pool.h"

#include <sys/sysinfo.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// sysinfo()'s free + buffer RAM, in bytes (page cache not counted: conservative).
uint64_t SystemAvailableBytes() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return UINT64_MAX;
  return (static_cast<uint64_t>(info.freeram) + info.bufferram) * info.mem_unit;
}

// sysinfo()'s total RAM, in bytes (0 when unknown).
uint64_t SystemTotalBytes() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return 0;
  return static_cast<uint64_t>(info.totalram) * info.mem_unit;
}

}  // namespace

HostBufferPool::Options HostBufferPool::DefaultOptions(size_t max_cached_bytes) {
  Options options;
  options.max_cached_bytes = max_cached_bytes;
  options.idle_release = std::chrono::milliseconds(1000);
  options.min_available_bytes = SystemTotalBytes() / 16;
  options.first_use_limit_bytes = kDefaultFirstUseLimitBytes;
  return options;
}

HostBufferPool::HostBufferPool(size_t max_cached_bytes)
    : HostBufferPool(Options{max_cached_bytes, std::chrono::milliseconds(0), 0, nullptr}) {}

HostBufferPool::HostBufferPool(Options options) : options_(std::move(options)) {}

HostBufferPool::~HostBufferPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  kept_changed_.notify_all();
  if (idle_thread_.joinable()) idle_thread_.join();
  for (const auto& entry : free_blocks_) std::free(entry.second.block);
}

size_t HostBufferPool::Capacity(size_t size) {
  const size_t unit = size >= kLargeBlockBytes ? kLargeBlockBytes : kAlignment;
  return (size + unit - 1) / unit * unit;
}

void* HostBufferPool::Acquire(size_t size, size_t* capacity) {
  const size_t rounded = Capacity(size);
  *capacity = rounded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.first_use_limit_bytes > 0 && rounded > options_.first_use_limit_bytes) {
      if (acquisitions_.size() >= kMaxCountedSizes && acquisitions_.count(rounded) == 0) {
        acquisitions_.clear();
      }
      ++acquisitions_[rounded];
    }
    auto it = free_blocks_.find(rounded);
    if (it != free_blocks_.end()) {
      void* block = it->second.block;
      free_blocks_.erase(it);
      stats_.cached_bytes -= rounded;
      --stats_.cached_blocks;
      ++stats_.reused;
      stats_.in_use_bytes += rounded;
      ++stats_.in_use_blocks;
      return block;
    }
    ++stats_.allocated;
  }
  // No MADV_HUGEPAGE: see the header.
  void* block =
      std::aligned_alloc(rounded >= kLargeBlockBytes ? kLargeBlockBytes : kAlignment, rounded);
  if (block != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes += rounded;
    ++stats_.in_use_blocks;
  }
  return block;
}

void HostBufferPool::ReturnedLocked(size_t capacity) {
  stats_.in_use_bytes -= std::min(stats_.in_use_bytes, capacity);
  if (stats_.in_use_blocks > 0) --stats_.in_use_blocks;
}

bool HostBufferPool::MemoryAllowsKeeping(size_t capacity) const {
  if (options_.min_available_bytes == 0) return true;
  const uint64_t available =
      options_.available_bytes ? options_.available_bytes() : SystemAvailableBytes();
  return available >= capacity && available - capacity >= options_.min_available_bytes;
}

void HostBufferPool::Release(void* block, size_t capacity) {
  if (block == nullptr) return;
  std::vector<void*> to_free;  // Freed after the lock is released.
  bool kept = false;
  const bool memory_allows = capacity <= options_.max_cached_bytes && MemoryAllowsKeeping(capacity);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ReturnedLocked(capacity);
    const auto counted = acquisitions_.find(capacity);
    const bool first_use = options_.first_use_limit_bytes > 0 &&
                           capacity > options_.first_use_limit_bytes &&
                           (counted == acquisitions_.end() || counted->second < 2);
    if (capacity > options_.max_cached_bytes) {
      // Alone above the limit: freed below.
    } else if (first_use) {
      ++stats_.first_use_freed;  // Its size has not repeated: freed below.
    } else if (!memory_allows) {
      // The system is short of memory: give back this block and every kept one.
      for (const auto& entry : free_blocks_) to_free.push_back(entry.second.block);
      stats_.pressure_freed += static_cast<int64_t>(free_blocks_.size()) + 1;
      free_blocks_.clear();
      stats_.cached_bytes = 0;
      stats_.cached_blocks = 0;
    } else {
      // Make room by evicting the least recently released blocks (the pool holds few blocks, so a
      // scan is cheaper than keeping a second index).
      while (stats_.cached_bytes + capacity > options_.max_cached_bytes && !free_blocks_.empty()) {
        auto oldest = free_blocks_.begin();
        for (auto it = free_blocks_.begin(); it != free_blocks_.end(); ++it) {
          if (it->second.released_at < oldest->second.released_at) oldest = it;
        }
        stats_.cached_bytes -= oldest->first;
        --stats_.cached_blocks;
        ++stats_.evicted;
        to_free.push_back(oldest->second.block);
        free_blocks_.erase(oldest);
      }
      free_blocks_.emplace(capacity, Kept{block, ++release_clock_, Clock::now()});
      stats_.cached_bytes += capacity;
      ++stats_.cached_blocks;
      kept = true;
      if (options_.idle_release.count() > 0 && !idle_thread_.joinable() && !stopping_) {
        idle_thread_ = std::thread([this] { FreeIdleBlocks(); });
      }
    }
  }
  if (kept) kept_changed_.notify_all();
  for (void* old : to_free) std::free(old);
  if (!kept) std::free(block);
}

void HostBufferPool::Discard(void* block, size_t capacity) {
  if (block == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ReturnedLocked(capacity);
    ++stats_.discarded;
  }
  std::free(block);
}

size_t HostBufferPool::Trim() {
  std::vector<void*> to_free;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& entry : free_blocks_) to_free.push_back(entry.second.block);
    bytes = stats_.cached_bytes;
    stats_.trimmed += static_cast<int64_t>(free_blocks_.size());
    free_blocks_.clear();
    stats_.cached_bytes = 0;
    stats_.cached_blocks = 0;
  }
  for (void* block : to_free) std::free(block);
  return bytes;
}

void HostBufferPool::FreeIdleBlocks() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (free_blocks_.empty()) {
      kept_changed_.wait(lock);
      continue;
    }
    Clock::time_point oldest = Clock::time_point::max();
    for (const auto& entry : free_blocks_) oldest = std::min(oldest, entry.second.released_time);
    const Clock::time_point deadline = oldest + options_.idle_release;
    if (Clock::now() < deadline) {
      kept_changed_.wait_until(lock, deadline);
      continue;
    }
    std::vector<void*> to_free;
    const Clock::time_point cutoff = Clock::now() - options_.idle_release;
    for (auto it = free_blocks_.begin(); it != free_blocks_.end();) {
      if (it->second.released_time > cutoff) {
        ++it;
        continue;
      }
      to_free.push_back(it->second.block);
      stats_.cached_bytes -= it->first;
      --stats_.cached_blocks;
      ++stats_.idle_freed;
      it = free_blocks_.erase(it);
    }
    lock.unlock();
    for (void* block : to_free) std::free(block);
    lock.lock();
  }
}

HostBufferPool::Stats HostBufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
