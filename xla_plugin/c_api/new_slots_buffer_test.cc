// The C-API layer's side of PJRT_Buffer_Bitcast and PJRT_Buffer_DonateWithControlDependency
// (PJRT C API 0.82+) against the fake device.

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

// ---- PJRT_Buffer_Bitcast and PJRT_Buffer_DonateWithControlDependency (the C-API layer) --------

TEST_F(NewBufferSlotsTest, BitcastMakesABufferOfTheNewShape) {
  PJRT_Buffer* source = MakeF32Buffer(client_, devices_[0], {1, -2, 0.5f, 8}, {2, 2});
  ASSERT_NE(source, nullptr);
  std::vector<int64_t> dims = {4};
  auto args = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  args.buffer = source;
  args.element_type = PJRT_Buffer_Type_U32;
  args.dims = dims.data();
  args.num_dims = 1;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_Bitcast(&args));
  ASSERT_NE(args.out_buffer, nullptr);
  auto type = MakeArgs<PJRT_Buffer_ElementType_Args>();
  type.buffer = args.out_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_U32);
  auto out_dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  out_dims.buffer = args.out_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&out_dims));
  ASSERT_EQ(out_dims.num_dims, 1u);
  EXPECT_EQ(out_dims.dims[0], 4);
  auto host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  uint32_t bits[4] = {0, 0, 0, 0};
  host.src = args.out_buffer;
  host.dst = bits;
  host.dst_size = sizeof(bits);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&host));
  EXPECT_TRUE(AwaitAndDestroy(host.event).ok);
  EXPECT_EQ(bits[0], 0x3f800000u);  // 1.0f
  EXPECT_EQ(bits[1], 0xc0000000u);  // -2.0f
  EXPECT_EQ(bits[2], 0x3f000000u);  // 0.5f
  EXPECT_EQ(bits[3], 0x41000000u);  // 8.0f
  EXPECT_FALSE(IsDeleted(source));
  // With a layout: the new buffer reports it.
  std::vector<int64_t> matrix = {2, 2};
  std::vector<int64_t> column = {0, 1};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(column);
  auto laid_out = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  laid_out.buffer = source;
  laid_out.element_type = PJRT_Buffer_Type_S32;
  laid_out.dims = matrix.data();
  laid_out.num_dims = 2;
  laid_out.device_layout = &layout;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_Bitcast(&laid_out));
  EXPECT_EQ(LayoutText(laid_out.out_buffer), "{0,1}");
  // Without one: the default for the new shape, not the source's layout.
  auto default_layout = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  default_layout.buffer = laid_out.out_buffer;
  default_layout.element_type = PJRT_Buffer_Type_F32;
  default_layout.dims = matrix.data();
  default_layout.num_dims = 2;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_Bitcast(&default_layout));
  EXPECT_EQ(LayoutText(default_layout.out_buffer), "{1,0}");
  DestroyBuffer(default_layout.out_buffer);
  DestroyBuffer(laid_out.out_buffer);
  DestroyBuffer(args.out_buffer);
  DestroyBuffer(source);
}

TEST_F(NewBufferSlotsTest, BitcastChecksItsArguments) {
  PJRT_Buffer* source = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  ASSERT_NE(source, nullptr);
  const std::string fn = "PJRT_Buffer_Bitcast";
  std::vector<int64_t> dims = {4};
  auto args = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  args.buffer = source;
  args.element_type = PJRT_Buffer_Type_S32;
  args.dims = dims.data();
  args.num_dims = 1;
  EXPECT_EQ(sizeof(args), 64u);
  args.struct_size = 56;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message, ShortStruct(fn, 56, 64));
  args.struct_size = sizeof(args);
  args.buffer = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message, fn + ": args->buffer is null");
  args.buffer = source;
  args.element_type = static_cast<PJRT_Buffer_Type>(kMaxElementType + 1);
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message,
            fn + ": invalid PJRT_Buffer_Type " + std::to_string(kMaxElementType + 1));
  args.element_type = PJRT_Buffer_Type_S32;
  args.dims = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message, fn + ": args->dims is null");
  std::vector<int64_t> negative = {-4};
  args.dims = negative.data();
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message,
            fn + ": args->dims[0] is -4; dimensions must be >= 0");
  std::vector<int64_t> bigger = {5};
  args.dims = bigger.data();
  ErrorInfo info = Consume(api_->PJRT_Buffer_Bitcast(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "FakeBuffer::Bitcast: 16 bytes cannot be 20 bytes");  // The device's.
  args.dims = dims.data();
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout wrong_rank = TiledLayout(m2m);
  args.device_layout = &wrong_rank;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_Bitcast(&args)).message,
            fn + ": layout minor_to_major has 2 entries but the array has 1 dimensions");
  args.device_layout = nullptr;
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = source;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  info = Consume(api_->PJRT_Buffer_Bitcast(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message, fn + ": the buffer has been deleted or donated");
  EXPECT_EQ(args.out_buffer, nullptr);
  DestroyBuffer(source);
}

// A DonateWithControlDependency callback as the framework calls it.
void DependencyReady(const PJRT_Buffer_DonateWithControlDependency_Args& donation,
                     PJRT_Error_Code code = PJRT_Error_Code_OK, const char* message = nullptr) {
  auto ready = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Callback_Args>();
  ready.callback_data = donation.callback_data;
  ready.error_code = code;
  ready.error_message = message;
  ready.error_message_size = message == nullptr ? 0 : std::strlen(message);
  donation.dependency_ready_callback(&ready);
}

TEST_F(NewBufferSlotsTest, ADonatedBufferIsReadyWhenItsDependencyIs) {
  PJRT_Buffer* source = MakeF32Buffer(client_, devices_[1], {5, 6}, {2});
  ASSERT_NE(source, nullptr);
  auto args = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  args.buffer = source;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_DonateWithControlDependency(&args));
  ASSERT_NE(args.out_buffer, nullptr);
  ASSERT_NE(args.callback_data, nullptr);
  ASSERT_NE(args.dependency_ready_callback, nullptr);
  EXPECT_TRUE(IsDeleted(source));  // Donated.
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = args.out_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);
  PJRT_Event* ready = ReadyEvent(args.out_buffer);
  EXPECT_FALSE(IsReady(ready));
  DependencyReady(args);
  EXPECT_TRUE(IsReady(ready));
  EXPECT_TRUE(AwaitAndDestroy(ready).ok);
  EXPECT_EQ(ToHostF32(args.out_buffer), (std::vector<float>{5, 6}));
  // The donated source refuses data operations.
  auto again = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  again.buffer = source;
  ErrorInfo info = Consume(api_->PJRT_Buffer_DonateWithControlDependency(&again));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_DonateWithControlDependency: the buffer has been deleted or donated");
  DestroyBuffer(args.out_buffer);
  DestroyBuffer(source);
}

TEST_F(NewBufferSlotsTest, AFailedDependencyFailsTheDonatedBuffer) {
  PJRT_Buffer* source = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  auto args = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  args.buffer = source;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_DonateWithControlDependency(&args));
  DependencyReady(args, PJRT_Error_Code_ABORTED, "the producer was cancelled");
  ErrorInfo info = AwaitAndDestroy(ReadyEvent(args.out_buffer));
  EXPECT_EQ(info.code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(info.message, "the producer was cancelled");
  DestroyBuffer(args.out_buffer);
  DestroyBuffer(source);
  // Without a message.
  source = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  args = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  args.buffer = source;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_DonateWithControlDependency(&args));
  DependencyReady(args, PJRT_Error_Code_INTERNAL);
  info = AwaitAndDestroy(ReadyEvent(args.out_buffer));
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message, "the donation's dependency failed");
  DestroyBuffer(args.out_buffer);
  DestroyBuffer(source);
}

TEST_F(NewBufferSlotsTest, DonateWithControlDependencyChecksItsArguments) {
  const std::string fn = "PJRT_Buffer_DonateWithControlDependency";
  PJRT_Buffer* source = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  ASSERT_NE(source, nullptr);
  auto args = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  args.buffer = source;
  EXPECT_EQ(sizeof(args), 48u);
  args.struct_size = 40;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_DonateWithControlDependency(&args)).message,
            ShortStruct(fn, 40, 48));
  args.struct_size = sizeof(args);
  args.buffer = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_DonateWithControlDependency(&args)).message,
            fn + ": args->buffer is null");
  // Memory shared with NumPy or DLPack is not donated.
  auto increase = MakeArgs<PJRT_Buffer_IncreaseExternalReferenceCount_Args>();
  increase.buffer = source;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase));
  args.buffer = source;
  ErrorInfo info = Consume(api_->PJRT_Buffer_DonateWithControlDependency(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            fn + ": the buffer has external references (NumPy or DLPack views); memory in use "
                 "elsewhere cannot be donated");
  EXPECT_EQ(args.out_buffer, nullptr);
  EXPECT_FALSE(IsDeleted(source));
  auto decrease = MakeArgs<PJRT_Buffer_DecreaseExternalReferenceCount_Args>();
  decrease.buffer = source;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  EXPECT_EQ(ToHostF32(source), (std::vector<float>{1, 2}));
  DestroyBuffer(source);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
