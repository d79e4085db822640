// Non-default layouts on the reference device against the real XLA:CPU plugin: the bytes in
// memory follow the layout a buffer reports, every read and copy gives the array's values, and
// an argument laid out differently from its parameter is refused rather than misread.
//
// XLA:CPU (xla-cpu-pjrt 0.0.1) itself copies bytes without looking at layouts (host_layout.h);
// the raw-byte checks below fail when it changes that, and the permutations here must then go.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::MemoryOfKind;
using ::pjrtkit::xla_cpu::testing::Upload;

// x = arange(12).reshape(3, 4), row-major, and its bytes in column-major order.
const std::vector<int32_t> kRowMajor = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
const std::vector<int32_t> kColumnMajor = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};

MemoryLayout ColumnMajor() {
  MemoryLayout layout;
  layout.minor_to_major = {0, 1};
  return layout;
}

// 2 * x with a column-major result (as JAX lowers jit out_shardings=Format(Layout((1, 0)))).
constexpr char kDoubleColumnMajorOut[] = R"(
module @double_cm_out {
  func.func @main(%a: tensor<3x4xi32>) -> (tensor<3x4xi32> {mhlo.layout_mode = "{0,1}"}) {
    %0 = stablehlo.add %a, %a : tensor<3x4xi32>
    return %0 : tensor<3x4xi32>
  }
})";

// x + 1 with a column-major parameter (jit in_shardings with a Format).
constexpr char kIncrementColumnMajorIn[] = R"(
module @increment_cm_in {
  func.func @main(%a: tensor<3x4xi32> {mhlo.layout_mode = "{0,1}"}) -> tensor<3x4xi32> {
    %c = stablehlo.constant dense<1> : tensor<3x4xi32>
    %0 = stablehlo.add %a, %c : tensor<3x4xi32>
    return %0 : tensor<3x4xi32>
  }
})";

// x + 1 with default layouts.
constexpr char kIncrement[] = R"(
module @increment {
  func.func @main(%a: tensor<3x4xi32>) -> tensor<3x4xi32> {
    %c = stablehlo.constant dense<1> : tensor<3x4xi32>
    %0 = stablehlo.add %a, %c : tensor<3x4xi32>
    return %0 : tensor<3x4xi32>
  }
})";

class XlaCpuLayoutsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(2).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  Device* device(int id) { return client_->devices()[id]; }

  // x on device 0 with a column-major device layout (host data row-major, or as `strides`).
  std::unique_ptr<Buffer> UploadColumnMajor(const std::vector<int32_t>& host,
                                            std::optional<std::vector<int64_t>> strides = {}) {
    HostBufferArgs args;
    args.data = host.data();
    args.type = ElementType::kS32;
    args.dims = {3, 4};
    args.byte_strides = std::move(strides);
    args.device = device(0);
    args.device_layout = ColumnMajor();
    StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return nullptr;
    EXPECT_TRUE(result->done_with_host_buffer->Await().ok());
    return std::move(result->buffer);
  }

  // The bytes the buffer holds, as they are (PJRT_Buffer_CopyRawToHost).
  static std::vector<int32_t> Raw(Buffer* buffer) {
    std::vector<int32_t> out(12, -1);
    StatusOr<std::shared_ptr<Event>> copied = buffer->CopyRawToHost(out.data(), 0, 48);
    EXPECT_TRUE(copied.ok()) << copied.status().ToString();
    if (copied.ok()) {
      EXPECT_TRUE((*copied)->Await().ok());
    }
    return out;
  }

  // The buffer read back with host layout `layout`.
  static std::vector<int32_t> Read(Buffer* buffer, const MemoryLayout& layout) {
    std::vector<int32_t> out(12, -1);
    StatusOr<std::shared_ptr<Event>> event = buffer->ToHostBuffer(out.data(), 48, &layout);
    EXPECT_TRUE(event.ok()) << event.status().ToString();
    if (event.ok()) {
      EXPECT_TRUE((*event)->Await().ok());
    }
    return out;
  }

  // Compiles `code`; fails the test on error.
  std::unique_ptr<LoadedExecutable> Compile(const char* code) {
    StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
        client_->Compile(Program{"mlir", code}, MinimalCompileOptions(1, 1, false));
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }

  // Runs a one-argument program; returns its only output.
  static StatusOr<std::unique_ptr<Buffer>> Run(LoadedExecutable* loaded, Buffer* argument) {
    StatusOr<ExecuteResult> result = loaded->Execute({{argument}}, ExecuteOptions());
    if (!result.ok()) return result.status();
    return std::move(result->outputs[0][0]);
  }

  static std::string LayoutText(Buffer* buffer) {
    StatusOr<MemoryLayout> layout = buffer->layout();
    return layout.ok() ? EncodeXlaLayout(*layout) : layout.status().ToString();
  }

  static Client* client_;
};

Client* XlaCpuLayoutsTest::client_ = nullptr;

TEST_F(XlaCpuLayoutsTest, DeviceLayoutLaysTheDataOut) {
  std::unique_ptr<Buffer> buffer = UploadColumnMajor(kRowMajor);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(LayoutText(buffer.get()), "{0,1}");
  EXPECT_EQ(Raw(buffer.get()), kColumnMajor);  // XLA:CPU alone leaves kRowMajor here.
  EXPECT_EQ(Download<int32_t>(buffer.get(), 12), kRowMajor);
  EXPECT_EQ(Read(buffer.get(), ColumnMajor()), kColumnMajor);
  // Column-major host data (byte strides) into a column-major buffer.
  std::unique_ptr<Buffer> strided = UploadColumnMajor(kColumnMajor, std::vector<int64_t>{4, 12});
  ASSERT_NE(strided, nullptr);
  EXPECT_EQ(Raw(strided.get()), kColumnMajor);
  EXPECT_EQ(Download<int32_t>(strided.get(), 12), kRowMajor);
}

TEST_F(XlaCpuLayoutsTest, ColumnMajorOutputsReadBackRowMajor) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kDoubleColumnMajorOut);
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::vector<MemoryLayout>> layouts = loaded->executable()->output_layouts();
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(EncodeXlaLayout((*layouts)[0]), "{0,1}");
  std::unique_ptr<Buffer> x = Upload(client_, ElementType::kS32, kRowMajor, {3, 4}, device(0));
  StatusOr<std::unique_ptr<Buffer>> y = Run(loaded.get(), x.get());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(LayoutText(y->get()), "{0,1}");
  EXPECT_EQ(Raw(y->get()), (std::vector<int32_t>{0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22}));
  // Row-major reads (a null host layout and an explicit one) permute; XLA:CPU alone returns the
  // column-major bytes for both.
  EXPECT_EQ(Download<int32_t>(y->get(), 12),
            (std::vector<int32_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}));
  EXPECT_EQ(Read(y->get(), RowMajorLayout(2)),
            (std::vector<int32_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}));
  EXPECT_EQ(Read(y->get(), ColumnMajor()),
            (std::vector<int32_t>{0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22}));
}

TEST_F(XlaCpuLayoutsTest, CopiesKeepTheLayout) {
  std::unique_ptr<Buffer> buffer = UploadColumnMajor(kRowMajor);
  ASSERT_NE(buffer, nullptr);
  StatusOr<std::unique_ptr<Buffer>> on_device_1 = buffer->CopyToDevice(device(1));
  ASSERT_TRUE(on_device_1.ok()) << on_device_1.status().ToString();
  EXPECT_EQ((*on_device_1)->device(), device(1));
  EXPECT_EQ(LayoutText(on_device_1->get()), "{0,1}");  // XLA:CPU's copy says {1,0}.
  EXPECT_EQ(Raw(on_device_1->get()), kColumnMajor);
  EXPECT_EQ(Download<int32_t>(on_device_1->get(), 12), kRowMajor);

  Memory* pinned = MemoryOfKind(device(0), "pinned_host");
  ASSERT_NE(pinned, nullptr);
  StatusOr<std::unique_ptr<Buffer>> on_host = buffer->CopyToMemory(pinned);
  ASSERT_TRUE(on_host.ok()) << on_host.status().ToString();
  EXPECT_EQ((*on_host)->memory(), pinned);
  EXPECT_EQ(LayoutText(on_host->get()), "{0,1}");
  EXPECT_EQ(Download<int32_t>(on_host->get(), 12), kRowMajor);
  // Back to device memory, still column-major.
  StatusOr<std::unique_ptr<Buffer>> back = (*on_host)->CopyToMemory(device(0)->default_memory());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(LayoutText(back->get()), "{0,1}");
  EXPECT_EQ(Download<int32_t>(back->get(), 12), kRowMajor);
}

TEST_F(XlaCpuLayoutsTest, ArgumentsMustHaveTheParameterLayout) {
  std::unique_ptr<Buffer> column_major = UploadColumnMajor(kRowMajor);
  std::unique_ptr<Buffer> row_major =
      Upload(client_, ElementType::kS32, kRowMajor, {3, 4}, device(0));
  ASSERT_NE(column_major, nullptr);

  std::unique_ptr<LoadedExecutable> plain = Compile(kIncrement);
  ASSERT_NE(plain, nullptr);
  StatusOr<std::unique_ptr<Buffer>> refused = Run(plain.get(), column_major.get());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "Execute: argument 0 of 'increment' must be laid out {1,0}, got {0,1} (XLA:CPU would "
            "read its bytes in the program's layout; copy the array into that layout first)");

  std::unique_ptr<LoadedExecutable> column = Compile(kIncrementColumnMajorIn);
  ASSERT_NE(column, nullptr);
  StatusOr<std::unique_ptr<Buffer>> y = Run(column.get(), column_major.get());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Download<int32_t>(y->get(), 12),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(Run(column.get(), row_major.get()).status().message(),
            "Execute: argument 0 of 'increment_cm_in' must be laid out {0,1}, got {1,0} (XLA:CPU "
            "would read its bytes in the program's layout; copy the array into that layout "
            "first)");
}

TEST_F(XlaCpuLayoutsTest, DefaultLayoutsComeFromXlaCpu) {
  StatusOr<MemoryLayout> f32 = client_->DefaultLayout(ElementType::kF32, {3, 4}, nullptr);
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  EXPECT_EQ(EncodeXlaLayout(*f32), "{1,0}");
  StatusOr<MemoryLayout> s4 = client_->DefaultLayout(ElementType::kS4, {7}, nullptr);
  ASSERT_TRUE(s4.ok()) << s4.status().ToString();
  EXPECT_EQ(EncodeXlaLayout(*s4), "{0}");
  StatusOr<const Topology*> topology = client_->topology();
  ASSERT_TRUE(topology.ok());
  StatusOr<MemoryLayout> topo = (*topology)->DefaultLayout(ElementType::kBF16, {2, 3, 4});
  ASSERT_TRUE(topo.ok()) << topo.status().ToString();
  EXPECT_EQ(EncodeXlaLayout(*topo), "{2,1,0}");
  // A packed buffer reports its element size (PJRT_Buffer_GetMemoryLayout cannot).
  std::vector<uint8_t> packed = {0x21, 0x43};
  HostBufferArgs args;
  args.data = packed.data();
  args.type = ElementType::kS4;
  args.dims = {4};
  args.device = device(0);
  StatusOr<HostBufferResult> s4_buffer = client_->BufferFromHostBuffer(args);
  ASSERT_TRUE(s4_buffer.ok()) << s4_buffer.status().ToString();
  EXPECT_EQ(LayoutText(s4_buffer->buffer.get()), "{0:E(4)}");
}

TEST_F(XlaCpuLayoutsTest, UnsupportedDeviceLayoutsAreRefused) {
  std::vector<float> data(6, 1.0f);
  HostBufferArgs args;
  args.data = data.data();
  args.type = ElementType::kF32;
  args.dims = {2, 3};
  args.device = device(0);
  MemoryLayout tiled = ColumnMajor();
  tiled.tiles = {{2, 2}};
  args.device_layout = tiled;
  StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(),
            "BufferFromHostBuffer: tiled device layouts are not supported by the xla_cpu device");
  std::vector<uint8_t> packed(4, 0);
  args.data = packed.data();
  args.type = ElementType::kS4;
  args.dims = {2, 4};
  args.device_layout = ColumnMajor();
  result = client_->BufferFromHostBuffer(args);
  EXPECT_EQ(result.status().message(),
            "BufferFromHostBuffer: non-default device layouts of s4 arrays are not supported by "
            "the xla_cpu device");
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
