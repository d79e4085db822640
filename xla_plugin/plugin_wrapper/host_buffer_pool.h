// HostBufferPool: host memory for device buffers, kept for reuse instead of given back.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_BUFFER_POOL_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_BUFFER_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace pjrtkit {
namespace plugin_wrapper {

// XLA:CPU's device memory is host memory. When it allocates a buffer for a host-to-device copy,
// a large allocation is fresh memory from the kernel, so the copy pays one page fault per 4 KiB
// page on top of the copy itself (device_put of 64 MiB ran at 2 GB/s where memcpy runs at
// 20 GB/s). The pool hands out blocks that have been written before, so a copy into one runs at
// memcpy speed; WrappedClient copies host data into a block and lets XLA:CPU alias it
// (kMutableZeroCopy), and the block comes back here when XLA:CPU lets go of it.
//
// Blocks are aligned to kAlignment (more than XLA:CPU's 64-byte minimum for aliasing); those of
// kLargeBlockBytes or more are aligned and rounded to it. Fresh blocks get no huge-page advice:
// with transparent huge pages in `madvise` mode, MADV_HUGEPAGE made first touches stall in
// memory compaction (150-290 ms per 64 MiB where 4 KiB pages take 25 ms), so a pool block that
// is not reused would cost more than no pool. A released block is kept for reuse at the same
// rounded size:
//   - within the byte limit of Options::max_cached_bytes, evicting the least recently released
//     kept blocks to make room (a change of array sizes does not leave the pool full of stale
//     sizes); a block alone above the limit is freed;
//   - not when the system is short of memory (Options::min_available_bytes);
//   - not, for a block above Options::first_use_limit_bytes, when its size has been acquired
//     only once: nothing says yet that the size repeats, so a lone large put and delete gives
//     its memory back at once (the second acquisition of a size is fresh memory, the third
//     reuses a kept block);
//   - until it has been idle for Options::idle_release (a background thread then frees it), so a
//     process that stops transferring gets its memory back;
//   - until Trim() (an explicit release).
// Thread-safe. Shared (std::shared_ptr) by the client and the release callbacks of live buffers,
// so it outlives both.
class HostBufferPool {
 public:
  // Alignment of every block.
  static constexpr size_t kAlignment = 4096;
  // Blocks this large are aligned and rounded up to it.
  static constexpr size_t kLargeBlockBytes = size_t{2} << 20;

  // How much the pool keeps, and for how long.
  struct Options {
    size_t max_cached_bytes = 0;  // Limit on kept bytes (0: keeps nothing).
    // Kept blocks not reused for this long are freed (0: kept until evicted or trimmed).
    std::chrono::milliseconds idle_release{0};
    // A released block is kept only when the system's available memory, less the block, is at
    // least this (0: not checked); when it is not, every kept block is freed too.
    uint64_t min_available_bytes = 0;
    // The system's available memory; null: sysinfo()'s free + buffer RAM (tests replace it).
    std::function<uint64_t()> available_bytes;
    // A released block larger than this is kept only when its size was acquired more than once
    // (0: no such check).
    size_t first_use_limit_bytes = 0;
  };

  // What the pool has done, for tests and diagnostics.
  struct Stats {
    size_t cached_bytes = 0;     // Bytes of released blocks kept for reuse.
    int64_t cached_blocks = 0;   // Released blocks kept for reuse.
    size_t in_use_bytes = 0;     // Bytes of blocks handed out and not yet released/discarded.
    int64_t in_use_blocks = 0;   // Blocks handed out and not yet released or discarded.
    int64_t reused = 0;          // Acquire calls served by a kept block.
    int64_t allocated = 0;       // Acquire calls that allocated a new block.
    int64_t evicted = 0;         // Kept blocks freed to make room for a more recent one.
    int64_t idle_freed = 0;      // Kept blocks freed after Options::idle_release unused.
    int64_t pressure_freed = 0;  // Blocks freed (released or kept) because memory was short.
    int64_t trimmed = 0;         // Kept blocks freed by Trim.
    int64_t discarded = 0;       // Blocks freed by Discard.
    int64_t first_use_freed = 0;  // Large blocks freed because their size was acquired once.
  };

  // The defaults of a client's pool: idle blocks are freed after a second, nothing is kept
  // while less than 1/16 of the machine's memory is available, and a block above 64 MiB only once
  // its size repeats.
  static constexpr size_t kDefaultFirstUseLimitBytes = size_t{64} << 20;
  // Sizes whose acquisitions are counted for Options::first_use_limit_bytes, at most (the counts
  // start over beyond).
  static constexpr size_t kMaxCountedSizes = 256;
  static Options DefaultOptions(size_t max_cached_bytes);

  // A pool keeping at most `max_cached_bytes` of released blocks, without idle or memory checks.
  explicit HostBufferPool(size_t max_cached_bytes);
  explicit HostBufferPool(Options options);
  HostBufferPool(const HostBufferPool&) = delete;
  HostBufferPool& operator=(const HostBufferPool&) = delete;
  // Stops the idle thread and frees the kept blocks (blocks still out are freed by Release or
  // Discard, which must still be called).
  ~HostBufferPool();

  // A block of at least `size` bytes (> 0); its capacity (what Release needs) is stored in
  // `*capacity`. nullptr when the system is out of memory.
  void* Acquire(size_t size, size_t* capacity);
  // Gives back a block from Acquire once its user is done with it: kept for reuse (see the class
  // comment) or freed.
  void Release(void* block, size_t capacity);
  // Frees a block from Acquire (`capacity` as Acquire reported it) without keeping it (its user
  // finished with an error).
  void Discard(void* block, size_t capacity);
  // Frees every kept block now; returns the bytes freed.
  size_t Trim();
  // The maximum bytes kept.
  size_t max_cached_bytes() const { return options_.max_cached_bytes; }
  // A snapshot of the counters.
  Stats stats() const;

 private:
  using Clock = std::chrono::steady_clock;

  // Rounds `size` up to the capacity blocks of that request have.
  static size_t Capacity(size_t size);

  // A kept block and when it was released (a counter value, for eviction order, and a time, for
  // idle release).
  struct Kept {
    void* block;
    uint64_t released_at;
    Clock::time_point released_time;
  };

  // Counts a block of `capacity` as no longer in use (mu_ held).
  void ReturnedLocked(size_t capacity);
  // True when keeping `capacity` more bytes leaves enough memory available.
  bool MemoryAllowsKeeping(size_t capacity) const;
  // Body of the idle thread: frees blocks idle for options_.idle_release until stopping_.
  void FreeIdleBlocks();

  const Options options_;                    // Limits.
  mutable std::mutex mu_;                    // Guards the fields below.
  std::condition_variable kept_changed_;     // A block was kept, or stopping_ was set.
  std::multimap<size_t, Kept> free_blocks_;  // Kept blocks by capacity.
  uint64_t release_clock_ = 0;               // Incremented by every kept release.
  std::map<size_t, int64_t> acquisitions_;   // Acquire calls per capacity above the first-use
                                             // limit (at most kMaxCountedSizes entries).
  Stats stats_;                              // Counters.
  bool stopping_ = false;                    // The destructor runs: the idle thread ends.
  std::thread idle_thread_;                  // Started at the first kept block (idle_release).
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_BUFFER_POOL_H_
