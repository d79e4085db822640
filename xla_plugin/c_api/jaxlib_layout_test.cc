// Memory layouts as jaxlib sends them. jaxlib 0.11.2 and 0.12.0.1 build PJRT_Buffer_MemoryLayout
// with XLA's ConvertToBufferMemoryLayoutData, which writes `type` and the tiled (or strides)
// fields and sets no struct_size, outer or nested: what arrives there is whatever was on the
// stack (both releases were seen sending 1 and 2 to ToHostBuffer). Every entry point that takes
// a layout accepts that, and still checks the fields that matter.

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

// What the struct_size fields hold when jaxlib hands a layout over: the outer one and the
// nested (tiled/strides) one.
struct LeftOver {
  const char* name;  // Test name suffix.
  size_t outer;      // PJRT_Buffer_MemoryLayout::struct_size.
  size_t nested;     // PJRT_Buffer_MemoryLayout_{Tiled,Strides}::struct_size.
};

// The bytes an uninitialised stack slot showed (memset pattern 0xA5).
constexpr size_t kGarbage = 0xA5A5A5A5A5A5A5A5ull;

const LeftOver kLeftOvers[] = {
    {"Seen1", 1, kGarbage},  // ToHostBuffer from np.asarray(int4 array), both releases.
    {"Seen2", 2, kGarbage},  // ToHostBuffer from bitcast_convert_type to uint4, jaxlib 0.12.
    {"Zero", 0, 0},
    {"Garbage", kGarbage, kGarbage},
    {"OuterSetNestedZero", PJRT_Buffer_MemoryLayout_STRUCT_SIZE, 0},
    {"FullySet", PJRT_Buffer_MemoryLayout_STRUCT_SIZE, PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE},
};

// A layout filled field by field as ConvertToBufferMemoryLayoutData fills it, over memory that
// held garbage; the struct_size fields keep `left`'s values. The vectors must outlive it.
PJRT_Buffer_MemoryLayout JaxlibTiled(const std::vector<int64_t>& minor_to_major,
                                     const LeftOver& left,
                                     const std::vector<int64_t>& tile_dims = {},
                                     const std::vector<size_t>& tile_dim_sizes = {}) {
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0xA5, sizeof(layout));
  layout.struct_size = left.outer;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  PJRT_Buffer_MemoryLayout_Tiled tiled;
  std::memset(&tiled, 0xA5, sizeof(tiled));
  tiled.struct_size = left.nested;
  tiled.minor_to_major = minor_to_major.data();
  tiled.minor_to_major_size = minor_to_major.size();
  tiled.num_tiles = tile_dim_sizes.size();
  tiled.tile_dims = tile_dims.data();
  tiled.tile_dim_sizes = tile_dim_sizes.data();
  layout.tiled = tiled;
  return layout;
}

// The byte-strides form (ConvertToBufferMemoryLayoutData(byte_strides)).
PJRT_Buffer_MemoryLayout JaxlibStrides(const std::vector<int64_t>& byte_strides,
                                       const LeftOver& left) {
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0xA5, sizeof(layout));
  layout.struct_size = left.outer;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.struct_size = left.nested;
  layout.strides.byte_strides = byte_strides.data();
  layout.strides.num_byte_strides = byte_strides.size();
  return layout;
}

class JaxlibLayoutTest : public ClientTest, public ::testing::WithParamInterface<LeftOver> {
 protected:
  // ToHostBuffer of `buffer` (f32) with `layout`: size query, copy, await.
  ErrorInfo Read(PJRT_Buffer* buffer, PJRT_Buffer_MemoryLayout* layout, std::vector<float>* out) {
    auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
    args.src = buffer;
    args.host_layout = layout;
    ErrorInfo query = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
    if (!query.ok) return query;
    out->assign(args.dst_size / sizeof(float), -1.0f);
    args.dst = out->data();
    ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
    if (info.ok) EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
    return info;
  }
  // The default memory of `device`.
  PJRT_Memory* DefaultMemory(PJRT_Device* device) {
    auto args = MakeArgs<PJRT_Device_DefaultMemory_Args>();
    args.device = device;
    EXPECT_PJRT_OK(api_->PJRT_Device_DefaultMemory(&args));
    return args.memory;
  }
  // The minor_to_major PJRT_Buffer_GetMemoryLayout reports.
  std::vector<int64_t> ReportedMinorToMajor(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_GetMemoryLayout_Args>();
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_->PJRT_Buffer_GetMemoryLayout(&args));
    return std::vector<int64_t>(args.layout.tiled.minor_to_major,
                                args.layout.tiled.minor_to_major +
                                    args.layout.tiled.minor_to_major_size);
  }
};

TEST_P(JaxlibLayoutTest, ToHostBufferAcceptsTheHostLayout) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_NE(buffer, nullptr);
  std::vector<float> out;
  const std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(row_major, GetParam());
  ErrorInfo info = Read(buffer, &layout, &out);
  EXPECT_TRUE(info.ok) << info.message;
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  const std::vector<int64_t> column_major = {0, 1};
  layout = JaxlibTiled(column_major, GetParam());
  info = Read(buffer, &layout, &out);
  EXPECT_TRUE(info.ok) << info.message;
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));

  const std::vector<int64_t> strides = {4, 8};  // Column-major f32[2,3] in bytes.
  layout = JaxlibStrides(strides, GetParam());
  info = Read(buffer, &layout, &out);
  EXPECT_TRUE(info.ok) << info.message;
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  DestroyBuffer(buffer);
}

TEST_P(JaxlibLayoutTest, BufferFromHostBufferAcceptsTheDeviceLayout) {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> dims = {2, 3};
  const std::vector<int64_t> column_major = {0, 1};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(column_major, GetParam());
  auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.device = devices_[0];
  args.device_layout = &layout;
  ASSERT_PJRT_OK(api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_host_buffer).ok);
  EXPECT_EQ(ReportedMinorToMajor(args.buffer), column_major);
  DestroyBuffer(args.buffer);
}

TEST_P(JaxlibLayoutTest, CreateUninitializedBufferAcceptsTheShapeLayout) {
  const std::vector<int64_t> dims = {4, 2};
  const std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(row_major, GetParam());
  auto args = MakeArgs<PJRT_Client_CreateUninitializedBuffer_Args>();
  args.client = client_;
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  args.shape_element_type = PJRT_Buffer_Type_S32;
  args.shape_layout = &layout;
  args.device = devices_[1];
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_EQ(ReportedMinorToMajor(args.buffer), row_major);
  DestroyBuffer(args.buffer);
}

TEST_P(JaxlibLayoutTest, CreateViewOfDeviceBufferAcceptsTheLayout) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> dims = {3, 2};
  const std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(row_major, GetParam());
  auto args = MakeArgs<PJRT_Client_CreateViewOfDeviceBuffer_Args>();
  args.client = client_;
  args.device_buffer_ptr = data.data();
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.element_type = PJRT_Buffer_Type_F32;
  args.layout = &layout;
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(ToHostF32(args.buffer), data);
  DestroyBuffer(args.buffer);
}

TEST_P(JaxlibLayoutTest, AsyncTransfersAcceptDeviceLayoutsAndShapeSpecs) {
  const std::vector<int64_t> dims = {2, 2};
  PJRT_ShapeSpec spec;
  std::memset(&spec, 0xA5, sizeof(spec));  // XLA's own callers leave struct_size unset too.
  spec.struct_size = GetParam().nested;
  spec.element_type = PJRT_Buffer_Type_F32;
  spec.dims = dims.data();
  spec.num_dims = dims.size();
  const std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(row_major, GetParam());
  PJRT_Buffer_MemoryLayout* layouts[] = {&layout};
  auto args = MakeArgs<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>();
  args.client = client_;
  args.shape_specs = &spec;
  args.num_shape_specs = 1;
  args.device_layouts = layouts;
  args.num_device_layouts = 1;
  args.memory = DefaultMemory(devices_[0]);
  ASSERT_PJRT_OK(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
  auto size = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args>();
  size.transfer_manager = args.transfer_manager;
  size.buffer_index = 0;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
  EXPECT_EQ(size.buffer_size, 16u);
  auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
  destroy.transfer_manager = args.transfer_manager;
  EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
}

TEST_P(JaxlibLayoutTest, TheFieldsThatMatterAreStillChecked) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_NE(buffer, nullptr);
  std::vector<float> out;
  const std::vector<int64_t> row_major = {1, 0};
  PJRT_Buffer_MemoryLayout layout = JaxlibTiled(row_major, GetParam());
  layout.type = static_cast<PJRT_Buffer_MemoryLayout_Type>(7);
  ErrorInfo info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: unknown PJRT_Buffer_MemoryLayout_Type 7");

  const std::vector<int64_t> three = {2, 1, 0};
  layout = JaxlibTiled(three, GetParam());
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_ToHostBuffer: layout minor_to_major has 3 entries but the array has 2 "
            "dimensions");

  layout = JaxlibTiled(row_major, GetParam());
  layout.tiled.minor_to_major = nullptr;
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: layout minor_to_major is null");

  const std::vector<int64_t> repeated = {1, 1};
  layout = JaxlibTiled(repeated, GetParam());
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_ToHostBuffer: layout minor_to_major is not a permutation of the "
            "dimensions");

  const std::vector<int64_t> tile_dims = {8, 128, 2};
  const std::vector<size_t> tile_sizes = {3};
  layout = JaxlibTiled(row_major, GetParam(), tile_dims, tile_sizes);
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_ToHostBuffer: layout tile 0 has 3 dimensions but the array has 2");

  layout = JaxlibTiled(row_major, GetParam(), tile_dims, tile_sizes);
  layout.tiled.tile_dim_sizes = nullptr;
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: layout has tiles but tile_dim_sizes is null");

  const std::vector<int64_t> one_stride = {4};
  layout = JaxlibStrides(one_stride, GetParam());
  info = Read(buffer, &layout, &out);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_ToHostBuffer: layout has 1 byte strides but the array has 2 dimensions");
  DestroyBuffer(buffer);
}

INSTANTIATE_TEST_SUITE_P(StructSizes, JaxlibLayoutTest, ::testing::ValuesIn(kLeftOvers),
                         [](const ::testing::TestParamInfo<LeftOver>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
