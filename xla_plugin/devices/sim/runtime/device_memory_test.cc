#include "xla_plugin/devices/sim/runtime/device_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/runtime/block_allocator.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

std::unique_ptr<DeviceMemory> MakeMemory(int device_id, int64_t capacity) {
  StatusOr<std::unique_ptr<DeviceMemory>> memory = DeviceMemory::Create(device_id, capacity);
  EXPECT_TRUE(memory.ok()) << memory.status().ToString();
  return memory.ok() ? std::move(memory).value() : nullptr;
}

std::shared_ptr<Allocation> MustAllocate(DeviceMemory& memory, int64_t bytes) {
  StatusOr<std::shared_ptr<Allocation>> allocation = memory.Allocate(bytes, "test block");
  EXPECT_TRUE(allocation.ok()) << allocation.status().ToString();
  return allocation.ok() ? std::move(allocation).value() : nullptr;
}

TEST(DeviceMemoryTest, AllocationsAreAlignedWritableAndDistinct) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(3, 16 * kMiB);
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->device_id(), 3);
  EXPECT_EQ(memory->capacity(), 16 * kMiB);
  std::vector<std::shared_ptr<Allocation>> blocks;
  for (int64_t bytes : {1, 63, 64, 65, 4096, 1000000}) {
    std::shared_ptr<Allocation> block = MustAllocate(*memory, bytes);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->size(), bytes);
    EXPECT_EQ(block->device_id(), 3);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block->data()) % 64, 0u) << bytes;
    EXPECT_EQ(block->block_size() % 64, 0);
    EXPECT_GE(block->block_size(), bytes);
    std::memset(block->data(), 0x5A, static_cast<size_t>(bytes));
    blocks.push_back(block);
  }
  for (size_t i = 1; i < blocks.size(); ++i) {
    const auto* previous = static_cast<const uint8_t*>(blocks[i - 1]->data());
    EXPECT_GE(static_cast<const uint8_t*>(blocks[i]->data()),
              previous + blocks[i - 1]->block_size());
  }
}

TEST(DeviceMemoryTest, ZeroByteAllocationsHaveTheirOwnAddress) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, kMiB);
  std::shared_ptr<Allocation> a = MustAllocate(*memory, 0);
  std::shared_ptr<Allocation> b = MustAllocate(*memory, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->data(), nullptr);
  EXPECT_NE(b->data(), nullptr);
  EXPECT_NE(a->data(), b->data());
  EXPECT_EQ(a->size(), 0);
  EXPECT_EQ(a->block_size(), 64);
  EXPECT_EQ(memory->Stats().bytes_in_use, 128);
  EXPECT_EQ(memory->Stats().num_allocs, 2);
  a.reset();
  b.reset();
  EXPECT_EQ(memory->Stats().bytes_in_use, 0);
}

TEST(DeviceMemoryTest, StatsAreExactAndPeaksClear) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(1, 4 * kMiB);
  MemoryStats start = memory->Stats();
  EXPECT_EQ(start.bytes_in_use, 0);
  EXPECT_EQ(start.peak_bytes_in_use, 0);
  EXPECT_EQ(start.num_allocs, 0);
  EXPECT_EQ(start.largest_alloc_size, 0);
  EXPECT_EQ(start.bytes_limit, 4 * kMiB);
  EXPECT_EQ(start.largest_free_block_bytes, 4 * kMiB);
  EXPECT_EQ(start.pool_bytes, 4 * kMiB);

  std::shared_ptr<Allocation> a = MustAllocate(*memory, 1000);  // Block of 1024.
  std::shared_ptr<Allocation> b = MustAllocate(*memory, kMiB);
  MemoryStats two = memory->Stats();
  EXPECT_EQ(two.bytes_in_use, 1024 + kMiB);
  EXPECT_EQ(two.peak_bytes_in_use, 1024 + kMiB);
  EXPECT_EQ(two.num_allocs, 2);
  EXPECT_EQ(two.largest_alloc_size, kMiB);
  EXPECT_EQ(two.largest_free_block_bytes, 4 * kMiB - 1024 - kMiB);

  b.reset();
  MemoryStats one = memory->Stats();
  EXPECT_EQ(one.bytes_in_use, 1024);
  EXPECT_EQ(one.peak_bytes_in_use, 1024 + kMiB);
  EXPECT_EQ(one.largest_free_block_bytes, 4 * kMiB - 1024);  // b's block merged back.

  memory->ClearPeaks();
  MemoryStats cleared = memory->Stats();
  EXPECT_EQ(cleared.peak_bytes_in_use, 1024);
  EXPECT_EQ(cleared.largest_alloc_size, 0);
  EXPECT_EQ(cleared.num_allocs, 2);

  a.reset();
  MemoryStats end = memory->Stats();
  EXPECT_EQ(end.bytes_in_use, 0);
  EXPECT_EQ(end.largest_free_block_bytes, 4 * kMiB);
}

TEST(DeviceMemoryTest, ExhaustionNamesEverythingAndMemoryKeepsWorking) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(2, 8 * kMiB);
  std::shared_ptr<Allocation> a = MustAllocate(*memory, 3 * kMiB);
  std::shared_ptr<Allocation> b = MustAllocate(*memory, 3 * kMiB);
  StatusOr<std::shared_ptr<Allocation>> failed =
      memory->Allocate(4 * kMiB, "buffer f32[1024,1024]");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(failed.status().message(),
            "sim device 2 is out of memory: cannot allocate 4.00 MiB (4194304 bytes) for buffer "
            "f32[1024,1024]; 6.00 MiB (6291456 bytes) in use, largest free block 2.00 MiB "
            "(2097152 bytes), capacity 8.00 MiB (8388608 bytes)");
  EXPECT_EQ(memory->Stats().num_allocs, 2) << "a failed request is not an allocation";
  // Freeing b joins its block with the 2 MiB left at the end: room for 4 MiB again.
  b.reset();
  std::shared_ptr<Allocation> c = MustAllocate(*memory, 4 * kMiB);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(memory->Stats().bytes_in_use, 7 * kMiB);
}

TEST(DeviceMemoryTest, FragmentationIsReportedAsTheLargestFreeBlock) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, 4 * kMiB);
  std::vector<std::shared_ptr<Allocation>> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(MustAllocate(*memory, kMiB));
  blocks[0].reset();
  blocks[2].reset();
  EXPECT_EQ(memory->Stats().bytes_in_use, 2 * kMiB);
  EXPECT_EQ(memory->Stats().largest_free_block_bytes, kMiB);
  StatusOr<std::shared_ptr<Allocation>> failed = memory->Allocate(kMiB + 1, "temporaries of f");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("largest free block 1.00 MiB"), std::string::npos)
      << failed.status().message();
  blocks[1].reset();  // Joins the holes on both sides.
  EXPECT_EQ(memory->Stats().largest_free_block_bytes, 3 * kMiB);
  EXPECT_NE(MustAllocate(*memory, 3 * kMiB), nullptr);
}

TEST(DeviceMemoryTest, BadRequestsAndCapacitiesAreInvalidArguments) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, kMiB);
  StatusOr<std::shared_ptr<Allocation>> negative = memory->Allocate(-1, "buffer s8[-1]");
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  StatusOr<std::unique_ptr<DeviceMemory>> tiny = DeviceMemory::Create(5, 10);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tiny.status().message().find("sim device 5"), std::string::npos);
  StatusOr<std::shared_ptr<Allocation>> huge = memory->Allocate(INT64_MAX, "huge");
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
}

TEST(DeviceMemoryTest, UnreservableAddressSpaceIsResourceExhausted) {
  // 2^62 bytes is far beyond any machine's address space.
  StatusOr<std::unique_ptr<DeviceMemory>> memory = DeviceMemory::Create(7, int64_t{1} << 62);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(memory.status().message().find("sim device 7: cannot reserve"), std::string::npos)
      << memory.status().message();
}

TEST(DeviceMemoryTest, AllocationsOutliveTheirDeviceMemory) {
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, kMiB);
  std::shared_ptr<Allocation> block = MustAllocate(*memory, 4096);
  memory.reset();
  std::memset(block->data(), 1, 4096);  // The region stays mapped while the block lives.
  EXPECT_EQ(block->device_id(), 0);
  block.reset();
}

TEST(DeviceMemoryTest, LargeFreedBlocksAreReusable) {
  // Blocks of at least 1 MiB give their pages back when freed; the memory reads as zeros or
  // anything, but stays usable.
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, 64 * kMiB);
  for (int round = 0; round < 3; ++round) {
    std::shared_ptr<Allocation> block = MustAllocate(*memory, 32 * kMiB + 100);
    ASSERT_NE(block, nullptr);
    std::memset(block->data(), round + 1, static_cast<size_t>(block->size()));
    EXPECT_EQ(static_cast<uint8_t*>(block->data())[block->size() - 1], round + 1);
  }
  EXPECT_EQ(memory->Stats().bytes_in_use, 0);
}

// Minor page faults of this process so far.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// The process's LazyFree memory (pages given back with MADV_FREE, not yet reclaimed) in KiB, or
// -1 when the kernel does not report it.
long LazyFreeKiB() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("LazyFree:", 0) == 0) return std::stol(line.substr(9));
  }
  return -1;
}

// Whether madvise(MADV_FREE) works here (Linux 4.5 and later; some sandboxes lack it).
bool MadvFreeWorks() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  static_cast<char*>(p)[0] = 1;
  const bool works = madvise(p, page, MADV_FREE) == 0;
  munmap(p, page);
  return works;
}

TEST(DeviceMemoryTest, FreedLargeBlocksGoBackLazily) {
  if (!MadvFreeWorks() || LazyFreeKiB() < 0) {
    GTEST_SKIP() << "MADV_FREE or /proc/self/smaps_rollup's LazyFree is not available here";
  }
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, 64 * kMiB);
  const size_t bytes = 32 * kMiB;
  std::shared_ptr<Allocation> block = MustAllocate(*memory, static_cast<int64_t>(bytes));
  std::memset(block->data(), 1, bytes);
  const long before = LazyFreeKiB();
  block.reset();
  // Every page of the block is LazyFree now, unless the kernel already reclaimed some (only
  // under memory pressure): at least half, to be robust to that.
  EXPECT_GE(LazyFreeKiB() - before, static_cast<long>(bytes / 1024 / 2));
}

TEST(DeviceMemoryTest, ReusingAFreedLargeBlockTakesNoPageFaults) {
  // The pages of a freed large block go back lazily, so writing the block allocated again over
  // them does not fault each of its 8192 pages in again (unless the kernel reclaimed them
  // meanwhile, which it does only under memory pressure).
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, 64 * kMiB);
  const size_t bytes = 32 * kMiB;
  void* first_address = nullptr;
  {
    std::shared_ptr<Allocation> block = MustAllocate(*memory, static_cast<int64_t>(bytes));
    std::memset(block->data(), 1, bytes);
    first_address = block->data();
  }
  std::shared_ptr<Allocation> again = MustAllocate(*memory, static_cast<int64_t>(bytes));
  ASSERT_EQ(again->data(), first_address);
  const long before = MinorFaults();
  std::memset(again->data(), 2, bytes);
  const long faults = MinorFaults() - before;
  const long pages = static_cast<long>(bytes / static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_LT(faults, pages / 4) << "pages: " << pages;
  EXPECT_EQ(static_cast<uint8_t*>(again->data())[bytes - 1], 2);
}

TEST(DeviceMemoryTest, ConcurrentAllocateAndFreeKeepExactStats) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  std::unique_ptr<DeviceMemory> memory = MakeMemory(0, 64 * kMiB);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(1234 + t);
      std::vector<std::shared_ptr<Allocation>> held;
      for (int round = 0; round < kRounds; ++round) {
        if (held.size() < 16 && random() % 3 != 0) {
          const int64_t bytes = static_cast<int64_t>(random() % 70000);
          StatusOr<std::shared_ptr<Allocation>> block = memory->Allocate(bytes, "stress");
          if (!block.ok()) {
            ++failures;
            continue;
          }
          // Each block is written with its owner's pattern and checked before it is freed.
          std::memset((*block)->data(), t + 1, static_cast<size_t>(bytes));
          held.push_back(std::move(block).value());
        } else if (!held.empty()) {
          const size_t victim = random() % held.size();
          const auto* bytes = static_cast<const uint8_t*>(held[victim]->data());
          for (int64_t i = 0; i < held[victim]->size(); i += 997) {
            if (bytes[i] != t + 1) ++failures;
          }
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(victim));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  MemoryStats stats = memory->Stats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.largest_free_block_bytes, 64 * kMiB) << "every block merged back";
  EXPECT_GT(*stats.num_allocs, kThreads * kRounds / 3);
  EXPECT_LE(*stats.peak_bytes_in_use, kThreads * 16 * BlockAllocator::BlockSize(70000));
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
