// ParallelCopy: the bytes of a pinned-host read land exactly, whatever the split (no GPU; the read
// itself runs on the H200 in tests/jax/gpu_device_test.py).
#include "xla_plugin/plugin_wrapper/pinned_host_read.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

std::vector<uint8_t> Pattern(size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  return data;
}

TEST(PinnedHostReadTest, ParallelCopyIsExactForEverySplit) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, kPinnedReadChunkBytes - 1,
                       kPinnedReadChunkBytes, 3 * kPinnedReadChunkBytes + 12345,
                       8 * kPinnedReadChunkBytes + 7}) {
    for (unsigned threads : {0u, 1u, 3u, kMaxPinnedReadThreads, 64u}) {
      const std::vector<uint8_t> src = Pattern(bytes);
      std::vector<uint8_t> dst(bytes + 16, 0xEE);  // Guard bytes after the copy.
      ParallelCopy(dst.data(), src.data(), bytes, threads);
      ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << bytes << " " << threads;
      for (size_t i = bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << bytes << " " << i;
    }
  }
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
