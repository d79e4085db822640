// PJRT_Client_CreateViewOfDeviceBuffer: a buffer over memory the caller owns (DLPack import).

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// What the on-delete callback saw.
struct DeleteLog {
  int calls = 0;               // Number of calls.
  void* pointer = nullptr;     // The device_buffer_ptr it got.
};

void OnDelete(void* device_buffer_ptr, void* user_arg) {
  auto* log = static_cast<DeleteLog*>(user_arg);
  ++log->calls;
  log->pointer = device_buffer_ptr;
}

class BufferViewTest : public ClientTest {
 protected:
  // View args over `data_` (f32[2,3]) on device 0.
  PJRT_Client_CreateViewOfDeviceBuffer_Args ViewArgs() {
    auto args = MakeArgs<PJRT_Client_CreateViewOfDeviceBuffer_Args>();
    args.client = client_;
    args.device_buffer_ptr = data_.data();
    args.dims = dims_.data();
    args.num_dims = dims_.size();
    args.element_type = PJRT_Buffer_Type_F32;
    args.device = devices_[0];
    args.on_delete_callback = &OnDelete;
    args.on_delete_callback_arg = &log_;
    return args;
  }

  std::vector<float> data_ = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> dims_ = {2, 3};
  DeleteLog log_;
};

TEST_F(BufferViewTest, ViewAliasesTheMemoryAndCallsBackOnDestroy) {
  auto args = ViewArgs();
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  ASSERT_NE(args.buffer, nullptr);
  EXPECT_EQ(ToHostF32(args.buffer), data_);
  data_[4] = 50;  // The view sees writes to the memory: it is not a copy.
  EXPECT_EQ(ToHostF32(args.buffer), (std::vector<float>{1, 2, 3, 4, 50, 6}));
  auto pointer = MakeArgs<PJRT_Buffer_UnsafePointer_Args>();
  pointer.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_UnsafePointer(&pointer));
  EXPECT_EQ(pointer.buffer_pointer, reinterpret_cast<uintptr_t>(data_.data()));
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[0]);
  EXPECT_EQ(log_.calls, 0);
  DestroyBuffer(args.buffer);
  EXPECT_EQ(log_.calls, 1);
  EXPECT_EQ(log_.pointer, data_.data());
}

TEST_F(BufferViewTest, MemoryWinsOverDevice) {
  std::vector<PJRT_Memory*> memories = AddressableMemories(client_);
  PJRT_Memory* pinned = nullptr;
  for (PJRT_Memory* memory : memories) {
    auto kind = MakeArgs<PJRT_Memory_Kind_Args>();
    kind.memory = memory;
    EXPECT_PJRT_OK(api_->PJRT_Memory_Kind(&kind));
    if (std::string(kind.kind, kind.kind_size) == "pinned_host") pinned = memory;
  }
  ASSERT_NE(pinned, nullptr);
  auto args = ViewArgs();
  args.device = nullptr;
  args.memory = pinned;
  args.on_delete_callback = nullptr;  // Optional.
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, pinned);
  DestroyBuffer(args.buffer);
  EXPECT_EQ(log_.calls, 0);
}

TEST_F(BufferViewTest, AShapeWithoutElementsMayHaveANullPointer) {
  // What JAX passes for a zero-size DLPack tensor (PyTorch's and CuPy's data pointer is null).
  const std::vector<int64_t> dims = {0, 3};
  auto args = ViewArgs();
  args.device_buffer_ptr = nullptr;
  args.dims = dims.data();
  args.num_dims = dims.size();
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  ASSERT_NE(args.buffer, nullptr);
  auto dimensions = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  dimensions.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&dimensions));
  EXPECT_EQ(std::vector<int64_t>(dimensions.dims, dimensions.dims + dimensions.num_dims), dims);
  DestroyBuffer(args.buffer);
  EXPECT_EQ(log_.calls, 1);
  EXPECT_EQ(log_.pointer, nullptr);
}

TEST_F(BufferViewTest, ValidatesItsArguments) {
  auto args = ViewArgs();
  args.device_buffer_ptr = nullptr;
  ErrorInfo null_ptr = Consume(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(null_ptr.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(null_ptr.message,
            "PJRT_Client_CreateViewOfDeviceBuffer: args->device_buffer_ptr is null (allowed "
            "only for a shape with no elements)");
  args = ViewArgs();
  args.stream = 42;  // Passed to the client, which decides (the fake cannot wait for one).
  ErrorInfo streamed = Consume(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(streamed.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(streamed.message,
            "fake: no streams to wait for (got stream 42)");
  args = ViewArgs();
  args.element_type = PJRT_Buffer_Type_INVALID;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  args = ViewArgs();
  args.device = nullptr;
  ErrorInfo nowhere = Consume(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(nowhere.message,
            "PJRT_Client_CreateViewOfDeviceBuffer: args->device and args->memory are both null");
  // An older caller whose struct ends before `memory`: the device is used.
  args = ViewArgs();
  args.struct_size = offsetof(PJRT_Client_CreateViewOfDeviceBuffer_Args, memory);
  args.memory = reinterpret_cast<PJRT_Memory*>(0x1);  // Past struct_size: never read.
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  DestroyBuffer(args.buffer);
  EXPECT_EQ(log_.calls, 1);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
