// PJRT_Buffer_CopyRawToHostFuture (the copy issued by the framework's callback, which may bring
// an error) and PJRT_AsyncHostToDeviceTransferManager_TransferLiteral (PJRT C API 0.82+) against
// the fake device.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/new_slots_buffer_fixture.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// ---- PJRT_Buffer_CopyRawToHostFuture ----------------------------------------------------------

// Calls a CopyRawToHostFuture callback as the framework does.
void Fulfil(const PJRT_Buffer_CopyRawToHostFuture_Args& future, void* dst,
            PJRT_Error_Code code = PJRT_Error_Code_OK, const char* message = nullptr,
            size_t struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE) {
  auto ready = MakeArgs<PJRT_Buffer_CopyRawToHostFuture_Callback_Args>();
  ready.struct_size = struct_size;
  ready.callback_data = future.callback_data;
  ready.error_code = code;
  ready.error_message = message;
  ready.error_message_size = message == nullptr ? 0 : std::strlen(message);
  ready.dst = dst;
  future.future_ready_callback(&ready);
}

class CopyRawToHostFutureTest : public NewBufferSlotsTest {
 protected:
  void SetUp() override {
    NewBufferSlotsTest::SetUp();
    buffer_ = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
    ASSERT_NE(buffer_, nullptr);
  }
  void TearDown() override {
    if (buffer_ != nullptr) DestroyBuffer(buffer_);
    NewBufferSlotsTest::TearDown();
  }

  // Args for bytes [offset, offset + size) of buffer_.
  PJRT_Buffer_CopyRawToHostFuture_Args Args(int64_t offset, int64_t size) {
    auto args = MakeArgs<PJRT_Buffer_CopyRawToHostFuture_Args>();
    args.buffer = buffer_;
    args.offset = offset;
    args.transfer_size = size;
    return args;
  }

  PJRT_Buffer* buffer_ = nullptr;  // f32[4] {1, 2, 3, 4} on device 0.
};

TEST_F(CopyRawToHostFutureTest, TheCopyHappensWhenTheDestinationIsReady) {
  auto args = Args(4, 8);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  ASSERT_NE(args.event, nullptr);
  ASSERT_NE(args.callback_data, nullptr);
  ASSERT_NE(args.future_ready_callback, nullptr);
  EXPECT_FALSE(IsReady(args.event));
  float dst[3] = {-1, -1, -1};
  Fulfil(args, dst);
  EXPECT_TRUE(IsReady(args.event));
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  EXPECT_EQ(dst[0], 2);
  EXPECT_EQ(dst[1], 3);
  EXPECT_EQ(dst[2], -1);  // Only transfer_size bytes are written.
}

TEST_F(CopyRawToHostFutureTest, TheEventMayBeDestroyedBeforeTheCallback) {
  auto args = Args(0, 16);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_Event_Destroy(&destroy));
  float dst[4] = {0, 0, 0, 0};
  Fulfil(args, dst);
  EXPECT_EQ(dst[3], 4);
}

TEST_F(CopyRawToHostFutureTest, ACallbackWithAnErrorFailsTheEventAndCopiesNothing) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[1] = {-1};
  Fulfil(args, dst, PJRT_Error_Code_RESOURCE_EXHAUSTED, "no pinned memory left");
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the destination failed: no pinned memory left");
  EXPECT_EQ(dst[0], -1);
  // Without a message.
  args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr, PJRT_Error_Code_CANCELLED);
  info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the destination failed: ");
}

TEST_F(CopyRawToHostFutureTest, ABadCallbackFailsTheEvent) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr);  // OK but no destination.
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the callback's dst is null");
  // A callback struct without dst.
  args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[1] = {-1};
  Fulfil(args, dst, PJRT_Error_Code_OK, nullptr, 40);
  info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the callback's struct_size is 40");
  EXPECT_EQ(dst[0], -1);
  // A zero-byte copy needs no destination.
  args = Args(16, 0);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr);
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
}

TEST_F(CopyRawToHostFutureTest, ABufferDeletedBeforeTheCallbackFailsTheEvent) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer_;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  float dst[1] = {-1};
  Fulfil(args, dst);
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the buffer was deleted or donated before the "
            "destination was ready");
  EXPECT_EQ(dst[0], -1);
  // And a deleted buffer is refused up front.
  args = Args(0, 4);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the buffer has been deleted or donated");
}

TEST_F(CopyRawToHostFutureTest, ArgumentChecks) {
  ErrorInfo info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(nullptr));
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: args is null");
  auto args = Args(0, 4);
  EXPECT_EQ(sizeof(PJRT_Buffer_CopyRawToHostFuture_Args), 64u);
  args.struct_size = 56;
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Buffer_CopyRawToHostFuture", 56, 64));
  args = Args(0, 4);
  args.buffer = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args)).message,
            "PJRT_Buffer_CopyRawToHostFuture: args->buffer is null");
  args = Args(-1, 4);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: offset (-1) and transfer_size (4) must be >= 0");
  args = Args(0, -4);
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args)).message,
            "PJRT_Buffer_CopyRawToHostFuture: offset (0) and transfer_size (-4) must be >= 0");
  args = Args(12, 8);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: [offset, offset + transfer_size) = [12, 20) is "
            "outside the buffer's 16 bytes");
  EXPECT_EQ(args.event, nullptr);
  EXPECT_EQ(args.future_ready_callback, nullptr);
  // The whole buffer is in range.
  args = Args(0, 16);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[4];
  Fulfil(args, dst);
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  EXPECT_EQ(dst[0], 1);
  EXPECT_EQ(dst[3], 4);
}

// ---- PJRT_AsyncHostToDeviceTransferManager_TransferLiteral ------------------------------------

class TransferLiteralTest : public NewBufferSlotsTest {
 protected:
  void SetUp() override {
    NewBufferSlotsTest::SetUp();
    specs_[0] = Spec(PJRT_Buffer_Type_F32, dims0_);
    specs_[1] = Spec(PJRT_Buffer_Type_S8, dims1_);
  }
  void TearDown() override {
    if (manager_ != nullptr) {
      auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
      destroy.transfer_manager = manager_;
      EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
    }
    NewBufferSlotsTest::TearDown();
  }

  static PJRT_ShapeSpec Spec(PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
    auto spec = MakeArgs<PJRT_ShapeSpec>();
    spec.element_type = type;
    spec.dims = dims.data();
    spec.num_dims = dims.size();
    return spec;
  }

  // Makes the manager of specs_ in device 0's memory, with `layouts` (one per spec) when given.
  void Create(PJRT_Buffer_MemoryLayout** layouts = nullptr) {
    auto args = MakeArgs<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>();
    args.client = client_;
    args.shape_specs = specs_;
    args.num_shape_specs = 2;
    args.device_layouts = layouts;
    args.num_device_layouts = layouts == nullptr ? 0 : 2;
    args.memory = memories_[0];
    ASSERT_PJRT_OK(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
    manager_ = args.transfer_manager;
  }

  // TransferLiteral args for buffer `index` of `type` and `dims` from `data`.
  PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args Literal(
      int index, const void* data, PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
    literal_dims_ = dims;
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    args.data = data;
    args.shape_dims = literal_dims_.data();
    args.shape_num_dims = literal_dims_.size();
    args.shape_element_type = type;
    return args;
  }

  // Retrieves buffer `index`.
  PJRT_Buffer* Retrieve(int index) {
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args));
    return args.buffer_out;
  }

  PJRT_ShapeSpec specs_[2];
  std::vector<int64_t> dims0_ = {2, 2};  // f32[2,2].
  std::vector<int64_t> dims1_ = {3};     // s8[3].
  std::vector<int64_t> literal_dims_;    // The last Literal's.
  PJRT_AsyncHostToDeviceTransferManager* manager_ = nullptr;
};

TEST_F(TransferLiteralTest, ALiteralFillsItsBuffer) {
  Create();
  PJRT_Buffer* buffer = Retrieve(0);
  ASSERT_NE(buffer, nullptr);
  PJRT_Event* before = ReadyEvent(buffer);  // Retrieved before the data arrives.
  EXPECT_FALSE(IsReady(before));
  std::vector<float> values = {1.5f, -2, 3, 4};
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  ASSERT_NE(args.done_with_h2d_transfer, nullptr);
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  EXPECT_TRUE(AwaitAndDestroy(before).ok);
  EXPECT_EQ(ToHostF32(buffer), values);
  // The other buffer, with its layout spelled out (row-major is the buffer's own).
  std::vector<int8_t> bytes = {-1, 0, 7};
  std::vector<int64_t> row = {0};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(row);
  auto second = Literal(1, bytes.data(), PJRT_Buffer_Type_S8, {3});
  second.shape_layout = &layout;
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&second));
  EXPECT_TRUE(AwaitAndDestroy(second.done_with_h2d_transfer).ok);
  PJRT_Buffer* small = Retrieve(1);
  ASSERT_NE(small, nullptr);
  auto host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  int8_t out[3] = {0, 0, 0};
  host.src = small;
  host.dst = out;
  host.dst_size = 3;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&host));
  EXPECT_TRUE(AwaitAndDestroy(host.event).ok);
  EXPECT_EQ(std::vector<int8_t>(out, out + 3), bytes);
  DestroyBuffer(buffer);
  DestroyBuffer(small);
}

TEST_F(TransferLiteralTest, AShapeOtherThanTheBuffersIsRefused) {
  Create();
  std::vector<int32_t> ints = {1, 2, 3, 4};
  auto args = Literal(0, ints.data(), PJRT_Buffer_Type_S32, {2, 2});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "s32[2,2] but buffer 0 is f32[2,2]");
  args = Literal(0, ints.data(), PJRT_Buffer_Type_F32, {4});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "f32[4] but buffer 0 is f32[2,2]");
  args = Literal(1, ints.data(), PJRT_Buffer_Type_S8, {});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "s8[] but buffer 1 is s8[3]");
  EXPECT_EQ(args.done_with_h2d_transfer, nullptr);
}

TEST_F(TransferLiteralTest, ALayoutOtherThanTheBuffersIsRefused) {
  Create();
  std::vector<float> values = {1, 2, 3, 4};
  std::vector<int64_t> column = {0, 1};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.shape_layout = &column_layout;
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal is laid out as "
            "{0,1} but buffer 0 as {1,0}; pjrtkit copies literals in the buffer's own layout "
            "only");
  // An invalid layout.
  std::vector<int64_t> short_m2m = {0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(short_m2m);
  args.shape_layout = &bad;
  info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: layout minor_to_major has 1 "
            "entries but the array has 2 dimensions");
}

TEST_F(TransferLiteralTest, ABufferMadeColumnMajorTakesColumnMajorLiteralsOnly) {
  std::vector<int64_t> column = {0, 1}, single = {0};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  PJRT_Buffer_MemoryLayout single_layout = TiledLayout(single);
  PJRT_Buffer_MemoryLayout* layouts[] = {&column_layout, &single_layout};
  Create(layouts);
  std::vector<float> values = {1, 3, 2, 4};  // Column-major bytes of [[1, 2], [3, 4]].
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal is laid out as "
            "{1,0} but buffer 0 as {0,1}; pjrtkit copies literals in the buffer's own layout "
            "only");
  args.shape_layout = &column_layout;
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  PJRT_Buffer* buffer = Retrieve(0);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(LayoutText(buffer), "{0,1}");
  // The bytes are copied as they are (in the buffer's layout).
  auto raw = MakeArgs<PJRT_Buffer_CopyRawToHost_Args>();
  float out[4] = {0, 0, 0, 0};
  raw.buffer = buffer;
  raw.dst = out;
  raw.transfer_size = sizeof(out);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHost(&raw));
  EXPECT_TRUE(AwaitAndDestroy(raw.event).ok);
  EXPECT_EQ(std::vector<float>(out, out + 4), values);
  DestroyBuffer(buffer);
}

TEST_F(TransferLiteralTest, ArgumentChecks) {
  Create();
  std::vector<float> values = {1, 2, 3, 4};
  const std::string fn = "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral";
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(nullptr)).message,
            fn + ": args is null");
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(sizeof(args), 80u);
  args.struct_size = 72;
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct(fn, 72, 80));
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.transfer_manager = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->transfer_manager is null");
  args = Literal(2, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": buffer_index 2 is out of range; the transfer has 2 buffer(s)");
  args = Literal(-1, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": buffer_index -1 is out of range; the transfer has 2 buffer(s)");
  args = Literal(0, nullptr, PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->data is null");
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.shape_dims = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->shape_dims is null");
  args = Literal(0, values.data(), static_cast<PJRT_Buffer_Type>(0), {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": invalid PJRT_Buffer_Type 0");
  // None of the refusals filled the buffer: it is filled once, by this.
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  PJRT_Buffer* buffer = Retrieve(0);
  EXPECT_EQ(ToHostF32(buffer), values);
  DestroyBuffer(buffer);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
