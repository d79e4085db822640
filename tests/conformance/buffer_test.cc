// PJRT_Buffer_*: metadata, readiness, deletion, copies, external references, pointers.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class BufferTest : public ClientTestBase {
 protected:
  void SetUp() override {
    ClientTestBase::SetUp();
    if (HasFatalFailure()) return;
    PJRT_ASSERT_OK(FromVector(values_, PJRT_Buffer_Type_F32, {2, 3}, FirstDevice(), &buffer_));
  }

  // A device other than the buffer's, or NULL when there is only one.
  PJRT_Device* OtherDevice() {
    const std::vector<PJRT_Device*> devices = AddressableDevices();
    return devices.size() < 2 ? nullptr : devices[1];
  }

  Status Delete(PJRT_Buffer* buffer) {
    PJRT_ARGS(PJRT_Buffer_Delete_Args, args);
    args.buffer = buffer;
    return PJRT_CALL(api()->PJRT_Buffer_Delete(&args));
  }

  Status ExternalRef(bool increase) {
    if (increase) {
      PJRT_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, args);
      args.buffer = buffer_.get();
      return PJRT_CALL(api()->PJRT_Buffer_IncreaseExternalReferenceCount(&args));
    }
    PJRT_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, args);
    args.buffer = buffer_.get();
    return PJRT_CALL(api()->PJRT_Buffer_DecreaseExternalReferenceCount(&args));
  }

  const std::vector<float> values_ = {1.5f, -2.0f, 3.25f, 0.0f, 1e6f, -7.5f};  // f32[2,3].
  BufferPtr buffer_;                                                              // Of values_.
};

TEST_F(BufferTest, ElementTypeAndDimensions) {
  PJRT_ARGS(PJRT_Buffer_ElementType_Args, type);
  type.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ElementType(&type)));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_F32);
  PJRT_ARGS(PJRT_Buffer_Dimensions_Args, dims);
  dims.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_Dimensions(&dims)));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims),
            (std::vector<int64_t>{2, 3}));
}

TEST_F(BufferTest, UnpaddedDimensionsEqualDimensions) {
  PJRT_ARGS(PJRT_Buffer_UnpaddedDimensions_Args, args);
  args.buffer = buffer_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_UnpaddedDimensions(&args)),
                             "PJRT_Buffer_UnpaddedDimensions");
  EXPECT_EQ(std::vector<int64_t>(args.unpadded_dims, args.unpadded_dims + args.num_dims),
            (std::vector<int64_t>{2, 3}));
}

TEST_F(BufferTest, StaticShapeHasNoDynamicDimensions) {
  PJRT_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args, args);
  args.buffer = buffer_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_DynamicDimensionIndices(&args)),
                             "PJRT_Buffer_DynamicDimensionIndices");
  EXPECT_EQ(args.num_dynamic_dims, 0u);
}

TEST_F(BufferTest, OnDeviceSizeCoversTheData) {
  PJRT_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args, args);
  args.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_OnDeviceSizeInBytes(&args)));
  EXPECT_GE(args.on_device_size_in_bytes, values_.size() * sizeof(float));
  EXPECT_LE(args.on_device_size_in_bytes, 1u << 20) << "implausible for 24 bytes of data";
  Report("on_device_size_in_bytes_f32_2x3", std::to_string(args.on_device_size_in_bytes));
}

TEST_F(BufferTest, LivesOnTheRequestedDeviceAndItsDefaultMemory) {
  for (PJRT_Device* device : AddressableDevices()) {
    BufferPtr buffer;
    PJRT_ASSERT_OK(FromVector(values_, PJRT_Buffer_Type_F32, {2, 3}, device, &buffer));
    PJRT_Device* placed = nullptr;
    PJRT_ASSERT_OK(BufferDevice(buffer.get(), &placed));
    EXPECT_EQ(placed, device);
    PJRT_Memory* memory = nullptr;
    PJRT_ASSERT_OK(BufferMemory(buffer.get(), &memory));
    EXPECT_EQ(memory, DefaultMemory(device));
  }
}

TEST_F(BufferTest, ReadyEventBecomesReadyWithoutError) {
  PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args, args);
  args.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ReadyEvent(&args)));
  EventPtr event(api(), args.event);
  ASSERT_TRUE(event);
  PJRT_ASSERT_OK(Await(event.get()));
  EXPECT_TRUE(IsReady(event.get()));
  PJRT_ARGS(PJRT_Event_Error_Args, error);
  error.event = event.get();
  PJRT_EXPECT_OK(PJRT_CALL(api()->PJRT_Event_Error(&error)));
}

TEST_F(BufferTest, IsOnCpuAnswers) {
  PJRT_ARGS(PJRT_Buffer_IsOnCpu_Args, args);
  args.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_IsOnCpu(&args)));
  Report("is_on_cpu", args.is_on_cpu ? "true" : "false");
}

TEST_F(BufferTest, DeleteMarksTheBufferDeleted) {
  bool deleted = true;
  PJRT_ASSERT_OK(IsDeleted(buffer_.get(), &deleted));
  EXPECT_FALSE(deleted);
  PJRT_ASSERT_OK(Delete(buffer_.get()));
  PJRT_ASSERT_OK(IsDeleted(buffer_.get(), &deleted));
  EXPECT_TRUE(deleted);
}

TEST_F(BufferTest, DeleteTwiceIsHarmless) {
  PJRT_ASSERT_OK(Delete(buffer_.get()));
  PJRT_EXPECT_OK(Delete(buffer_.get()));
  bool deleted = false;
  PJRT_ASSERT_OK(IsDeleted(buffer_.get(), &deleted));
  EXPECT_TRUE(deleted);
}

TEST_F(BufferTest, ToHostAfterDeleteIsAnError) {
  PJRT_ASSERT_OK(Delete(buffer_.get()));
  std::vector<char> back;
  PJRT_ASSERT_ERROR(ToHost(buffer_.get(), &back));
}

TEST_F(BufferTest, CopyAfterDeleteIsAnError) {
  PJRT_ASSERT_OK(Delete(buffer_.get()));
  PJRT_ARGS(PJRT_Buffer_CopyToDevice_Args, args);
  args.buffer = buffer_.get();
  args.dst_device = OtherDevice() != nullptr ? OtherDevice() : FirstDevice();
  const Status status = PJRT_CALL(api()->PJRT_Buffer_CopyToDevice(&args));
  BufferPtr copy(api(), args.dst_buffer);
  if (status.ok()) {
    // Some plugins report the error through the copy instead of the call.
    ASSERT_TRUE(copy);
    PJRT_ASSERT_ERROR(AwaitReady(copy.get()));
  } else {
    EXPECT_FALSE(status.message.empty());
  }
}

TEST_F(BufferTest, CopyToAnotherDeviceKeepsTheData) {
  PJRT_Device* other = OtherDevice();
  if (other == nullptr) GTEST_SKIP() << "needs 2 addressable devices";
  PJRT_ARGS(PJRT_Buffer_CopyToDevice_Args, args);
  args.buffer = buffer_.get();
  args.dst_device = other;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_CopyToDevice(&args)));
  BufferPtr copy(api(), args.dst_buffer);
  PJRT_Device* placed = nullptr;
  PJRT_ASSERT_OK(BufferDevice(copy.get(), &placed));
  EXPECT_EQ(placed, other);
  std::vector<float> back;
  PJRT_ASSERT_OK(ReadVector(copy.get(), &back));
  EXPECT_EQ(back, values_);
  PJRT_ASSERT_OK(ReadVector(buffer_.get(), &back));
  EXPECT_EQ(back, values_) << "the source changed";
}

TEST_F(BufferTest, CopyToAnotherMemoryKeepsTheData) {
  PJRT_Device* other = OtherDevice() != nullptr ? OtherDevice() : FirstDevice();
  PJRT_Memory* memory = DefaultMemory(other);
  PJRT_ARGS(PJRT_Buffer_CopyToMemory_Args, args);
  args.buffer = buffer_.get();
  args.dst_memory = memory;
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_CopyToMemory(&args)),
                             "PJRT_Buffer_CopyToMemory");
  BufferPtr copy(api(), args.dst_buffer);
  PJRT_Memory* placed = nullptr;
  PJRT_ASSERT_OK(BufferMemory(copy.get(), &placed));
  EXPECT_EQ(placed, memory);
  std::vector<float> back;
  PJRT_ASSERT_OK(ReadVector(copy.get(), &back));
  EXPECT_EQ(back, values_);
}

TEST_F(BufferTest, ExternalReferencesBalance) {
  Status status = ExternalRef(true);
  PJRT_SKIP_IF_UNIMPLEMENTED(status, "PJRT_Buffer_IncreaseExternalReferenceCount");
  PJRT_ASSERT_OK(ExternalRef(true));
  PJRT_ASSERT_OK(ExternalRef(false));
  PJRT_ASSERT_OK(ExternalRef(false));
  std::vector<float> back;
  PJRT_ASSERT_OK(ReadVector(buffer_.get(), &back));
  EXPECT_EQ(back, values_);
}

TEST_F(BufferTest, DecreasingExternalReferencesAtZeroIsAnError) {
  const Status status = ExternalRef(false);
  if (status.unimplemented()) GTEST_SKIP() << "external references: " << status.message;
  PJRT_ASSERT_ERROR(status);
}

// Host data at `offset` bytes past a 64-byte boundary of an owned allocation (jaxlib hands
// numpy's data over as it is: large arrays sit 16 bytes past a page boundary).
class HostData {
 public:
  HostData(size_t count, size_t offset, float value)
      : storage_(count * sizeof(float) + 128), count_(count) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = reinterpret_cast<float*>(storage_.data() + (64 - base % 64) % 64 + offset);
    for (size_t i = 0; i < count; ++i) data_[i] = value == 0 ? 0.25f * i - 3 : value;
  }
  const float* data() const { return data_; }
  size_t count() const { return count_; }

 private:
  std::vector<char> storage_;
  size_t count_;
  float* data_;
};

TEST_F(BufferTest, ExternalReferenceKeepsTheDataAfterDelete) {
  // jaxlib's buffer protocol / DLPack: reference, pointer, Array.delete(), more device_puts of
  // the same size (which may reuse freed memory), then read through the pointer.
  for (size_t count : {size_t{12}, size_t{1} << 18}) {  // 48 bytes and 1 MiB.
    for (size_t offset : {size_t{0}, size_t{16}}) {
      for (PJRT_HostBufferSemantics semantics :
           {PJRT_HostBufferSemantics_kImmutableZeroCopy,
            PJRT_HostBufferSemantics_kImmutableOnlyDuringCall}) {
        SCOPED_TRACE("floats " + std::to_string(count) + ", offset " + std::to_string(offset) +
                     ", semantics " + std::to_string(static_cast<int>(semantics)));
        const std::vector<int64_t> dims = {static_cast<int64_t>(count)};
        HostData source(count, offset, 0.0f);
        const std::vector<float> expected(source.data(), source.data() + count);
        BufferPtr buffer;
        EventPtr done;
        PJRT_ASSERT_OK(FromHost(source.data(), PJRT_Buffer_Type_F32, dims, FirstDevice(),
                                &buffer, semantics, &done));
        PJRT_ASSERT_OK(AwaitReady(buffer.get()));
        PJRT_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, increase);
        increase.buffer = buffer.get();
        PJRT_SKIP_IF_UNIMPLEMENTED(
            PJRT_CALL(api()->PJRT_Buffer_IncreaseExternalReferenceCount(&increase)),
            "PJRT_Buffer_IncreaseExternalReferenceCount");
        PJRT_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, pointer);
        pointer.buffer = buffer.get();
        PJRT_SKIP_IF_UNIMPLEMENTED(
            PJRT_CALL(api()->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer)),
            "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
        PJRT_ARGS(PJRT_Buffer_IsOnCpu_Args, cpu);
        cpu.buffer = buffer.get();
        PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_IsOnCpu(&cpu)));
        if (!cpu.is_on_cpu) GTEST_SKIP() << "the data is not host-addressable";
        PJRT_ASSERT_OK(Delete(buffer.get()));

        std::vector<HostData> junk_sources;
        std::vector<BufferPtr> junk(4);
        std::vector<EventPtr> junk_done(4);
        for (int j = 0; j < 4; ++j) junk_sources.emplace_back(count, offset, 7.0f);
        for (int j = 0; j < 4; ++j) {
          PJRT_ASSERT_OK(FromHost(junk_sources[j].data(), PJRT_Buffer_Type_F32, dims,
                                  FirstDevice(), &junk[j], semantics, &junk_done[j]));
        }
        const float* data = static_cast<const float*>(pointer.device_memory_ptr);
        EXPECT_EQ(std::memcmp(data, expected.data(), count * sizeof(float)), 0)
            << "first values read through the pointer: " << data[0] << " " << data[1];

        PJRT_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, decrease);
        decrease.buffer = buffer.get();
        PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease)));
        bool deleted = false;
        PJRT_ASSERT_OK(IsDeleted(buffer.get(), &deleted));
        EXPECT_TRUE(deleted);
        junk.clear();
        buffer.reset();
      }
    }
  }
}

TEST_F(BufferTest, SubByteToHostWithALayoutAsJaxlibSendsIt) {
  // np.asarray of an int4/uint4/int2/uint2/float4 array: jaxlib asks for its row-major,
  // one-byte-per-element host layout through a PJRT_Buffer_MemoryLayout built by XLA's
  // ConvertToBufferMemoryLayoutData, which leaves every struct_size unset (1 here, as seen).
  PJRT_REQUIRE_SUB_BYTE_TYPES();
  struct Case {
    PJRT_Buffer_Type type;
    std::vector<uint8_t> values;  // One element per byte in its low bits, as ml_dtypes holds them.
  };
  const Case cases[] = {
      {PJRT_Buffer_Type_S4, {0, 1, 2, 0xF, 0x8, 7, 3}},  // 0, 1, 2, -1, -8, 7, 3.
      {PJRT_Buffer_Type_U4, {0, 1, 2, 15, 8, 7, 3}},
      {PJRT_Buffer_Type_S2, {0, 1, 2, 3, 1, 0, 2}},  // 0, 1, -2, -1, 1, 0, -2.
      {PJRT_Buffer_Type_U2, {0, 1, 2, 3, 1, 0, 2}},
      {PJRT_Buffer_Type_F4E2M1FN, {0, 2, 4, 9, 12, 7, 3}},  // 0, 1, 2, -0.5, -2, 6, 1.5.
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("PJRT_Buffer_Type " + std::to_string(static_cast<int>(c.type)));
    const std::vector<int64_t> dims = {static_cast<int64_t>(c.values.size())};
    BufferPtr buffer;
    PJRT_ASSERT_OK(FromHost(c.values.data(), c.type, dims, FirstDevice(), &buffer));
    const int64_t minor_to_major[] = {0};
    PJRT_Buffer_MemoryLayout layout;
    std::memset(&layout, 0xA5, sizeof(layout));
    layout.struct_size = 1;
    layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    layout.tiled.minor_to_major = minor_to_major;
    layout.tiled.minor_to_major_size = 1;
    layout.tiled.num_tiles = 0;
    layout.tiled.tile_dims = nullptr;
    layout.tiled.tile_dim_sizes = nullptr;
    std::vector<uint8_t> out(c.values.size(), 99);
    PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, args);
    args.src = buffer.get();
    args.host_layout = &layout;
    args.dst = out.data();
    args.dst_size = out.size();
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&args)));
    EventPtr event(api(), args.event);
    if (event) PJRT_ASSERT_OK(Await(event.get()));
    EXPECT_EQ(out, c.values);
  }
}

TEST_F(BufferTest, UnsafePointerOrUnimplemented) {
  PJRT_ASSERT_OK(AwaitReady(buffer_.get()));
  PJRT_ARGS(PJRT_Buffer_UnsafePointer_Args, args);
  args.buffer = buffer_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_UnsafePointer(&args)),
                             "PJRT_Buffer_UnsafePointer");
  EXPECT_NE(args.buffer_pointer, 0u);
  PJRT_ARGS(PJRT_Buffer_IsOnCpu_Args, cpu);
  cpu.buffer = buffer_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_IsOnCpu(&cpu)));
  if (cpu.is_on_cpu && args.buffer_pointer != 0) {
    // Host-resident and dense: the pointer must show the data.
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(args.buffer_pointer), values_.data(),
                          values_.size() * sizeof(float)),
              0);
  }
}

TEST_F(BufferTest, OpaqueDeviceMemoryPointerOrUnimplemented) {
  PJRT_ASSERT_OK(AwaitReady(buffer_.get()));
  PJRT_ASSERT_OK(ExternalRef(true));  // Keeps the pointer valid while we look.
  PJRT_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, args);
  args.buffer = buffer_.get();
  const Status status = PJRT_CALL(api()->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args));
  PJRT_ASSERT_OK(ExternalRef(false));
  PJRT_SKIP_IF_UNIMPLEMENTED(status, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  EXPECT_NE(args.device_memory_ptr, nullptr);
}

TEST_F(BufferTest, MemoryLayoutIsMajorToMinorOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_Buffer_GetMemoryLayout);
  PJRT_ARGS(PJRT_Buffer_GetMemoryLayout_Args, args);
  args.buffer = buffer_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_GetMemoryLayout(&args)),
                             "PJRT_Buffer_GetMemoryLayout");
  ASSERT_EQ(args.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  const PJRT_Buffer_MemoryLayout_Tiled& tiled = args.layout.tiled;
  EXPECT_EQ(std::vector<int64_t>(tiled.minor_to_major,
                                 tiled.minor_to_major + tiled.minor_to_major_size),
            (std::vector<int64_t>{1, 0}));
}

TEST_F(BufferTest, CopyRawToHostOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_Buffer_CopyRawToHost);
  std::vector<float> back(values_.size(), 0.0f);
  PJRT_ARGS(PJRT_Buffer_CopyRawToHost_Args, args);
  args.buffer = buffer_.get();
  args.dst = back.data();
  args.offset = 0;
  args.transfer_size = static_cast<int64_t>(back.size() * sizeof(float));
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Buffer_CopyRawToHost(&args)),
                             "PJRT_Buffer_CopyRawToHost");
  EventPtr event(api(), args.event);
  if (event) PJRT_ASSERT_OK(Await(event.get()));
  EXPECT_EQ(back, values_);
}

TEST_F(BufferTest, UninitializedBufferHasTheRequestedShapeOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_Client_CreateUninitializedBuffer);
  const std::vector<int64_t> dims = {4, 5};
  PJRT_ARGS(PJRT_Client_CreateUninitializedBuffer_Args, args);
  args.client = client();
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  args.shape_element_type = PJRT_Buffer_Type_S32;
  args.device = FirstDevice();
  args.memory = DefaultMemory(FirstDevice());
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Client_CreateUninitializedBuffer(&args)),
                             "PJRT_Client_CreateUninitializedBuffer");
  BufferPtr buffer(api(), args.buffer);
  PJRT_ARGS(PJRT_Buffer_Dimensions_Args, dim_args);
  dim_args.buffer = buffer.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_Dimensions(&dim_args)));
  EXPECT_EQ(std::vector<int64_t>(dim_args.dims, dim_args.dims + dim_args.num_dims), dims);
  PJRT_ARGS(PJRT_Buffer_ElementType_Args, type_args);
  type_args.buffer = buffer.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ElementType(&type_args)));
  EXPECT_EQ(type_args.type, PJRT_Buffer_Type_S32);
}

}  // namespace
}  // namespace pjrt_conformance
