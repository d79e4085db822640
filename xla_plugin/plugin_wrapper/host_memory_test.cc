#include "xla_plugin/plugin_wrapper/host_memory.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

TEST(HostMemoryTest, PhysicalMemoryIsReported) {
  // Every Linux host this runs on reports its memory; a zero would turn the check off.
  EXPECT_GT(HostPhysicalMemoryBytes(), int64_t{1} << 20);
}

TEST(HostMemoryTest, ArraysUpToTheHostSizeFit) {
  // f32[256] is 1024 bytes.
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kF32, {256}, 1024).ok());
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kF32, {}, 4).ok());
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kF32, {0, 1 << 30}, 1).ok());
  // Sub-byte types round up to whole bytes: 3 x 4 bits = 2 bytes.
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kS4, {3}, 2).ok());
  EXPECT_FALSE(CheckFitsInHostMemory("Put", ElementType::kS4, {3}, 1).ok());
}

TEST(HostMemoryTest, LargerArraysAreRefusedNamingTheSizes) {
  const Status status = CheckFitsInHostMemory("BufferFromHostBuffer", ElementType::kF32, {256, 2},
                                               1024);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "BufferFromHostBuffer: an array of [256,2] needs 2048 bytes, more than the host's "
            "1024 bytes of memory");
}

TEST(HostMemoryTest, UnknownHostSizeAcceptsAnything) {
  const std::vector<int64_t> huge = {int64_t{1} << 40, 1 << 20};
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kF32, huge, 0).ok());
  EXPECT_TRUE(CheckFitsInHostMemory("Put", ElementType::kF32, huge, -1).ok());
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
