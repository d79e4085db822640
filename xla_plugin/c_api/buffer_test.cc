// PJRT_Client_BufferFromHostBuffer / CreateUninitializedBuffer and PJRT_Buffer_*.

// C++ standard library.
#include <cstdint>
#include <cstring>
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

// Fixture with BufferFromHostBuffer argument helpers.
class BufferTest : public ClientTest {
 protected:
  // Args for an f32 upload of `data` with `dims` to device 0.
  PJRT_Client_BufferFromHostBuffer_Args UploadArgs(const std::vector<float>& data,
                                                   const std::vector<int64_t>& dims) {
    auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
    args.client = client_;
    args.data = data.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.device = devices_[0];
    return args;
  }

  // Runs an upload; returns the buffer (the done event is awaited and destroyed).
  PJRT_Buffer* Upload(PJRT_Client_BufferFromHostBuffer_Args& args) {
    ErrorInfo info = Consume(api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_TRUE(info.ok) << info.message;
    if (!info.ok) return nullptr;
    EXPECT_TRUE(AwaitAndDestroy(args.done_with_host_buffer).ok);
    return args.buffer;
  }

  // ToHostBuffer into `n` floats with `layout`; returns the error of the copy call.
  ErrorInfo ReadWithLayout(PJRT_Buffer* buffer, PJRT_Buffer_MemoryLayout* layout,
                           std::vector<float>* out) {
    auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
    args.src = buffer;
    args.host_layout = layout;
    ErrorInfo query = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
    if (!query.ok) return query;
    out->assign(args.dst_size / sizeof(float), -1.0f);
    args.dst = out->data();
    ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
    if (info.ok) {
      EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
    }
    return info;
  }
};

// A byte-stride layout (the arrays must outlive it).
PJRT_Buffer_MemoryLayout StridesLayout(const std::vector<int64_t>& strides) {
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.struct_size = PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE;
  layout.strides.byte_strides = strides.data();
  layout.strides.num_byte_strides = strides.size();
  return layout;
}

TEST_F(BufferTest, ToHostBufferSizeQueryThenExactRoundTrip) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1.5f, -2, 3, 4, 5, 6.25f}, {2, 3});
  auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  args.src = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_EQ(args.dst_size, 24u);
  EXPECT_EQ(args.event, nullptr);
  std::vector<float> out(6, 0.0f);
  args.dst = out.data();
  args.dst_size = 23;
  ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: dst_size is 23 bytes but the buffer needs 24");
  args.dst_size = 24;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  EXPECT_EQ(out, (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f}));
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, Metadata) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[1], {1, 2, 3, 4, 5, 6}, {2, 3});
  auto type = MakeArgs<PJRT_Buffer_ElementType_Args>();
  type.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_F32);
  auto dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  dims.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims),
            (std::vector<int64_t>{2, 3}));
  auto unpadded = MakeArgs<PJRT_Buffer_UnpaddedDimensions_Args>();
  unpadded.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_UnpaddedDimensions(&unpadded));
  EXPECT_EQ(
      std::vector<int64_t>(unpadded.unpadded_dims, unpadded.unpadded_dims + unpadded.num_dims),
      (std::vector<int64_t>{2, 3}));
  auto dynamic = MakeArgs<PJRT_Buffer_DynamicDimensionIndices_Args>();
  dynamic.buffer = buffer;
  dynamic.num_dynamic_dims = 99;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_DynamicDimensionIndices(&dynamic));
  EXPECT_EQ(dynamic.num_dynamic_dims, 0u);
  auto size = MakeArgs<PJRT_Buffer_OnDeviceSizeInBytes_Args>();
  size.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_OnDeviceSizeInBytes(&size));
  EXPECT_EQ(size.on_device_size_in_bytes, 24u);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, AddressableMemories(client_)[1]);
  auto cpu = MakeArgs<PJRT_Buffer_IsOnCpu_Args>();
  cpu.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_IsOnCpu(&cpu));
  EXPECT_TRUE(cpu.is_on_cpu);
  // Returned arrays live as long as the buffer: still valid after other calls.
  ToHostF32(buffer);
  EXPECT_EQ(dims.dims[0], 2);
  EXPECT_EQ(dims.dims[1], 3);
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, StridedHostDataIsGathered) {
  // A 2x3 array stored column-major: element (i, j) at float offset i + 2 * j.
  std::vector<float> column_major = {1, 4, 2, 5, 3, 6};
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> strides = {4, 8};
  auto args = UploadArgs(column_major, dims);
  args.byte_strides = strides.data();
  args.num_byte_strides = 2;
  PJRT_Buffer* buffer = Upload(args);
  EXPECT_EQ(ToHostF32(buffer), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, HostLayoutsForToHostBuffer) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<float> out;
  std::vector<int64_t> column_major_strides = {4, 8};
  PJRT_Buffer_MemoryLayout strides = StridesLayout(column_major_strides);
  EXPECT_TRUE(ReadWithLayout(buffer, &strides, &out).ok);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));

  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout tiled = TiledLayout(m2m);
  EXPECT_TRUE(ReadWithLayout(buffer, &tiled, &out).ok);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));

  std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout dense = TiledLayout(row_major);
  EXPECT_TRUE(ReadWithLayout(buffer, &dense, &out).ok);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  std::vector<int64_t> padded_strides = {16, 4};  // Rows padded to 4 floats.
  PJRT_Buffer_MemoryLayout padded = StridesLayout(padded_strides);
  ErrorInfo info = ReadWithLayout(buffer, &padded, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message.rfind("PJRT_Buffer_ToHostBuffer: byte strides that do not describe a "
                               "compact array",
                               0),
            0u);

  std::vector<int64_t> not_a_permutation = {0, 0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(not_a_permutation);
  info = ReadWithLayout(buffer, &bad, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_ToHostBuffer: layout minor_to_major is not a permutation of the "
            "dimensions");
  DestroyBuffer(buffer);
}

// The struct_size fields of a layout are not read (jaxlib leaves them unset; see
// jaxlib_layout_test): a nested struct_size of 0 or 8 reads the same as a full one.
TEST_F(BufferTest, NestedLayoutStructSizeIsNotRead) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<float> out;
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout tiled = TiledLayout(m2m);
  for (size_t size : {size_t{0}, size_t{8}}) {
    tiled.tiled.struct_size = size;
    EXPECT_TRUE(ReadWithLayout(buffer, &tiled, &out).ok);
    EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  }
  std::vector<int64_t> strides_v = {4, 8};
  PJRT_Buffer_MemoryLayout strides = StridesLayout(strides_v);
  strides.strides.struct_size = 0;
  EXPECT_TRUE(ReadWithLayout(buffer, &strides, &out).ok);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, DeviceLayoutIsReportedByGetMemoryLayout) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(m2m);
  auto args = UploadArgs(data, dims);
  args.device_layout = &layout;
  PJRT_Buffer* buffer = Upload(args);
  auto get = MakeArgs<PJRT_Buffer_GetMemoryLayout_Args>();
  get.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_GetMemoryLayout(&get));
  EXPECT_EQ(get.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  EXPECT_EQ(get.layout.struct_size, static_cast<size_t>(PJRT_Buffer_MemoryLayout_STRUCT_SIZE));
  ASSERT_EQ(get.layout.tiled.minor_to_major_size, 2u);
  EXPECT_EQ(get.layout.tiled.minor_to_major[0], 0);
  EXPECT_EQ(get.layout.tiled.minor_to_major[1], 1);
  EXPECT_EQ(get.layout.tiled.num_tiles, 0u);
  const int64_t* first = get.layout.tiled.minor_to_major;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_GetMemoryLayout(&get));
  EXPECT_EQ(get.layout.tiled.minor_to_major, first);  // Cached on the handle.
  DestroyBuffer(buffer);

  PJRT_Buffer* plain = MakeF32Buffer(client_, devices_[0], data, dims);
  get.buffer = plain;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_GetMemoryLayout(&get));
  EXPECT_EQ(get.layout.tiled.minor_to_major[0], 1);
  EXPECT_EQ(get.layout.tiled.minor_to_major[1], 0);
  DestroyBuffer(plain);
}

TEST_F(BufferTest, MemoryAloneChoosesTheMemorysDevice) {
  std::vector<float> data = {7};
  std::vector<int64_t> dims = {1};
  PJRT_Memory* pinned = AddressableMemories(client_)[2];
  auto args = UploadArgs(data, dims);
  args.device = nullptr;
  args.memory = pinned;
  PJRT_Buffer* buffer = Upload(args);
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, pinned);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[0]);
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, HostBufferSemanticsReachTheDevice) {
  std::vector<float> data = {1, 2};
  std::vector<int64_t> dims = {2};
  auto copy_args = UploadArgs(data, dims);
  copy_args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  PJRT_Buffer* copied = Upload(copy_args);

  auto alias_args = UploadArgs(data, dims);
  alias_args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
  EXPECT_PJRT_OK(api_->PJRT_Client_BufferFromHostBuffer(&alias_args));
  PJRT_Buffer* aliased = alias_args.buffer;
  auto ready = MakeArgs<PJRT_Event_IsReady_Args>();
  ready.event = alias_args.done_with_host_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&ready));
  EXPECT_FALSE(ready.is_ready);  // The fake aliases the host data until the buffer dies.

  data[0] = 42;
  EXPECT_EQ(ToHostF32(copied), (std::vector<float>{1, 2}));
  EXPECT_EQ(ToHostF32(aliased), (std::vector<float>{42, 2}));
  DestroyBuffer(aliased);
  EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&ready));
  EXPECT_TRUE(ready.is_ready);
  EXPECT_TRUE(AwaitAndDestroy(alias_args.done_with_host_buffer).ok);
  DestroyBuffer(copied);
}

TEST_F(BufferTest, BadUploadArgumentsAreInvalidArgument) {
  std::vector<float> data = {1, 2};
  std::vector<int64_t> dims = {2};
  std::vector<int64_t> strides = {4, 4};
  auto args = UploadArgs(data, dims);
  args.type = PJRT_Buffer_Type_INVALID;
  EXPECT_EQ(Consume(api_->PJRT_Client_BufferFromHostBuffer(&args)).message,
            "PJRT_Client_BufferFromHostBuffer: invalid PJRT_Buffer_Type 0");
  args = UploadArgs(data, dims);
  args.byte_strides = strides.data();
  args.num_byte_strides = 2;
  EXPECT_EQ(Consume(api_->PJRT_Client_BufferFromHostBuffer(&args)).message,
            "PJRT_Client_BufferFromHostBuffer: num_byte_strides is 2 but num_dims is 1 (give one "
            "stride per dimension or none for a dense array)");
  args = UploadArgs(data, dims);
  args.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_BufferFromHostBuffer(&args)).message,
            "PJRT_Client_BufferFromHostBuffer: args->device and args->memory are both null");
  args = UploadArgs(data, dims);
  args.host_buffer_semantics = static_cast<PJRT_HostBufferSemantics>(42);
  EXPECT_EQ(Consume(api_->PJRT_Client_BufferFromHostBuffer(&args)).message,
            "PJRT_Client_BufferFromHostBuffer: unknown host_buffer_semantics 42");
  args = UploadArgs(data, dims);
  args.data = nullptr;
  ErrorInfo info = Consume(api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_BufferFromHostBuffer: args->data is null, but the array has 8 "
            "bytes (null is accepted only for an array of 0 bytes)");
}

TEST_F(BufferTest, UseAfterDeleteIsAnErrorNotACrash) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  EXPECT_TRUE(IsDeleted(buffer));

  std::vector<float> out(2);
  auto to_host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  to_host.src = buffer;
  to_host.dst = out.data();
  to_host.dst_size = 8;
  ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: the buffer has been deleted or donated");

  auto copy = MakeArgs<PJRT_Buffer_CopyToDevice_Args>();
  copy.buffer = buffer;
  copy.dst_device = devices_[1];
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyToDevice(&copy)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto raw = MakeArgs<PJRT_Buffer_CopyRawToHost_Args>();
  raw.buffer = buffer;
  raw.dst = out.data();
  raw.transfer_size = 4;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHost(&raw)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto pointer = MakeArgs<PJRT_Buffer_UnsafePointer_Args>();
  pointer.buffer = buffer;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_UnsafePointer(&pointer)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto ref = MakeArgs<PJRT_Buffer_IncreaseExternalReferenceCount_Args>();
  ref.buffer = buffer;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&ref)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  // Metadata still answers, and a second Delete is harmless.
  auto dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  dims.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(dims.num_dims, 1u);
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, ExternalReferenceCount) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1}, {1});
  auto dec = MakeArgs<PJRT_Buffer_DecreaseExternalReferenceCount_Args>();
  dec.buffer = buffer;
  ErrorInfo info = Consume(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_DecreaseExternalReferenceCount: DecreaseExternalReferenceCount called "
            "with no external reference held (count is 0)");
  auto inc = MakeArgs<PJRT_Buffer_IncreaseExternalReferenceCount_Args>();
  inc.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  EXPECT_PJRT_OK(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  EXPECT_PJRT_OK(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  EXPECT_PJRT_OK(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  EXPECT_EQ(Consume(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&dec)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, CopiesToDevicesAndMemories) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {3, 1, 4}, {3});
  auto copy = MakeArgs<PJRT_Buffer_CopyToDevice_Args>();
  copy.buffer = buffer;
  copy.dst_device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Buffer_CopyToDevice(&copy));
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = copy.dst_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);
  EXPECT_EQ(ToHostF32(copy.dst_buffer), (std::vector<float>{3, 1, 4}));
  DestroyBuffer(copy.dst_buffer);

  PJRT_Memory* pinned = AddressableMemories(client_)[2];
  auto to_memory = MakeArgs<PJRT_Buffer_CopyToMemory_Args>();
  to_memory.buffer = buffer;
  to_memory.dst_memory = pinned;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_CopyToMemory(&to_memory));
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = to_memory.dst_buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, pinned);
  EXPECT_EQ(ToHostF32(to_memory.dst_buffer), (std::vector<float>{3, 1, 4}));
  DestroyBuffer(to_memory.dst_buffer);
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, RawCopiesAndPointers) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {10, 20, 30, 40}, {4});
  float out[2] = {0, 0};
  auto raw = MakeArgs<PJRT_Buffer_CopyRawToHost_Args>();
  raw.buffer = buffer;
  raw.dst = out;
  raw.offset = 4;
  raw.transfer_size = 8;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHost(&raw));
  EXPECT_TRUE(AwaitAndDestroy(raw.event).ok);
  EXPECT_EQ(out[0], 20);
  EXPECT_EQ(out[1], 30);
  raw.offset = 12;
  ErrorInfo info = Consume(api_->PJRT_Buffer_CopyRawToHost(&raw));
  EXPECT_EQ(info.code, PJRT_Error_Code_OUT_OF_RANGE);
  EXPECT_EQ(info.message, "FakeBuffer::CopyRawToHost: [12, 20) is outside the 16-byte buffer");
  raw.offset = -1;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHost(&raw)).code, PJRT_Error_Code_INVALID_ARGUMENT);

  auto unsafe = MakeArgs<PJRT_Buffer_UnsafePointer_Args>();
  unsafe.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_UnsafePointer(&unsafe));
  auto opaque = MakeArgs<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>();
  opaque.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&opaque));
  ASSERT_NE(unsafe.buffer_pointer, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(opaque.device_memory_ptr), unsafe.buffer_pointer);
  EXPECT_EQ(reinterpret_cast<const float*>(unsafe.buffer_pointer)[3], 40);
  DestroyBuffer(buffer);
}

TEST_F(BufferTest, UninitializedBuffers) {
  std::vector<int64_t> dims = {3};
  auto args = MakeArgs<PJRT_Client_CreateUninitializedBuffer_Args>();
  args.client = client_;
  args.shape_dims = dims.data();
  args.shape_num_dims = 1;
  args.shape_element_type = PJRT_Buffer_Type_S32;
  args.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Client_CreateUninitializedBuffer(&args));
  auto size = MakeArgs<PJRT_Buffer_OnDeviceSizeInBytes_Args>();
  size.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_OnDeviceSizeInBytes(&size));
  EXPECT_EQ(size.on_device_size_in_bytes, 12u);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = args.buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);
  DestroyBuffer(args.buffer);

  std::vector<int64_t> dims2 = {2, 2};
  std::vector<int64_t> col_major = {0, 1};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(col_major);
  args.shape_dims = dims2.data();
  args.shape_num_dims = 2;
  args.shape_layout = &layout;
  ErrorInfo info = Consume(api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
