// Asynchronous host-to-device transfers (WrappedTransferManager) and views of foreign memory
// (WrappedClient::CreateViewOfDeviceBuffer) against the real XLA:CPU plugin.
#include "xla_plugin/plugin_wrapper/wrapped_transfer_manager.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::WrappedClient;
using ::pjrtkit::plugin_wrapper::WrappedTransferManager;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;

class XlaCpuTransferTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(2).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  Device* device(int id) { return client_->devices()[id]; }

  // A transfer of s32[6] and f32[2] into `device(1)`'s default memory.
  std::unique_ptr<AsyncHostToDeviceTransferManager> NewTransfer() {
    StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> manager =
        client_->CreateBuffersForAsyncHostToDevice(
            {{ElementType::kS32, {6}}, {ElementType::kF32, {2}}}, {},
            device(1)->default_memory());
    EXPECT_TRUE(manager.ok()) << manager.status().ToString();
    return manager.ok() ? std::move(manager).value() : nullptr;
  }

  static Client* client_;
};

Client* XlaCpuTransferTest::client_ = nullptr;

TEST_F(XlaCpuTransferTest, ChunksFillTheBuffers) {
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager = NewTransfer();
  ASSERT_NE(manager, nullptr);
  EXPECT_EQ(manager->buffer_count(), 2u);
  EXPECT_EQ(manager->device(), device(1));
  StatusOr<size_t> size = manager->buffer_size(0);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 24u);
  EXPECT_EQ(manager->buffer_size(2).status().code(), StatusCode::kInvalidArgument);
  // Retrieve first, then send two chunks.
  StatusOr<std::unique_ptr<Buffer>> ints = manager->RetrieveBuffer(0);
  ASSERT_TRUE(ints.ok()) << ints.status().ToString();
  const std::vector<int32_t> data = {3, 1, 4, 1, 5, 9};
  for (int half = 0; half < 2; ++half) {
    StatusOr<std::shared_ptr<Event>> done =
        manager->TransferData(0, data.data() + 3 * half, 12 * half, 12, half == 1);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_TRUE((*done)->Await().ok());
  }
  EXPECT_TRUE((*ints)->ReadyEvent()->Await().ok());
  EXPECT_EQ((*ints)->device(), device(1));
  EXPECT_EQ((*ints)->dimensions(), std::vector<int64_t>{6});
  EXPECT_EQ(Download<int32_t>(ints->get(), 6), data);
  // Send first, then retrieve.
  const std::vector<float> floats = {0.5f, -2.0f};
  StatusOr<std::shared_ptr<Event>> done = manager->TransferData(1, floats.data(), 0, 8, true);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  StatusOr<std::unique_ptr<Buffer>> second = manager->RetrieveBuffer(1);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  manager.reset();  // Buffers outlive the manager.
  EXPECT_EQ(Download<float>(second->get(), 2), floats);
}

TEST_F(XlaCpuTransferTest, PendingReadsOfABufferOutliveItsDeletionAndDestruction) {
  // A buffer whose ready event has not fired: reads started on it wait for the data, also when
  // the buffer is deleted and destroyed before the data arrives.
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager = NewTransfer();
  ASSERT_NE(manager, nullptr);
  StatusOr<std::unique_ptr<Buffer>> ints = manager->RetrieveBuffer(0);
  ASSERT_TRUE(ints.ok()) << ints.status().ToString();
  std::shared_ptr<Event> ready = (*ints)->ReadyEvent();
  EXPECT_FALSE(ready->IsReady());
  std::vector<int32_t> out(6, -1);
  StatusOr<std::shared_ptr<Event>> read = (*ints)->ToHostBuffer(out.data(), 24, nullptr);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::vector<int32_t> raw(6, -1);
  StatusOr<std::shared_ptr<Event>> raw_read = (*ints)->CopyRawToHost(raw.data(), 0, 24);
  ASSERT_TRUE(raw_read.ok()) << raw_read.status().ToString();
  StatusOr<std::unique_ptr<Buffer>> copy = (*ints)->CopyToDevice(device(0));
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  (*ints)->Delete();
  ints->reset();
  const std::vector<int32_t> data = {2, 7, 1, 8, 2, 8};
  StatusOr<std::shared_ptr<Event>> sent = manager->TransferData(0, data.data(), 0, 24, true);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_TRUE((*sent)->Await().ok());
  EXPECT_TRUE(ready->Await().ok());
  EXPECT_TRUE((*read)->Await().ok());
  EXPECT_EQ(out, data);
  EXPECT_TRUE((*raw_read)->Await().ok());
  EXPECT_EQ(raw, data);
  EXPECT_EQ(Download<int32_t>(copy->get(), 6), data);
  std::vector<float> floats = {1.0f, 2.0f};
  EXPECT_TRUE(manager->TransferData(1, floats.data(), 0, 8, true).ok());
}

TEST_F(XlaCpuTransferTest, SetBufferErrorFailsTheBuffer) {
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager = NewTransfer();
  ASSERT_NE(manager, nullptr);
  Status failed = manager->SetBufferError(1, Status(StatusCode::kDataLoss, "injected"));
  ASSERT_TRUE(failed.ok()) << failed.ToString();
  StatusOr<std::unique_ptr<Buffer>> buffer = manager->RetrieveBuffer(1);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  Status ready = (*buffer)->ReadyEvent()->Await();
  EXPECT_EQ(ready.code(), StatusCode::kDataLoss);
  EXPECT_NE(ready.message().find("injected"), std::string::npos) << ready.ToString();
  EXPECT_EQ(manager->SetBufferError(0, OkStatus()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(manager->TransferData(7, nullptr, 0, 0, true).status().code(),
            StatusCode::kInvalidArgument);
  // Finish buffer 0 so the manager can go.
  std::vector<int32_t> zeros(6, 0);
  EXPECT_TRUE(manager->TransferData(0, zeros.data(), 0, 24, true).ok());
}

TEST_F(XlaCpuTransferTest, ViewAliasesHostMemoryAndCallsBack) {
  alignas(64) float data[4] = {1, 2, 3, 4};
  std::atomic<int> deleted{0};
  DeviceBufferViewArgs args;
  args.data = data;
  args.type = ElementType::kF32;
  args.dims = {2, 2};
  args.device = device(0);
  args.on_delete = [&deleted] { ++deleted; };
  StatusOr<std::unique_ptr<Buffer>> view = client_->CreateViewOfDeviceBuffer(args);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ((*view)->device(), device(0));
  EXPECT_EQ((*view)->dimensions(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Download<float>(view->get(), 4), (std::vector<float>{1, 2, 3, 4}));
  data[3] = 40;  // Not a copy.
  EXPECT_EQ(Download<float>(view->get(), 4), (std::vector<float>{1, 2, 3, 40}));
  StatusOr<uintptr_t> pointer = (*view)->UnsafePointer();
  ASSERT_TRUE(pointer.ok()) << pointer.status().ToString();
  EXPECT_EQ(*pointer, reinterpret_cast<uintptr_t>(data));
  EXPECT_EQ(deleted.load(), 0);
  view->reset();
  // XLA:CPU calls back when it lets go of the memory: at once, or (about 1 run in 6) a moment
  // later on its own thread, when the usage its last ToHostBuffer held ends after that copy's
  // event fired. Late is safe (the memory is kept longer); never is not.
  for (int i = 0; i < 5000 && deleted.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(deleted.load(), 1);
}

TEST_F(XlaCpuTransferTest, ViewErrors) {
  float data[1] = {0};
  DeviceBufferViewArgs args;
  args.data = data;
  args.type = ElementType::kF32;
  args.dims = {1};
  args.device = nullptr;
  EXPECT_EQ(client_->CreateViewOfDeviceBuffer(args).status().message(),
            "CreateViewOfDeviceBuffer device is null");
  // Null data is the C layer's check (args->device_buffer_ptr, c_api/buffer_view_test).
}

TEST_F(XlaCpuTransferTest, ExecuteContextUserDataIsForwarded) {
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded = client_->Compile(
      Program{"mlir",
              "module @id { func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { "
              "return %a : tensor<2xf32> } }"},
      "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::unique_ptr<Buffer> arg =
      testing::Upload(client_, ElementType::kF32, std::vector<float>{1, 2}, {2}, device(0));
  ExecuteContext context;
  ExecuteOptions options;
  options.context = &context;
  StatusOr<ExecuteResult> empty = (*loaded)->Execute({{arg.get()}}, options);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();  // An empty context changes nothing.
  EXPECT_EQ(Download<float>(empty->outputs[0][0].get(), 2), (std::vector<float>{1, 2}));
  int value = 1;
  ASSERT_TRUE(context.AddUserData(9, &value).ok());
  // Forwarded to XLA:CPU (inner_ffi_test shows a handler reading it); nothing here reads it.
  StatusOr<ExecuteResult> with_data = (*loaded)->Execute({{arg.get()}}, options);
  ASSERT_TRUE(with_data.ok()) << with_data.status().ToString();
  EXPECT_EQ(Download<float>(with_data->outputs[0][0].get(), 2), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
