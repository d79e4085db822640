// HostBufferPool: block reuse, alignment and the limit on kept bytes.
#include "xla_plugin/plugin_wrapper/host_buffer_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

TEST(HostBufferPoolTest, ReleasedBlockIsReusedForTheSameSize) {
  HostBufferPool pool(size_t{1} << 20);
  size_t capacity = 0;
  void* first = pool.Acquire(100000, &capacity);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(capacity, 102400u);  // Rounded up to 25 pages of 4 KiB.
  std::memset(first, 0x5a, capacity);
  pool.Release(first, capacity);
  EXPECT_EQ(pool.stats().cached_bytes, 102400u);

  size_t again = 0;
  void* second = pool.Acquire(100001, &again);  // Same rounded size: the same block.
  EXPECT_EQ(second, first);
  EXPECT_EQ(again, 102400u);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  EXPECT_EQ(pool.stats().reused, 1);
  EXPECT_EQ(pool.stats().allocated, 1);

  size_t other = 0;
  void* third = pool.Acquire(4096, &other);  // Another size: a new block.
  EXPECT_NE(third, first);
  EXPECT_EQ(other, 4096u);
  EXPECT_EQ(pool.stats().allocated, 2);
  pool.Release(second, again);
  pool.Release(third, other);
  EXPECT_EQ(pool.stats().cached_bytes, 102400u + 4096u);
}

TEST(HostBufferPoolTest, BlocksAreAligned) {
  HostBufferPool pool(size_t{16} << 20);
  size_t small_capacity = 0, large_capacity = 0;
  void* small = pool.Acquire(65536, &small_capacity);
  void* large = pool.Acquire((size_t{3} << 20) + 1, &large_capacity);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % HostBufferPool::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % HostBufferPool::kLargeBlockBytes, 0u);
  EXPECT_EQ(large_capacity, size_t{4} << 20);  // Whole 2 MiB units.
  pool.Release(small, small_capacity);
  pool.Release(large, large_capacity);
}

TEST(HostBufferPoolTest, KeepsAtMostTheLimit) {
  HostBufferPool pool(8192);
  size_t a_capacity = 0, b_capacity = 0, c_capacity = 0;
  void* a = pool.Acquire(4096, &a_capacity);
  void* b = pool.Acquire(4096, &b_capacity);
  void* c = pool.Acquire(4096, &c_capacity);
  pool.Release(a, a_capacity);
  pool.Release(b, b_capacity);
  pool.Release(c, c_capacity);  // Over the limit: the oldest kept block (a) makes room.
  EXPECT_EQ(pool.stats().cached_bytes, 8192u);
  EXPECT_EQ(pool.stats().evicted, 1);
  EXPECT_EQ(pool.max_cached_bytes(), 8192u);

  HostBufferPool none(0);
  size_t capacity = 0;
  void* block = none.Acquire(4096, &capacity);
  none.Release(block, capacity);
  EXPECT_EQ(none.stats().cached_bytes, 0u);
}

TEST(HostBufferPoolTest, NewSizesEvictStaleOnesAndAreReused) {
  HostBufferPool pool(size_t{8} << 20);  // Room for four 2 MiB blocks or one 8 MiB block.
  std::vector<std::pair<void*, size_t>> small(4);
  for (auto& [block, capacity] : small) block = pool.Acquire(size_t{2} << 20, &capacity);
  for (auto& [block, capacity] : small) pool.Release(block, capacity);
  EXPECT_EQ(pool.stats().cached_bytes, size_t{8} << 20);

  // The workload changes to 8 MiB arrays: the stale 2 MiB blocks make room for the new size.
  size_t big_capacity = 0;
  void* big = pool.Acquire(size_t{8} << 20, &big_capacity);
  EXPECT_EQ(big_capacity, size_t{8} << 20);
  pool.Release(big, big_capacity);
  EXPECT_EQ(pool.stats().evicted, 4);
  EXPECT_EQ(pool.stats().cached_bytes, size_t{8} << 20);
  const int64_t reused_before = pool.stats().reused;
  size_t again_capacity = 0;
  void* again = pool.Acquire(size_t{8} << 20, &again_capacity);
  EXPECT_EQ(again, big);  // Served from the pool, not from the system.
  EXPECT_EQ(pool.stats().reused, reused_before + 1);
  pool.Release(again, again_capacity);

  // A block larger than the whole limit is freed without evicting anything.
  size_t huge_capacity = 0;
  void* huge = pool.Acquire(size_t{16} << 20, &huge_capacity);
  pool.Release(huge, huge_capacity);
  EXPECT_EQ(pool.stats().evicted, 4);
  EXPECT_EQ(pool.stats().cached_bytes, size_t{8} << 20);
}

// Waits up to 5 s for `done`; true when it held.
template <typename Predicate>
bool WaitFor(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(HostBufferPoolTest, IdleBlocksAreFreedAndBusyOnesKept) {
  HostBufferPool::Options options;
  options.max_cached_bytes = size_t{1} << 20;
  options.idle_release = std::chrono::milliseconds(50);
  HostBufferPool pool(options);
  size_t capacity = 0;
  void* block = pool.Acquire(8192, &capacity);
  pool.Release(block, capacity);
  EXPECT_EQ(pool.stats().cached_bytes, 8192u);
  ASSERT_TRUE(WaitFor([&] { return pool.stats().idle_freed == 1; }));
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  // A block reused well within the idle time stays (the reuse pattern keeps its speed).
  for (int i = 0; i < 20; ++i) {
    void* again = pool.Acquire(8192, &capacity);
    pool.Release(again, capacity);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(pool.stats().reused, 19);
  EXPECT_EQ(pool.stats().idle_freed, 1);
}

TEST(HostBufferPoolTest, NothingIsKeptWhenMemoryIsShort) {
  std::atomic<uint64_t> available{uint64_t{1} << 30};
  HostBufferPool::Options options;
  options.max_cached_bytes = size_t{1} << 20;
  options.min_available_bytes = uint64_t{512} << 20;
  options.available_bytes = [&] { return available.load(); };
  HostBufferPool pool(options);
  size_t a_capacity = 0, b_capacity = 0;
  void* a = pool.Acquire(4096, &a_capacity);
  void* b = pool.Acquire(8192, &b_capacity);
  pool.Release(a, a_capacity);
  EXPECT_EQ(pool.stats().cached_bytes, 4096u);
  available = uint64_t{256} << 20;  // Below the minimum: b is freed, and so is the kept a.
  pool.Release(b, b_capacity);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  EXPECT_EQ(pool.stats().pressure_freed, 2);
}

TEST(HostBufferPoolTest, TrimAndDiscardFree) {
  HostBufferPool pool(size_t{1} << 20);
  size_t a_capacity = 0, b_capacity = 0, c_capacity = 0;
  void* a = pool.Acquire(4096, &a_capacity);
  void* b = pool.Acquire(8192, &b_capacity);
  void* c = pool.Acquire(8192, &c_capacity);
  EXPECT_EQ(pool.stats().in_use_bytes, 4096u + 8192u + 8192u);
  EXPECT_EQ(pool.stats().in_use_blocks, 3);
  EXPECT_EQ(pool.stats().cached_blocks, 0);
  pool.Release(a, a_capacity);
  pool.Release(b, b_capacity);
  pool.Discard(c, c_capacity);  // Its user failed: not kept.
  EXPECT_EQ(pool.stats().discarded, 1);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  EXPECT_EQ(pool.stats().in_use_blocks, 0);
  EXPECT_EQ(pool.stats().cached_bytes, 4096u + 8192u);
  EXPECT_EQ(pool.stats().cached_blocks, 2);
  EXPECT_EQ(pool.Trim(), 4096u + 8192u);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  EXPECT_EQ(pool.stats().cached_blocks, 0);
  EXPECT_EQ(pool.stats().trimmed, 2);
  EXPECT_EQ(pool.Trim(), 0u);
}

TEST(HostBufferPoolTest, ReusedBlocksCountAsInUseAgain) {
  HostBufferPool pool(size_t{64} << 20);
  size_t capacity = 0;
  void* block = pool.Acquire(size_t{3} << 20, &capacity);  // Rounded to 2 MiB: 4 MiB.
  EXPECT_EQ(capacity, size_t{4} << 20);
  pool.Release(block, capacity);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  EXPECT_EQ(pool.stats().cached_blocks, 1);
  void* again = pool.Acquire(size_t{3} << 20, &capacity);
  EXPECT_EQ(again, block);
  EXPECT_EQ(pool.stats().in_use_bytes, size_t{4} << 20);
  EXPECT_EQ(pool.stats().in_use_blocks, 1);
  EXPECT_EQ(pool.stats().cached_blocks, 0);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  pool.Release(again, capacity);
}

TEST(HostBufferPoolTest, DefaultOptionsReleaseIdleBlocksAndWatchMemory) {
  HostBufferPool::Options options = HostBufferPool::DefaultOptions(size_t{512} << 20);
  EXPECT_EQ(options.max_cached_bytes, size_t{512} << 20);
  EXPECT_EQ(options.idle_release, std::chrono::milliseconds(1000));
  EXPECT_GT(options.min_available_bytes, 0u);
  EXPECT_EQ(options.first_use_limit_bytes, size_t{64} << 20);
}

TEST(HostBufferPoolTest, LargeBlocksAreKeptOnlyOnceTheirSizeRepeats) {
  HostBufferPool::Options options;
  options.max_cached_bytes = size_t{64} << 20;
  options.first_use_limit_bytes = size_t{4} << 20;
  HostBufferPool pool(options);
  const size_t large = size_t{8} << 20;
  size_t capacity = 0;
  void* first = pool.Acquire(large, &capacity);  // The size's first acquisition.
  ASSERT_NE(first, nullptr);
  pool.Release(first, capacity);  // Freed at once: nothing says the size repeats.
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  EXPECT_EQ(pool.stats().first_use_freed, 1);
  void* second = pool.Acquire(large, &capacity);  // The second: fresh memory, then kept.
  EXPECT_EQ(pool.stats().allocated, 2);
  pool.Release(second, capacity);
  EXPECT_EQ(pool.stats().cached_bytes, large);
  void* third = pool.Acquire(large, &capacity);  // The third reuses it.
  EXPECT_EQ(third, second);
  EXPECT_EQ(pool.stats().reused, 1);
  pool.Release(third, capacity);
  // A block at or below the limit is kept from its first release.
  size_t small_capacity = 0;
  void* small = pool.Acquire(size_t{4} << 20, &small_capacity);
  pool.Release(small, small_capacity);
  EXPECT_EQ(pool.stats().cached_bytes, large + (size_t{4} << 20));
  EXPECT_EQ(pool.stats().first_use_freed, 1);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
