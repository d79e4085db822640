// HostBufferPool: host memory for device buffers, kept for reuse instead of given back.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_BUFFER_POOL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace pjrtkit {
namespace inner {

// XLA:CPU's device memory is host memory. When it allocates a buffer for a host-to-device copy,
// a large allocation is fresh memory from the kernel, so the copy pays one page fault per 4 KiB
// page on top of the copy itself (device_put of 64 MiB ran at 2 GB/s where memcpy runs at
// 20 GB/s). The pool hands out blocks that have been written before, so a copy into one runs at
// memcpy speed; WrappedClient copies host data into a block and lets XLA:CPU alias it
// (kMutableZeroCopy), and the block comes back here when XLA:CPU lets go of it.
//
// Blocks are aligned to kAlignment (more than XLA:CPU's 64-byte minimum for aliasing); those of
// kHugePageBytes or more are aligned to it and advised as transparent huge pages. A released
// block is kept within the limit given to the constructor, evicting the least recently released
// kept blocks to make room (so a change of array sizes does not leave the pool full of stale
// sizes), and is reused for a request of the same rounded size. Thread-safe. Shared
// (std::shared_ptr) by the client and the release callbacks of live buffers, so it outlives both.
class HostBufferPool {
 public:
  // Alignment of every block.
  static constexpr size_t kAlignment = 4096;
  // Blocks this large are huge-page aligned and advised (madvise MADV_HUGEPAGE).
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // What the pool has done, for tests and diagnostics.
  struct Stats {
    size_t cached_bytes = 0;  // Bytes of released blocks kept for reuse.
    int64_t reused = 0;       // Acquire calls served by a kept block.
    int64_t allocated = 0;    // Acquire calls that allocated a new block.
    int64_t evicted = 0;      // Kept blocks freed to make room for a more recent one.
  };

  // A pool keeping at most `max_cached_bytes` of released blocks (0: keeps none).
  explicit HostBufferPool(size_t max_cached_bytes);
  HostBufferPool(const HostBufferPool&) = delete;
  HostBufferPool& operator=(const HostBufferPool&) = delete;
  // Frees the kept blocks (blocks still out are freed by Release, which must still be called).
  ~HostBufferPool();

  // A block of at least `size` bytes (> 0); its capacity (what Release needs) is stored in
  // `*capacity`. nullptr when the system is out of memory.
  void* Acquire(size_t size, size_t* capacity);
  // Gives back a block from Acquire: kept for reuse, evicting the least recently released kept
  // blocks when the limit requires; freed instead when it alone exceeds the limit.
  void Release(void* block, size_t capacity);
  // The maximum bytes kept.
  size_t max_cached_bytes() const { return max_cached_bytes_; }
  // A snapshot of the counters.
  Stats stats() const;

 private:
  // Rounds `size` up to the capacity blocks of that request have.
  static size_t Capacity(size_t size);

  // A kept block and when it was released (a counter value, for eviction order).
  struct Kept {
    void* block;
    uint64_t released_at;
  };

  const size_t max_cached_bytes_;            // Limit on kept bytes.
  mutable std::mutex mu_;                    // Guards the fields below.
  std::multimap<size_t, Kept> free_blocks_;  // Kept blocks by capacity.
  uint64_t release_clock_ = 0;               // Incremented by every kept release.
  Stats stats_;                              // Counters.
};

}  // namespace inner
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_INNER_HOST_BUFFER_POOL_H_
