// HostBufferPool: block reuse, alignment and the limit on kept bytes.
#include "xla_plugin/devices/inner/host_buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace inner {
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
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % HostBufferPool::kHugePageBytes, 0u);
  EXPECT_EQ(large_capacity, size_t{4} << 20);  // Whole huge pages.
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

}  // namespace
}  // namespace inner
}  // namespace pjrtkit
