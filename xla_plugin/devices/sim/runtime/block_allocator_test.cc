#include "xla_plugin/devices/sim/runtime/block_allocator.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TEST(BlockAllocatorTest, BlockSizesRoundUpToSixtyFourAndZeroTakesOneUnit) {
  EXPECT_EQ(BlockAllocator::BlockSize(0), 64);
  EXPECT_EQ(BlockAllocator::BlockSize(1), 64);
  EXPECT_EQ(BlockAllocator::BlockSize(64), 64);
  EXPECT_EQ(BlockAllocator::BlockSize(65), 128);
  EXPECT_EQ(BlockAllocator::BlockSize(INT64_MAX), -1);
}

TEST(BlockAllocatorTest, CapacityRoundsDownAndFillsExactly) {
  BlockAllocator allocator(1000);  // 15 blocks of 64 = 960 usable bytes.
  EXPECT_EQ(allocator.capacity(), 960);
  EXPECT_EQ(allocator.largest_free_block(), 960);
  EXPECT_EQ(allocator.Allocate(960), std::optional<int64_t>(0));
  EXPECT_EQ(allocator.bytes_in_use(), 960);
  EXPECT_EQ(allocator.largest_free_block(), 0);
  EXPECT_EQ(allocator.Allocate(0), std::nullopt);
  allocator.Free(0, 960);
  EXPECT_EQ(allocator.bytes_in_use(), 0);
  EXPECT_EQ(allocator.free_block_count(), 1);
}

TEST(BlockAllocatorTest, SequentialBlocksAreContiguous) {
  BlockAllocator allocator(64 * 10);
  EXPECT_EQ(allocator.Allocate(1), std::optional<int64_t>(0));
  EXPECT_EQ(allocator.Allocate(100), std::optional<int64_t>(64));
  EXPECT_EQ(allocator.Allocate(0), std::optional<int64_t>(192));
  EXPECT_EQ(allocator.bytes_in_use(), 256);
  EXPECT_EQ(allocator.largest_free_block(), 640 - 256);
}

TEST(BlockAllocatorTest, BestFitTakesTheSmallestHoleThatFits) {
  // Layout: [A 128][B 64][C 256][D 64][E 192][F 64][tail 128], 896 bytes.
  BlockAllocator allocator(64 * 14);
  const int64_t a = *allocator.Allocate(128);
  *allocator.Allocate(64);
  const int64_t c = *allocator.Allocate(256);
  *allocator.Allocate(64);
  const int64_t e = *allocator.Allocate(192);
  *allocator.Allocate(64);
  EXPECT_EQ(allocator.largest_free_block(), 128);
  // Holes of 128 (A), 256 (C), 192 (E) and the 128-byte tail at 768; B, D, F keep them apart.
  allocator.Free(a, 128);
  allocator.Free(c, 256);
  allocator.Free(e, 192);
  EXPECT_EQ(allocator.free_block_count(), 4);
  EXPECT_EQ(allocator.Allocate(150), std::optional<int64_t>(e));   // 192 fits best.
  EXPECT_EQ(allocator.Allocate(100), std::optional<int64_t>(a));   // 128: A before the tail.
  EXPECT_EQ(allocator.Allocate(64), std::optional<int64_t>(768));  // The tail, not C's 256.
  EXPECT_EQ(allocator.largest_free_block(), 256);
  EXPECT_EQ(allocator.Allocate(200), std::optional<int64_t>(c));
  EXPECT_EQ(allocator.Allocate(64), std::optional<int64_t>(832));  // The tail's rest.
  EXPECT_EQ(allocator.Allocate(0), std::nullopt);
  EXPECT_EQ(allocator.bytes_in_use(), 896);
}

TEST(BlockAllocatorTest, EqualSizesGoToTheLowestOffset) {
  BlockAllocator allocator(64 * 6);
  const int64_t a = *allocator.Allocate(64);
  *allocator.Allocate(64);
  const int64_t c = *allocator.Allocate(64);
  *allocator.Allocate(64);
  const int64_t e = *allocator.Allocate(128);
  EXPECT_EQ(allocator.largest_free_block(), 0);
  allocator.Free(e, 128);
  allocator.Free(c, 64);
  allocator.Free(a, 64);
  EXPECT_EQ(allocator.Allocate(64), std::optional<int64_t>(a));
  EXPECT_EQ(allocator.Allocate(64), std::optional<int64_t>(c));
  EXPECT_EQ(allocator.Allocate(64), std::optional<int64_t>(e));
}

TEST(BlockAllocatorTest, FreeMergesWithBothNeighbours) {
  BlockAllocator allocator(64 * 4);
  const int64_t a = *allocator.Allocate(64);
  const int64_t b = *allocator.Allocate(64);
  const int64_t c = *allocator.Allocate(64);
  const int64_t d = *allocator.Allocate(64);
  allocator.Free(a, 64);
  allocator.Free(c, 64);
  EXPECT_EQ(allocator.free_block_count(), 2);
  EXPECT_EQ(allocator.largest_free_block(), 64);
  EXPECT_EQ(allocator.Allocate(128), std::nullopt) << "fragmented: no 128-byte hole";
  allocator.Free(b, 64);  // Joins a and c.
  EXPECT_EQ(allocator.free_block_count(), 1);
  EXPECT_EQ(allocator.largest_free_block(), 192);
  allocator.Free(d, 64);  // Joins the rest: one block again.
  EXPECT_EQ(allocator.free_block_count(), 1);
  EXPECT_EQ(allocator.largest_free_block(), 256);
  EXPECT_EQ(allocator.Allocate(256), std::optional<int64_t>(0));
}

TEST(BlockAllocatorTest, FragmentationThenCoalescingRestoresOneBlock) {
  constexpr int kBlocks = 1000;
  BlockAllocator allocator(64 * kBlocks);
  std::vector<int64_t> offsets;
  for (int i = 0; i < kBlocks; ++i) offsets.push_back(*allocator.Allocate(64));
  for (int i = 0; i < kBlocks; i += 2) allocator.Free(offsets[i], 64);
  EXPECT_EQ(allocator.free_block_count(), kBlocks / 2);
  EXPECT_EQ(allocator.largest_free_block(), 64);
  EXPECT_EQ(allocator.bytes_in_use(), 64 * kBlocks / 2);
  EXPECT_EQ(allocator.Allocate(65), std::nullopt);
  for (int i = 1; i < kBlocks; i += 2) allocator.Free(offsets[i], 64);
  EXPECT_EQ(allocator.free_block_count(), 1);
  EXPECT_EQ(allocator.largest_free_block(), 64 * kBlocks);
  EXPECT_EQ(allocator.bytes_in_use(), 0);
}

TEST(BlockAllocatorTest, TooLargeAndZeroCapacityAreRefused) {
  BlockAllocator allocator(64);
  EXPECT_EQ(allocator.Allocate(65), std::nullopt);
  EXPECT_EQ(allocator.Allocate(INT64_MAX), std::nullopt);
  BlockAllocator empty(10);
  EXPECT_EQ(empty.capacity(), 0);
  EXPECT_EQ(empty.Allocate(0), std::nullopt);
  EXPECT_EQ(empty.free_block_count(), 0);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
