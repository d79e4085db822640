// PJRT_Client_CreateBuffersForAsyncHostToDevice and PJRT_AsyncHostToDeviceTransferManager_*.

// C++ standard library.
#include <cstdint>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/test_util.h"
#include "xla_plugin/c_api/testing/fake_transfer_manager.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// Fixture: a transfer of two buffers (f32[2,2] and s8[3]) into device 0's default memory.
class TransferManagerTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    specs_[0] = Spec(PJRT_Buffer_Type_F32, dims0_);
    specs_[1] = Spec(PJRT_Buffer_Type_S8, dims1_);
    create_ = MakeArgs<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>();
    create_.client = client_;
    create_.shape_specs = specs_;
    create_.num_shape_specs = 2;
    create_.memory = DefaultMemory(devices_[0]);
  }
  void TearDown() override {
    if (manager_ != nullptr) {
      auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
      destroy.transfer_manager = manager_;
      EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
    }
    ClientTest::TearDown();
  }

  static PJRT_ShapeSpec Spec(PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
    auto spec = MakeArgs<PJRT_ShapeSpec>();
    spec.element_type = type;
    spec.dims = dims.data();
    spec.num_dims = dims.size();
    return spec;
  }

  PJRT_Memory* DefaultMemory(PJRT_Device* device) {
    auto args = MakeArgs<PJRT_Device_DefaultMemory_Args>();
    args.device = device;
    EXPECT_PJRT_OK(api_->PJRT_Device_DefaultMemory(&args));
    return args.memory;
  }

  // Creates the manager from create_; fails the test on error.
  void Create() {
    ASSERT_PJRT_OK(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_));
    manager_ = create_.transfer_manager;
    ASSERT_NE(manager_, nullptr);
  }

  // Sends `size` bytes of `data` to byte `offset` of buffer `index`.
  ErrorInfo Send(int index, const void* data, int64_t offset, int64_t size, bool last) {
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_TransferData_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    args.data = data;
    args.offset = offset;
    args.transfer_size = size;
    args.is_last_transfer = last;
    ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferData(&args));
    if (info.ok) {
      EXPECT_NE(args.done_with_h2d_transfer, nullptr);
      EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
    }
    return info;
  }

  // Retrieves buffer `index` (nullptr on error, with `info` set).
  PJRT_Buffer* Retrieve(int index, ErrorInfo* info = nullptr) {
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    ErrorInfo result = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args));
    if (info != nullptr) *info = result;
    return result.ok ? args.buffer_out : nullptr;
  }

  // The buffer's ready event, awaited and destroyed.
  ErrorInfo AwaitReady(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_->PJRT_Buffer_ReadyEvent(&args));
    return AwaitAndDestroy(args.event);
  }

  const std::vector<int64_t> dims0_ = {2, 2};
  const std::vector<int64_t> dims1_ = {3};
  PJRT_ShapeSpec specs_[2];
  PJRT_Client_CreateBuffersForAsyncHostToDevice_Args create_;
  PJRT_AsyncHostToDeviceTransferManager* manager_ = nullptr;
};

TEST_F(TransferManagerTest, CountSizesAndDevice) {
  Create();
  auto count = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args>();
  count.transfer_manager = manager_;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_BufferCount(&count));
  EXPECT_EQ(count.buffer_count, 2u);
  auto size = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args>();
  size.transfer_manager = manager_;
  size.buffer_index = 0;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
  EXPECT_EQ(size.buffer_size, 16u);
  size.buffer_index = 1;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
  EXPECT_EQ(size.buffer_size, 3u);
  size.buffer_index = 2;
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_BufferSize: buffer_index 2 is out of range; "
            "the transfer has 2 buffer(s)");
  auto device = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Device_Args>();
  device.transfer_manager = manager_;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Device(&device));
  EXPECT_EQ(device.device_out, devices_[0]);
}

TEST_F(TransferManagerTest, ChunksArriveBeforeAndAfterRetrieval) {
  Create();
  // Buffer 0: retrieved first, then filled in two chunks.
  PJRT_Buffer* first = Retrieve(0);
  ASSERT_NE(first, nullptr);
  const std::vector<float> values = {1.5f, -2, 3, 4};
  ASSERT_TRUE(Send(0, values.data(), 0, 8, false).ok);
  ASSERT_TRUE(Send(0, values.data() + 2, 8, 8, true).ok);
  EXPECT_TRUE(AwaitReady(first).ok);
  EXPECT_EQ(ToHostF32(first), values);
  // Buffer 1: filled, then retrieved.
  const std::vector<int8_t> bytes = {7, -8, 9};
  ASSERT_TRUE(Send(1, bytes.data(), 0, 3, true).ok);
  PJRT_Buffer* second = Retrieve(1);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(AwaitReady(second).ok);
  auto type = MakeArgs<PJRT_Buffer_ElementType_Args>();
  type.buffer = second;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_S8);
  auto dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  dims.buffer = first;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims), dims0_);
  // Retrieved buffers outlive the manager.
  auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
  destroy.transfer_manager = manager_;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
  manager_ = nullptr;
  EXPECT_EQ(ToHostF32(first), values);
  DestroyBuffer(first);
  DestroyBuffer(second);
}

TEST_F(TransferManagerTest, SetBufferErrorReachesTheReadyEventAndReads) {
  Create();
  auto fail = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args>();
  fail.transfer_manager = manager_;
  fail.buffer_index = 1;
  fail.error_code = PJRT_Error_Code_DATA_LOSS;
  const std::string message = "injected";
  fail.error_message = message.data();
  fail.error_message_size = message.size();
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&fail));
  PJRT_Buffer* buffer = Retrieve(1);
  ASSERT_NE(buffer, nullptr);
  ErrorInfo ready = AwaitReady(buffer);
  EXPECT_EQ(ready.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_EQ(ready.message, "injected");
  std::vector<int8_t> out(3);
  auto read = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  read.src = buffer;
  read.dst = out.data();
  read.dst_size = out.size();
  ErrorInfo read_info = Consume(api_->PJRT_Buffer_ToHostBuffer(&read));
  EXPECT_EQ(read_info.code, PJRT_Error_Code_DATA_LOSS);
  // A second error, or data after the error, is refused by the fake.
  EXPECT_FALSE(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&fail)).ok);
  // error_code OK is not an error.
  fail.buffer_index = 0;
  fail.error_code = PJRT_Error_Code_OK;
  ErrorInfo ok_code = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&fail));
  EXPECT_EQ(ok_code.code, PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyBuffer(buffer);
}

TEST_F(TransferManagerTest, BadTransfersAreErrors) {
  Create();
  const std::vector<float> values(8, 1.0f);
  ErrorInfo past_end = Send(0, values.data(), 8, 16, true);
  EXPECT_EQ(past_end.code, PJRT_Error_Code_OUT_OF_RANGE);
  ErrorInfo negative = Send(0, values.data(), -1, 4, false);
  EXPECT_EQ(negative.code, PJRT_Error_Code_INVALID_ARGUMENT);
  ErrorInfo null_data = Send(0, nullptr, 0, 4, false);
  EXPECT_EQ(null_data.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(null_data.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferData: args->data is null");
  ErrorInfo index = Send(-1, values.data(), 0, 4, false);
  EXPECT_EQ(index.code, PJRT_Error_Code_INVALID_ARGUMENT);
  PJRT_Buffer* once = Retrieve(0);
  ASSERT_NE(once, nullptr);
  ErrorInfo twice;
  EXPECT_EQ(Retrieve(0, &twice), nullptr);
  EXPECT_EQ(twice.code, PJRT_Error_Code_FAILED_PRECONDITION);
  DestroyBuffer(once);
}

TEST_F(TransferManagerTest, AddMetadataReachesTheDevice) {
  Create();
  std::vector<PJRT_NamedValue> metadata = {IntOption("priority", 3)};
  auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args>();
  args.transfer_manager = manager_;
  args.transfer_metadata = metadata.data();
  args.num_metadata = metadata.size();
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&args));
  testing::FakeTransferManager* fake = Fake(client_)->last_transfer_manager();
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(std::get<int64_t>(fake->metadata().at("priority")), 3);
  args.transfer_metadata = nullptr;  // With num_metadata 1.
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(TransferManagerTest, CreateValidatesItsArguments) {
  create_.memory = nullptr;
  ErrorInfo no_memory = Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_));
  EXPECT_EQ(no_memory.message,
            "PJRT_Client_CreateBuffersForAsyncHostToDevice: args->memory is null");
  create_.memory = DefaultMemory(devices_[0]);
  create_.num_shape_specs = 0;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  create_.num_shape_specs = 2;
  specs_[1].element_type = PJRT_Buffer_Type_INVALID;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  specs_[1].element_type = PJRT_Buffer_Type_S8;
  const int64_t negative[] = {2, -1};
  specs_[0].dims = negative;
  ErrorInfo bad_dims = Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_));
  EXPECT_EQ(bad_dims.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(bad_dims.message,
            "PJRT_Client_CreateBuffersForAsyncHostToDevice: args->shape_specs[0].dims[1] is -1; "
            "dimensions must be >= 0");
  specs_[0].dims = dims0_.data();
  create_.num_device_layouts = 1;  // One layout for two specs.
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  // A memory of another client.
  PJRT_Client* other = CreateClient();
  create_.num_device_layouts = 0;
  create_.memory = DefaultMemory(AddressableDevices(other)[0]);
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create_)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyClient(other);
}

TEST_F(TransferManagerTest, DestroyNullIsFine) {
  auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
