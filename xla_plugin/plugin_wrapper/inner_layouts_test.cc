// InnerLayouts against the real XLA:CPU plugin: the extension's size, XLA:CPU's default, buffer
// and output layouts, and pjrtkit's encoding of them equal to XLA:CPU's own serialization.
#include "xla_plugin/plugin_wrapper/inner_layouts.h"

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

using ::pjrtkit::plugin_wrapper::InnerLayouts;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedBuffer;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;

class InnerLayoutsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(2).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  WrappedClient* xla_client() { return static_cast<WrappedClient*>(client_); }
  InnerLayouts Layouts() {
    StatusOr<InnerLayouts> layouts = InnerLayouts::Find(xla_client()->shared_inner());
    EXPECT_TRUE(layouts.ok()) << layouts.status().ToString();
    return std::move(layouts).value();
  }
  // XLA:CPU's default layout as pjrtkit encodes it (or "error: ...").
  std::string Default(ElementType type, const std::vector<int64_t>& dims) {
    StatusOr<MemoryLayout> layout =
        Layouts().DefaultLayout(xla_client()->inner_client(), type, dims);
    return layout.ok() ? EncodeXlaLayout(*layout) : "error: " + layout.status().ToString();
  }

  static Client* client_;
};

Client* InnerLayoutsTest::client_ = nullptr;

TEST_F(InnerLayoutsTest, TheExtensionHasPjrtkitsSize) {
  const PJRT_Extension_Base* found = nullptr;
  for (const PJRT_Extension_Base* e = xla_client()->inner().api()->extension_start; e != nullptr;
       e = e->next) {
    if (e->type == PJRT_Extension_Type_Layouts) found = e;
  }
  ASSERT_NE(found, nullptr);
  // XLA:CPU 0.0.1 has PJRT C API 0.81's extension (no GetParameterLayouts).
  EXPECT_EQ(found->struct_size, abi::kLayoutsExtensionSize081);
  EXPECT_EQ(abi::kLayoutsExtensionSize081, 72u);
}

TEST_F(InnerLayoutsTest, DefaultLayoutsAreRowMajorWithoutElementSizes) {
  EXPECT_EQ(Default(ElementType::kF32, {3, 4}), "{1,0}");
  EXPECT_EQ(Default(ElementType::kF32, {}), "{}");
  EXPECT_EQ(Default(ElementType::kF32, {1, 0, 3}), "{2,1,0}");
  EXPECT_EQ(Default(ElementType::kPred, {2}), "{0}");
  EXPECT_EQ(Default(ElementType::kS4, {5}), "{0}");
  EXPECT_EQ(Default(ElementType::kU2, {5, 3}), "{1,0}");
  EXPECT_EQ(Default(ElementType::kF4E2M1FN, {2, 2}), "{1,0}");
  // XLA:CPU aborts on these; refused before asking.
  EXPECT_EQ(Default(ElementType::kToken, {}),
            "error: INVALID_ARGUMENT: DefaultLayout: token arrays have no layout on XLA:CPU");
  EXPECT_EQ(Default(ElementType::kF32, {-1}),
            "error: INVALID_ARGUMENT: DefaultLayout: dims[0] is -1; dimensions must be >= 0");
}

TEST_F(InnerLayoutsTest, SubByteBuffersCarryTheirElementSize) {
  std::vector<uint8_t> packed = {0x21, 0x43};
  HostBufferArgs args;
  args.data = packed.data();
  args.type = ElementType::kS4;
  args.dims = {4};
  args.device = client_->devices()[0];
  StatusOr<HostBufferResult> result = client_->BufferFromHostBuffer(args);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto* buffer = static_cast<WrappedBuffer*>(result->buffer.get());
  StatusOr<MemoryLayout> inner = Layouts().BufferLayout(buffer->inner());
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  EXPECT_EQ(EncodeXlaLayout(*inner), "{0:E(4)}");
}

// A program whose first result is column-major (as JAX lowers jit out_shardings with a Format),
// with a packed int4 result and a default one.
constexpr char kLayoutModes[] = R"(
module @layout_modes {
  func.func @main(%a: tensor<3x4xi32>, %b: tensor<4xi4>)
      -> (tensor<3x4xi32> {mhlo.layout_mode = "{0,1}"}, tensor<4xi4>, tensor<3x4xi32>) {
    %0 = stablehlo.add %a, %a : tensor<3x4xi32>
    return %0, %b, %a : tensor<3x4xi32>, tensor<4xi4>, tensor<3x4xi32>
  }
})";

// A program with a token result (JAX's ordered effects).
constexpr char kTokenResult[] = R"(
module @token_result {
  func.func @main(%t: !stablehlo.token, %a: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
    return %t, %a : !stablehlo.token, tensor<2xf32>
  }
})";

TEST_F(InnerLayoutsTest, OutputLayoutsAreXlaCpusOwn) {
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kLayoutModes}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  StatusOr<std::vector<MemoryLayout>> layouts = (*loaded)->executable()->output_layouts();
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  ASSERT_EQ(layouts->size(), 3u);
  EXPECT_EQ(EncodeXlaLayout((*layouts)[0]), "{0,1}");
  EXPECT_EQ(EncodeXlaLayout((*layouts)[1]), "{0:E(4)}");
  EXPECT_EQ(EncodeXlaLayout((*layouts)[2]), "{1,0}");
}

// XLA:CPU refuses output layouts of programs with token results; JAX then takes no layouts from
// the executable (pxla._get_layouts_from_executable), exactly as with XLA:CPU loaded directly.
TEST_F(InnerLayoutsTest, TokenResultsHaveNoOutputLayouts) {
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kTokenResult}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  StatusOr<std::vector<MemoryLayout>> layouts = (*loaded)->executable()->output_layouts();
  EXPECT_EQ(layouts.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(layouts.status().message().find("doesn't support token or opaque outputs"),
            std::string::npos)
      << layouts.status().ToString();
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
