// WrappedBuffer and WrappedClient::BufferFromHostBuffer against the real XLA:CPU plugin.
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::HostBufferPool;
using ::pjrtkit::plugin_wrapper::WrappedBuffer;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::MemoryOfKind;
using ::pjrtkit::xla_cpu::testing::Upload;

// One client of 4 devices for the whole suite (loading XLA:CPU takes a while). Device 3 is kept
// for the memory-statistics test, so its counters start at zero there.
class XlaCpuBufferTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(4).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  Device* device(int id) { return client_->devices()[id]; }

  static Client* client_;
};

Client* XlaCpuBufferTest::client_ = nullptr;

// Checks the metadata of a dense row-major buffer on `device`'s "device" memory.
void ExpectMetadata(Buffer* buffer, ElementType type, const std::vector<int64_t>& dims,
                    size_t bytes, Device* device) {
  EXPECT_EQ(buffer->element_type(), type);
  EXPECT_EQ(buffer->dimensions(), dims);
  StatusOr<size_t> size = buffer->OnDeviceSizeInBytes();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, bytes);
  EXPECT_EQ(buffer->device(), device);
  EXPECT_EQ(buffer->memory(), device->default_memory());
  EXPECT_TRUE(buffer->IsOnCpu());
  EXPECT_FALSE(buffer->IsDeleted());
  StatusOr<MemoryLayout> layout = buffer->layout();
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  std::vector<int64_t> row_major;
  for (size_t i = dims.size(); i > 0; --i) row_major.push_back(static_cast<int64_t>(i - 1));
  EXPECT_EQ(layout->minor_to_major, row_major);
  EXPECT_TRUE(layout->tiles.empty());
  Status ready = buffer->ReadyEvent()->Await();
  EXPECT_TRUE(ready.ok()) << ready.ToString();
}

TEST_F(XlaCpuBufferTest, RoundTripF32) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 1e6f, -7.5f};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, values, {2, 3}, device(0));
  ASSERT_NE(buffer, nullptr);
  ExpectMetadata(buffer.get(), ElementType::kF32, {2, 3}, 24, device(0));
  EXPECT_EQ(Download<float>(buffer.get(), 6), values);
  StatusOr<size_t> host_size = buffer->HostBufferSize(nullptr);
  ASSERT_TRUE(host_size.ok());
  EXPECT_EQ(*host_size, 24u);
}

TEST_F(XlaCpuBufferTest, RoundTripS32) {
  std::vector<int32_t> values = {7, -1, 2147483647, -2147483647 - 1};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kS32, values, {4}, device(1));
  ASSERT_NE(buffer, nullptr);
  ExpectMetadata(buffer.get(), ElementType::kS32, {4}, 16, device(1));
  EXPECT_EQ(Download<int32_t>(buffer.get(), 4), values);
}

TEST_F(XlaCpuBufferTest, RoundTripPred) {
  std::vector<uint8_t> values = {1, 0, 0, 1, 1};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kPred, values, {5}, device(2));
  ASSERT_NE(buffer, nullptr);
  ExpectMetadata(buffer.get(), ElementType::kPred, {5}, 5, device(2));
  EXPECT_EQ(Download<uint8_t>(buffer.get(), 5), values);
}

TEST_F(XlaCpuBufferTest, RoundTripBF16) {
  // bfloat16 bit patterns: 1.0, -2.0, 0.5, 3.140625 (0x4049).
  std::vector<uint16_t> values = {0x3F80, 0xC000, 0x3F00, 0x4049};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kBF16, values, {2, 2}, device(0));
  ASSERT_NE(buffer, nullptr);
  ExpectMetadata(buffer.get(), ElementType::kBF16, {2, 2}, 8, device(0));
  EXPECT_EQ(Download<uint16_t>(buffer.get(), 4), values);
}

TEST_F(XlaCpuBufferTest, ScalarAndEmpty) {
  std::vector<float> scalar = {42.0f};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, scalar, {}, device(0));
  ASSERT_NE(buffer, nullptr);
  ExpectMetadata(buffer.get(), ElementType::kF32, {}, 4, device(0));
  EXPECT_EQ(Download<float>(buffer.get(), 1), scalar);
  std::vector<float> none;
  std::unique_ptr<Buffer> empty = Upload(client_, ElementType::kF32, none, {0, 3}, device(0));
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->dimensions(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(*empty->OnDeviceSizeInBytes(), 0u);
}

TEST_F(XlaCpuBufferTest, ByteStridesReadColumnMajorInput) {
  // A 2x3 array stored column-major: element (i, j) at byte 4 * (i + 2 * j).
  std::vector<float> column_major = {1, 4, 2, 5, 3, 6};
  HostBufferArgs args;
  args.data = column_major.data();
  args.type = ElementType::kF32;
  args.dims = {2, 3};
  args.byte_strides = std::vector<int64_t>{4, 8};
  args.device = device(0);
  StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->done_with_host_buffer->Await().ok());
  EXPECT_EQ(Download<float>(result->buffer.get(), 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(XlaCpuBufferTest, EverySemanticsRoundTrips) {
  for (HostBufferSemantics semantics :
       {HostBufferSemantics::kImmutableOnlyDuringCall,
        HostBufferSemantics::kImmutableUntilTransferCompletes,
        HostBufferSemantics::kImmutableZeroCopy, HostBufferSemantics::kMutableZeroCopy}) {
    SCOPED_TRACE(static_cast<int>(semantics));
    // 64-byte aligned so XLA:CPU may alias it for the zero-copy semantics.
    alignas(64) float data[4] = {1, 2, 3, 4};
    HostBufferArgs args;
    args.data = data;
    args.type = ElementType::kF32;
    args.dims = {4};
    args.semantics = semantics;
    args.device = device(1);
    StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_NE(result->done_with_host_buffer, nullptr);
    EXPECT_EQ(Download<float>(result->buffer.get(), 4), (std::vector<float>{1, 2, 3, 4}));
    result->buffer.reset();  // Zero-copy buffers release `data` when destroyed.
    Status done = result->done_with_host_buffer->Await();
    EXPECT_TRUE(done.ok()) << done.ToString();
  }
}

TEST_F(XlaCpuBufferTest, PinnedHostMemory) {
  Memory* pinned = MemoryOfKind(device(1), "pinned_host");
  ASSERT_NE(pinned, nullptr);
  std::vector<int32_t> values = {5, 6, 7};
  std::unique_ptr<Buffer> buffer =
      Upload(client_, ElementType::kS32, values, {3}, /*device=*/nullptr, pinned);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->memory(), pinned);
  EXPECT_EQ(buffer->device(), device(1));
  EXPECT_EQ(Download<int32_t>(buffer.get(), 3), values);
  // A memory the device cannot address: refused by the client layer (call_checks.h), which the
  // C layer runs before BufferFromHostBuffer.
  Status status = ResolveDestinationDevice("BufferFromHostBuffer", device(0), pinned).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "BufferFromHostBuffer: memory PJRTKIT_1:pinned_host is not addressable by device "
            "PJRTKIT_0; only memories of that device are accepted");
  EXPECT_EQ(*ResolveDestinationDevice("BufferFromHostBuffer", nullptr, pinned), device(1));
}

TEST_F(XlaCpuBufferTest, CopyToDeviceAndMemory) {
  std::vector<float> values = {9, 8, 7, 6};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, values, {2, 2}, device(0));
  ASSERT_NE(buffer, nullptr);
  StatusOr<std::unique_ptr<Buffer>> copy = buffer->CopyToDevice(device(2));
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ((*copy)->device(), device(2));
  EXPECT_EQ((*copy)->memory(), device(2)->default_memory());
  EXPECT_EQ(Download<float>(copy->get(), 4), values);
  Memory* host = MemoryOfKind(device(0), "unpinned_host");
  ASSERT_NE(host, nullptr);
  StatusOr<std::unique_ptr<Buffer>> on_host = buffer->CopyToMemory(host);
  ASSERT_TRUE(on_host.ok()) << on_host.status().ToString();
  EXPECT_EQ((*on_host)->memory(), host);
  EXPECT_EQ(Download<float>(on_host->get(), 4), values);
  StatusOr<std::unique_ptr<Buffer>> back = (*on_host)->CopyToMemory(device(0)->default_memory());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Download<float>(back->get(), 4), values);
  EXPECT_EQ(buffer->CopyToDevice(nullptr).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(XlaCpuBufferTest, HostLayoutColumnMajor) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, values, {2, 3}, device(0));
  ASSERT_NE(buffer, nullptr);
  MemoryLayout column_major;
  column_major.minor_to_major = {0, 1};
  std::vector<float> out(6);
  StatusOr<std::shared_ptr<Event>> event = buffer->ToHostBuffer(out.data(), 24, &column_major);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  ASSERT_TRUE((*event)->Await().ok());
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(*buffer->HostBufferSize(&column_major), 24u);
  // Row-major given explicitly is the plain path.
  MemoryLayout row_major;
  row_major.minor_to_major = {1, 0};
  EXPECT_EQ(*buffer->HostBufferSize(&row_major), 24u);
  event = buffer->ToHostBuffer(out.data(), 24, &row_major);
  ASSERT_TRUE(event.ok() && (*event)->Await().ok());
  EXPECT_EQ(out, values);
  MemoryLayout tiled = row_major;
  tiled.tiles = {{2}};
  EXPECT_EQ(buffer->ToHostBuffer(out.data(), 24, &tiled).status().code(),
            StatusCode::kUnimplemented);
  MemoryLayout bad;
  bad.minor_to_major = {0, 0};
  EXPECT_EQ(buffer->ToHostBuffer(out.data(), 24, &bad).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(XlaCpuBufferTest, HostLayoutPermutes3D) {
  // s32[2,3,4] with element (i, j, k) = 100 i + 10 j + k; host layout minor_to_major {1, 2, 0}:
  // dimension 1 fastest, then 2, then 0.
  std::vector<int32_t> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) values.push_back(100 * i + 10 * j + k);
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kS32, values, {2, 3, 4}, device(1));
  ASSERT_NE(buffer, nullptr);
  MemoryLayout layout;
  layout.minor_to_major = {1, 2, 0};
  std::vector<int32_t> out(24, -1);
  StatusOr<std::shared_ptr<Event>> event =
      buffer->ToHostBuffer(out.data(), out.size() * sizeof(int32_t), &layout);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  ASSERT_TRUE((*event)->Await().ok());
  std::vector<int32_t> expected(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected[j + 3 * (k + 4 * i)] = 100 * i + 10 * j + k;
  EXPECT_EQ(out, expected);
  EXPECT_EQ(buffer->ToHostBuffer(out.data(), 8, &layout).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(XlaCpuBufferTest, RawAccess) {
  std::vector<float> values = {10, 20, 30, 40};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, values, {4}, device(0));
  ASSERT_NE(buffer, nullptr);
  float raw[2] = {0, 0};
  StatusOr<std::shared_ptr<Event>> event = buffer->CopyRawToHost(raw, 4, 8);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  ASSERT_TRUE((*event)->Await().ok());
  EXPECT_EQ(raw[0], 20);
  EXPECT_EQ(raw[1], 30);
  EXPECT_EQ(buffer->CopyRawToHost(raw, 12, 8).status().code(), StatusCode::kOutOfRange);
  StatusOr<uintptr_t> pointer = buffer->UnsafePointer();
  ASSERT_TRUE(pointer.ok()) << pointer.status().ToString();
  ASSERT_NE(*pointer, 0u);
  float direct[4];
  std::memcpy(direct, reinterpret_cast<const void*>(*pointer), sizeof(direct));
  EXPECT_EQ(std::vector<float>(direct, direct + 4), values);
  StatusOr<void*> opaque = buffer->OpaqueDeviceMemoryDataPointer();
  ASSERT_TRUE(opaque.ok()) << opaque.status().ToString();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*opaque), *pointer);
  EXPECT_TRUE(buffer->IncreaseExternalReferenceCount().ok());
  EXPECT_EQ(buffer->external_reference_count(), 1);
  EXPECT_TRUE(buffer->DecreaseExternalReferenceCount().ok());
  EXPECT_EQ(buffer->external_reference_count(), 0);
}

TEST_F(XlaCpuBufferTest, CreateUninitializedBuffer) {
  StatusOr<std::unique_ptr<Buffer>> buffer = client_->CreateUninitializedBuffer(
      ElementType::kS32, {3, 2}, device(2)->default_memory());
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_EQ((*buffer)->element_type(), ElementType::kS32);
  EXPECT_EQ((*buffer)->dimensions(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*buffer)->device(), device(2));
  EXPECT_EQ(*(*buffer)->OnDeviceSizeInBytes(), 24u);
}

TEST_F(XlaCpuBufferTest, UsesOfADeletedBufferFail) {
  std::vector<float> values = {1, 2};
  std::unique_ptr<Buffer> buffer = Upload(client_, ElementType::kF32, values, {2}, device(0));
  ASSERT_NE(buffer, nullptr);
  buffer->Delete();
  EXPECT_TRUE(buffer->IsDeleted());
  buffer->Delete();  // A second Delete is harmless.
  float out[2];
  Status status = buffer->ToHostBuffer(out, sizeof(out), nullptr).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "Buffer::ToHostBuffer called on a buffer that was deleted or donated (f32 on "
            "PJRTKIT_0)");
  EXPECT_EQ(buffer->CopyToDevice(device(1)).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->CopyToMemory(device(1)->default_memory()).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->CopyRawToHost(out, 0, 4).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->UnsafePointer().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->OpaqueDeviceMemoryDataPointer().status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->HostBufferSize(nullptr).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->ReadyEvent()->Await().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->IncreaseExternalReferenceCount().code(), StatusCode::kFailedPrecondition);
  // Metadata stays readable.
  EXPECT_EQ(buffer->element_type(), ElementType::kF32);
  EXPECT_EQ(buffer->dimensions(), (std::vector<int64_t>{2}));
  EXPECT_EQ(*buffer->OnDeviceSizeInBytes(), 8u);
  EXPECT_EQ(buffer->device(), device(0));
}

TEST_F(XlaCpuBufferTest, BadArguments) {
  std::vector<float> values = {1, 2, 3, 4};
  HostBufferArgs args;
  args.data = values.data();
  args.type = ElementType::kF32;
  args.dims = {4};
  Status status = client_->BufferFromHostBuffer(args).status();  // No device.
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "BufferFromHostBuffer device is null");
  args.device = device(0);
  args.dims = {4, -1};
  status = client_->BufferFromHostBuffer(args).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "BufferFromHostBuffer: dims[1] is -1; dimensions must be >= 0");
  args.dims = {4};
  args.type = ElementType::kInvalid;
  status = client_->BufferFromHostBuffer(args).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "BufferFromHostBuffer: invalid element type 0");
  // Null data and the byte-stride count are the C layer's checks (PJRT_Client_BufferFromHostBuffer,
  // c_api/buffer_test).
}

TEST_F(XlaCpuBufferTest, MemoryStatsCountLiveDeviceBuffers) {
  Device* d = device(3);
  auto stats = [d]() {
    StatusOr<MemoryStats> s = d->GetMemoryStats();
    EXPECT_TRUE(s.ok());
    return *s;
  };
  EXPECT_EQ(stats().bytes_in_use, 0);
  std::vector<float> six(6, 1.0f), two(2, 2.0f);
  std::unique_ptr<Buffer> a = Upload(client_, ElementType::kF32, six, {6}, d);
  EXPECT_EQ(stats().bytes_in_use, 24);
  std::unique_ptr<Buffer> b = Upload(client_, ElementType::kF32, two, {2}, d);
  EXPECT_EQ(stats().bytes_in_use, 32);
  // Host memories do not count.
  std::unique_ptr<Buffer> host =
      Upload(client_, ElementType::kF32, six, {6}, nullptr, MemoryOfKind(d, "pinned_host"));
  EXPECT_EQ(stats().bytes_in_use, 32);
  a->Delete();
  EXPECT_EQ(stats().bytes_in_use, 8);
  a.reset();  // Destroying a deleted buffer does not count it twice.
  EXPECT_EQ(stats().bytes_in_use, 8);
  StatusOr<std::unique_ptr<Buffer>> copy = b->CopyToDevice(d);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(stats().bytes_in_use, 16);
  b.reset();
  copy->reset();
  MemoryStats final_stats = stats();
  EXPECT_EQ(final_stats.bytes_in_use, 0);
  EXPECT_EQ(final_stats.peak_bytes_in_use, 32);
  EXPECT_EQ(final_stats.num_allocs, 3);
  EXPECT_EQ(final_stats.largest_alloc_size, 24);
  // The rest of what jaxlib's memory_stats() shows: the device's equal part of the host's memory
  // as the limit (the limits add up to what exists), nothing reserved, and the pool's kept
  // blocks (none of this test's buffers went through the pool).
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  ASSERT_GT(physical, 0);
  const int64_t share = physical / static_cast<int64_t>(client_->addressable_devices().size());
  EXPECT_EQ(client_->addressable_devices().size(), 4u);
  EXPECT_EQ(final_stats.bytes_limit, share);
  EXPECT_EQ(final_stats.bytes_reservable_limit, share);
  EXPECT_EQ(final_stats.bytes_reserved, 0);
  EXPECT_EQ(final_stats.peak_bytes_reserved, 0);
  EXPECT_EQ(final_stats.largest_free_block_bytes, share);
  const int64_t pooled = static_cast<int64_t>(
      static_cast<WrappedClient*>(client_)->host_buffer_pool()->stats().cached_bytes);
  EXPECT_EQ(final_stats.pool_bytes, pooled);
  EXPECT_FALSE(final_stats.peak_pool_bytes.has_value());
  std::unique_ptr<Buffer> c = Upload(client_, ElementType::kF32, six, {6}, d);
  EXPECT_EQ(stats().largest_free_block_bytes, share - 24);
  EXPECT_EQ(stats().pool_bytes, pooled + 24);
}

TEST_F(XlaCpuBufferTest, PoolBytesCountKeptBlocks) {
  Device* d = device(2);
  HostBufferPool* pool = static_cast<WrappedClient*>(client_)->host_buffer_pool().get();
  // 256 KiB + 4 bytes, misaligned by 4: copied through the pool into a 260 KiB block.
  std::vector<float> big((1 << 16) + 2, 1.0f);
  HostBufferArgs args;
  args.data = big.data() + 1;
  args.type = ElementType::kF32;
  args.dims = {(1 << 16) + 1};
  args.semantics = HostBufferSemantics::kImmutableZeroCopy;
  args.device = d;
  const int64_t before_in_use = d->GetMemoryStats()->bytes_in_use;
  StatusOr<HostBufferResult> put = client_->BufferFromHostBuffer(args);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  const int64_t kept = static_cast<int64_t>(pool->stats().cached_bytes);
  StatusOr<MemoryStats> held = d->GetMemoryStats();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->bytes_in_use, before_in_use + (1 << 18) + 4);
  EXPECT_EQ(held->pool_bytes, held->bytes_in_use + kept);
  put->buffer.reset();
  StatusOr<MemoryStats> released = d->GetMemoryStats();
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(released->bytes_in_use, before_in_use);
  EXPECT_EQ(static_cast<int64_t>(pool->stats().cached_bytes), kept + (1 << 18) + 4096);
  EXPECT_EQ(released->pool_bytes, before_in_use + kept + (1 << 18) + 4096);
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
