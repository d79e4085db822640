// Lifetime audit of the reference device against the real XLA:CPU plugin: the memory of a buffer
// (XLA:CPU's own allocation or a HostBufferPool block) stays valid for every operation that was
// started on it, when the buffer is deleted and destroyed before the operation finishes; pool
// blocks are reused only after XLA:CPU lets go of them. (External references are the C-API
// layer's: see //xla_plugin/c_api:buffer_lifetime_test and the conformance suite.)
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::HostBufferPool;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;

constexpr int64_t kPooled = 262144;  // 1 MiB of f32: copied through the pool when misaligned.
constexpr int64_t kSmall = 12;       // 48 bytes: XLA:CPU's own allocation.

// f32 host data 16 bytes past a 64-byte boundary (as numpy's large arrays are), filled with
// `value`, or with 0.5 * i - 3 when `value` is 0.
class HostData {
 public:
  HostData(int64_t count, float value)
      : raw_(static_cast<char*>(std::aligned_alloc(64, count * 4 + 64))),
        data_(reinterpret_cast<float*>(raw_ + 16)),
        count_(count) {
    for (int64_t i = 0; i < count; ++i) data_[i] = value == 0 ? 0.5f * i - 3 : value;
  }
  ~HostData() { std::free(raw_); }
  HostData(const HostData&) = delete;
  HostData& operator=(const HostData&) = delete;
  const float* data() const { return data_; }
  std::vector<float> values() const { return std::vector<float>(data_, data_ + count_); }

 private:
  char* raw_;
  float* data_;
  int64_t count_;
};

class BufferLifetimeTest : public ::testing::TestWithParam<int64_t> {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(2).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  static Device* device(int id) { return client_->devices()[id]; }
  static HostBufferPool* pool() {
    return static_cast<WrappedClient*>(client_)->host_buffer_pool().get();
  }

  // Uploads `host` (f32[count]) to `device(0)` as jaxlib's device_put does.
  static std::unique_ptr<Buffer> Put(const HostData& host, int64_t count) {
    HostBufferArgs args;
    args.data = host.data();
    args.type = ElementType::kF32;
    args.dims = {count};
    args.semantics = HostBufferSemantics::kImmutableZeroCopy;
    args.device = device(0);
    StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return nullptr;
    EXPECT_TRUE(result->done_with_host_buffer->Await().ok());  // Copied: ready at once.
    return std::move(result->buffer);
  }

  // Four uploads of 7.0f of `count` elements: they take any freed memory of that size (for a
  // pooled size, the block the pool got back last).
  static std::vector<std::unique_ptr<Buffer>> Junk(int64_t count) {
    std::vector<std::unique_ptr<Buffer>> junk;
    HostData sevens(count, 7.0f);
    for (int i = 0; i < 4; ++i) junk.push_back(Put(sevens, count));
    return junk;
  }

  static Client* client_;
};

Client* BufferLifetimeTest::client_ = nullptr;

TEST_P(BufferLifetimeTest, ToHostBufferStartedBeforeDeleteAndDestroyReadsTheData) {
  const int64_t count = GetParam();
  HostData host(count, 0.0f);
  std::unique_ptr<Buffer> buffer = Put(host, count);
  ASSERT_NE(buffer, nullptr);
  std::vector<float> out(count, -1.0f);
  StatusOr<std::shared_ptr<Event>> copied = buffer->ToHostBuffer(out.data(), count * 4, nullptr);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  buffer->Delete();
  buffer.reset();
  std::vector<std::unique_ptr<Buffer>> junk = Junk(count);
  ASSERT_TRUE((*copied)->Await().ok());
  EXPECT_EQ(out, host.values());
}

TEST_P(BufferLifetimeTest, CopyRawToHostStartedBeforeDeleteAndDestroyReadsTheData) {
  const int64_t count = GetParam();
  HostData host(count, 0.0f);
  std::unique_ptr<Buffer> buffer = Put(host, count);
  ASSERT_NE(buffer, nullptr);
  std::vector<float> out(count, -1.0f);
  StatusOr<std::shared_ptr<Event>> copied = buffer->CopyRawToHost(out.data(), 0, count * 4);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  buffer->Delete();
  buffer.reset();
  std::vector<std::unique_ptr<Buffer>> junk = Junk(count);
  ASSERT_TRUE((*copied)->Await().ok());
  EXPECT_EQ(out, host.values());
}

TEST_P(BufferLifetimeTest, CopyToDeviceStartedBeforeDeleteAndDestroyCopiesTheData) {
  const int64_t count = GetParam();
  HostData host(count, 0.0f);
  std::unique_ptr<Buffer> buffer = Put(host, count);
  ASSERT_NE(buffer, nullptr);
  StatusOr<std::unique_ptr<Buffer>> copy = buffer->CopyToDevice(device(1));
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  buffer->Delete();
  buffer.reset();
  std::vector<std::unique_ptr<Buffer>> junk = Junk(count);
  ASSERT_TRUE((*copy)->ReadyEvent()->Await().ok());
  EXPECT_EQ(Download<float>(copy->get(), count), host.values());
}

TEST_P(BufferLifetimeTest, ExecutionStartedBeforeTheArgumentIsDestroyedReadsIt) {
  const int64_t count = GetParam();
  const std::string type = "tensor<" + std::to_string(count) + "xf32>";
  const std::string code = "module @twice { func.func @main(%a: " + type + ") -> " + type +
                           " { %0 = stablehlo.add %a, %a : " + type + " return %0 : " + type +
                           " } }";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", code}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  HostData host(count, 0.0f);
  std::unique_ptr<Buffer> buffer = Put(host, count);
  ASSERT_NE(buffer, nullptr);
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{buffer.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  buffer->Delete();
  buffer.reset();
  std::vector<std::unique_ptr<Buffer>> junk = Junk(count);
  std::vector<float> twice = host.values();
  for (float& v : twice) v *= 2;
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), count), twice);
}

TEST_P(BufferLifetimeTest, APooledBlockReturnsOnceWhenXlaCpuLetsGo) {
  const int64_t count = GetParam();
  HostData host(count, 0.0f);
  std::unique_ptr<Buffer> buffer = Put(host, count);
  ASSERT_NE(buffer, nullptr);
  const size_t cached = pool()->stats().cached_bytes;
  const size_t pooled = count * 4 >= (64 << 10) ? static_cast<size_t>(count) * 4 : 0;
  buffer->Delete();  // XLA:CPU lets go of the memory (at once, or soon on its own thread).
  for (int i = 0; i < 5000 && pool()->stats().cached_bytes != cached + pooled; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(pool()->stats().cached_bytes, cached + pooled);
  buffer.reset();
  EXPECT_EQ(pool()->stats().cached_bytes, cached + pooled);  // Not returned twice.
}

INSTANTIATE_TEST_SUITE_P(Sizes, BufferLifetimeTest, ::testing::Values(kSmall, kPooled),
                         [](const ::testing::TestParamInfo<int64_t>& info) {
                           return info.param == kSmall ? std::string("Small")
                                                       : std::string("Pooled");
                         });

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
