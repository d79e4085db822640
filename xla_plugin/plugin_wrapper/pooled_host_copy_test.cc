// PooledCopyBytes: which host-to-device copies the host buffer pool takes, under the
// device-neutral default of DevicePolicy::host_copy_pooling() and under a policy whose inner
// plugin aliases aligned zero-copy data itself (no plugin needed).
#include "xla_plugin/plugin_wrapper/pooled_host_copy.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

constexpr int64_t kElements = 32768;  // 128 KiB of f32.

// 128 KiB of f32 at `misalignment` bytes past a 64-byte boundary.
class Host {
 public:
  explicit Host(size_t misalignment)
      : raw_(static_cast<char*>(std::aligned_alloc(64, kElements * 4 + 64))),
        data_(raw_ + misalignment) {}
  ~Host() { std::free(raw_); }
  HostBufferArgs Args(HostBufferSemantics semantics, int64_t elements = kElements) const {
    HostBufferArgs args;
    args.data = data_;
    args.type = ElementType::kF32;
    args.dims = {elements};
    args.semantics = semantics;
    return args;
  }

 private:
  char* raw_;
  char* data_;
};

HostCopyPooling Aliasing64() {
  HostCopyPooling pooling;
  pooling.inner_zero_copy_alignment = 64;
  return pooling;
}

TEST(PooledCopyBytesTest, DefaultPoolsEveryLargeDenseCopy) {
  const HostCopyPooling pooling;
  EXPECT_EQ(pooling.min_bytes, 65536u);
  EXPECT_EQ(pooling.inner_zero_copy_alignment, 0u);
  const Host aligned(0);
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableZeroCopy), nullptr,
                            pooling),
            131072u);
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableOnlyDuringCall),
                            nullptr, pooling),
            131072u);
  // Below min_bytes: the inner plugin copies.
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableOnlyDuringCall, 16383),
                            nullptr, pooling),
            0u);
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableOnlyDuringCall, 16384),
                            nullptr, pooling),
            65536u);
}

TEST(PooledCopyBytesTest, DataTheInnerPluginAliasesBypassesThePool) {
  const Host aligned(0), misaligned(16);
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableZeroCopy), nullptr,
                            Aliasing64()),
            0u);
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kMutableZeroCopy), nullptr,
                            Aliasing64()),
            0u);
  // Aligned, but the semantics forbid aliasing: pooled.
  EXPECT_EQ(PooledCopyBytes(aligned.Args(HostBufferSemantics::kImmutableOnlyDuringCall),
                            nullptr, Aliasing64()),
            131072u);
  // Where glibc puts large numpy arrays: the inner plugin cannot alias it, pooled.
  EXPECT_EQ(PooledCopyBytes(misaligned.Args(HostBufferSemantics::kImmutableZeroCopy), nullptr,
                            Aliasing64()),
            131072u);
}

TEST(PooledCopyBytesTest, StridedSubByteAndLaidOutDataBypassThePool) {
  const Host host(16);
  HostBufferArgs strided = host.Args(HostBufferSemantics::kImmutableOnlyDuringCall, 16384);
  strided.byte_strides = std::vector<int64_t>{8};
  EXPECT_EQ(PooledCopyBytes(strided, nullptr, HostCopyPooling()), 0u);
  HostBufferArgs packed = host.Args(HostBufferSemantics::kImmutableOnlyDuringCall);
  packed.type = ElementType::kS4;
  EXPECT_EQ(PooledCopyBytes(packed, nullptr, HostCopyPooling()), 0u);
  HostBufferArgs null_data = host.Args(HostBufferSemantics::kImmutableOnlyDuringCall);
  null_data.data = nullptr;
  EXPECT_EQ(PooledCopyBytes(null_data, nullptr, HostCopyPooling()), 0u);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
