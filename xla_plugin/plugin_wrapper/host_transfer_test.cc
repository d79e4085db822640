// Host transfers of the reference device against the real XLA:CPU plugin: data XLA:CPU can
// alias is aliased (zero copy), other large data is copied once into a pooled block that
// XLA:CPU aliases, and ToHostBuffer writes into the caller's memory.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/pooled_host_copy.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::HostBufferPool;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::ClientOptions;
using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;

constexpr int64_t kElements = 32768;  // 128 KiB of f32: above XLA:CPU's 64 KiB pooling minimum.

// Host memory at a chosen offset from a 64-byte boundary.
class HostArray {
 public:
  HostArray(size_t bytes, size_t misalignment)
      : raw_(static_cast<char*>(std::aligned_alloc(64, bytes + 64))),
        data_(reinterpret_cast<float*>(raw_ + misalignment)) {}
  ~HostArray() { std::free(raw_); }
  float* data() const { return data_; }

 private:
  char* raw_;
  float* data_;
};

class HostTransferTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(1).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(client_, nullptr);
    ASSERT_NE(pool(), nullptr);
  }

  static HostBufferPool* pool() {
    return static_cast<WrappedClient*>(client_)->host_buffer_pool().get();
  }
  static Device* device() { return client_->devices()[0]; }

  // Uploads f32[`count`] from `data` with `semantics`.
  static HostBufferResult Put(const float* data, int64_t count, HostBufferSemantics semantics) {
    HostBufferArgs args;
    args.data = data;
    args.type = ElementType::kF32;
    args.dims = {count};
    args.semantics = semantics;
    args.device = device();
    StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? std::move(result).value() : HostBufferResult();
  }

  // The pool's cached_bytes once it equals `expected`, or after 5 s. XLA:CPU gives a pooled
  // block back when it lets go of it: at once, or (a few runs in a hundred) a moment later on its
  // own thread, when the usage a copy or an execution held ends after that operation's event
  // fired.
  static size_t CachedBytesOnceEqual(size_t expected) {
    for (int i = 0; i < 5000 && pool()->stats().cached_bytes != expected; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pool()->stats().cached_bytes;
  }

  static uintptr_t Address(Buffer* buffer) {
    StatusOr<uintptr_t> pointer = buffer->UnsafePointer();
    EXPECT_TRUE(pointer.ok()) << pointer.status().ToString();
    return pointer.ok() ? *pointer : 0;
  }

  static Client* client_;
};

Client* HostTransferTest::client_ = nullptr;

TEST_F(HostTransferTest, AlignedZeroCopyDataIsAliasedUntilTheBufferGoes) {
  HostArray host(kElements * 4, 0);
  for (int64_t i = 0; i < kElements; ++i) host.data()[i] = static_cast<float>(i);
  const HostBufferPool::Stats before = pool()->stats();
  HostBufferResult result = Put(host.data(), kElements, HostBufferSemantics::kImmutableZeroCopy);
  ASSERT_NE(result.buffer, nullptr);
  EXPECT_EQ(Address(result.buffer.get()), reinterpret_cast<uintptr_t>(host.data()));
  EXPECT_EQ(pool()->stats().allocated, before.allocated);  // No copy, no block.
  // The host memory is the buffer's: the caller may not reuse it while the buffer lives.
  EXPECT_FALSE(result.done_with_host_buffer->IsReady());
  result.buffer.reset();
  EXPECT_TRUE(result.done_with_host_buffer->Await().ok());
}

TEST_F(HostTransferTest, MisalignedDataIsCopiedOnceIntoAPooledBlock) {
  HostArray host(kElements * 4, 16);  // Where glibc puts large numpy arrays: no aliasing.
  for (int64_t i = 0; i < kElements; ++i) host.data()[i] = static_cast<float>(i);
  const HostBufferPool::Stats before = pool()->stats();
  HostBufferResult first = Put(host.data(), kElements, HostBufferSemantics::kImmutableZeroCopy);
  ASSERT_NE(first.buffer, nullptr);
  // Copied before returning: the host memory is free at once and the data is the copy's.
  EXPECT_TRUE(first.done_with_host_buffer->IsReady());
  EXPECT_TRUE(first.buffer->ReadyEvent()->IsReady());
  const uintptr_t block = Address(first.buffer.get());
  EXPECT_NE(block, reinterpret_cast<uintptr_t>(host.data()));
  EXPECT_EQ(block % HostBufferPool::kAlignment, 0u);
  EXPECT_EQ(pool()->stats().allocated, before.allocated + 1);
  host.data()[0] = -1.0f;
  std::vector<float> got = Download<float>(first.buffer.get(), kElements);
  ASSERT_EQ(got.size(), static_cast<size_t>(kElements));
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[kElements - 1], static_cast<float>(kElements - 1));

  // Destroying the buffer gives the block back; the next copy of that size reuses it.
  first.buffer.reset();
  EXPECT_EQ(CachedBytesOnceEqual(before.cached_bytes + kElements * 4),
            before.cached_bytes + kElements * 4);
  HostBufferResult second =
      Put(host.data(), kElements, HostBufferSemantics::kImmutableOnlyDuringCall);
  ASSERT_NE(second.buffer, nullptr);
  EXPECT_EQ(Address(second.buffer.get()), block);
  EXPECT_EQ(pool()->stats().reused, before.reused + 1);
  EXPECT_EQ(Download<float>(second.buffer.get(), kElements)[0], -1.0f);
}

TEST_F(HostTransferTest, AlignedDataIsCopiedWhenTheSemanticsForbidAliasing) {
  HostArray host(kElements * 4, 0);
  for (int64_t i = 0; i < kElements; ++i) host.data()[i] = 2.0f;
  HostBufferResult result =
      Put(host.data(), kElements, HostBufferSemantics::kImmutableOnlyDuringCall);
  ASSERT_NE(result.buffer, nullptr);
  EXPECT_NE(Address(result.buffer.get()), reinterpret_cast<uintptr_t>(host.data()));
  EXPECT_TRUE(result.done_with_host_buffer->IsReady());
  host.data()[5] = 3.0f;
  EXPECT_EQ(Download<float>(result.buffer.get(), kElements), std::vector<float>(kElements, 2.0f));
}

TEST_F(HostTransferTest, SmallAndStridedDataBypassThePool) {
  const HostBufferPool::Stats before = pool()->stats();
  std::vector<float> small(256, 1.5f);  // 1 KiB.
  HostBufferResult a = Put(small.data(), 256, HostBufferSemantics::kImmutableOnlyDuringCall);
  ASSERT_NE(a.buffer, nullptr);
  EXPECT_EQ(Download<float>(a.buffer.get(), 256), small);
  // A column-major 256x128 f32 array (128 KiB): XLA:CPU transposes it itself.
  std::vector<float> column_major(256 * 128);
  for (int64_t r = 0; r < 256; ++r) {
    for (int64_t c = 0; c < 128; ++c) column_major[c * 256 + r] = static_cast<float>(r * 128 + c);
  }
  HostBufferArgs args;
  args.data = column_major.data();
  args.type = ElementType::kF32;
  args.dims = {256, 128};
  args.byte_strides = std::vector<int64_t>{4, 256 * 4};
  args.device = device();
  StatusOr<HostBufferResult> b = client_->BufferFromHostBuffer(args);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(b->done_with_host_buffer->Await().ok());
  std::vector<float> row_major = Download<float>(b->buffer.get(), 256 * 128);
  ASSERT_EQ(row_major.size(), 256u * 128u);
  EXPECT_EQ(row_major[1], 1.0f);
  EXPECT_EQ(row_major[128], 128.0f);
  EXPECT_EQ(row_major[256 * 128 - 1], 256.0f * 128.0f - 1.0f);
  EXPECT_EQ(pool()->stats().allocated, before.allocated);
  EXPECT_EQ(pool()->stats().reused, before.reused);
}

TEST_F(HostTransferTest, ToHostBufferWritesIntoTheCallersMemory) {
  std::vector<float> values(kElements);
  for (int64_t i = 0; i < kElements; ++i) values[i] = static_cast<float>(3 * i);
  HostBufferResult result =
      Put(values.data(), kElements, HostBufferSemantics::kImmutableOnlyDuringCall);
  ASSERT_NE(result.buffer, nullptr);
  HostArray dst(kElements * 4, 16);
  std::memset(dst.data(), 0, kElements * 4);
  StatusOr<std::shared_ptr<Event>> event =
      result.buffer->ToHostBuffer(dst.data(), kElements * 4, /*host_layout=*/nullptr);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  ASSERT_TRUE((*event)->Await().ok());
  EXPECT_EQ(dst.data()[1], 3.0f);
  EXPECT_EQ(dst.data()[kElements - 1], static_cast<float>(3 * (kElements - 1)));
}

TEST_F(HostTransferTest, DonatedPooledBlockReturnsWhenTheOutputGoes) {
  const std::string code =
      "module @donate { func.func @main(%a: tensor<32768xf32> {tf.aliasing_output = 0 : i32}) "
      "-> tensor<32768xf32> { %0 = stablehlo.add %a, %a : tensor<32768xf32> "
      "return %0 : tensor<32768xf32> } }";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", code}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  HostArray host(kElements * 4, 16);
  for (int64_t i = 0; i < kElements; ++i) host.data()[i] = 1.0f;
  HostBufferResult input = Put(host.data(), kElements, HostBufferSemantics::kImmutableZeroCopy);
  ASSERT_NE(input.buffer, nullptr);
  const uintptr_t block = Address(input.buffer.get());
  const size_t cached = pool()->stats().cached_bytes;
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{input.buffer.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(input.buffer->IsDeleted());  // Donated.
  Buffer* output = result->outputs[0][0].get();
  EXPECT_EQ(Address(output), block);       // Computed in place, in the pooled block.
  EXPECT_EQ(Download<float>(output, kElements), std::vector<float>(kElements, 2.0f));
  input.buffer.reset();
  EXPECT_EQ(pool()->stats().cached_bytes, cached);  // Still the output's.
  result->outputs.clear();
  EXPECT_EQ(CachedBytesOnceEqual(cached + kElements * 4), cached + kElements * 4);
}

TEST(HostTransferOptionTest, PoolCanBeTurnedOff) {
  AttributeMap options = ClientOptions(1);
  options[kHostBufferCacheOption] = int64_t{0};
  StatusOr<std::unique_ptr<Client>> client = XlaCpuFactory::CreateClient(options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ(static_cast<WrappedClient*>(client->get())->host_buffer_pool(), nullptr);
  std::vector<float> values(kElements, 4.0f);
  std::unique_ptr<Buffer> buffer = testing::Upload((*client).get(), ElementType::kF32, values,
                                                   {kElements}, (*client)->devices()[0]);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Download<float>(buffer.get(), kElements), values);

  options[kHostBufferCacheOption] = int64_t{-1};
  EXPECT_EQ(XlaCpuFactory::CreateClient(options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
