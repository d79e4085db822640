// The PJRT Layouts extension (layouts_extension.h) against the fake device: its place in the
// chain, argument checks, and the layouts of clients, topologies, buffers and executables in
// xla::Layout text, as jaxlib reads them.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace {

using ::pjrtkit::capi::test::ClientTest;
using ::pjrtkit::capi::test::Compile;
using ::pjrtkit::capi::test::Consume;
using ::pjrtkit::capi::test::DestroyBuffer;
using ::pjrtkit::capi::test::DestroyExecutable;
using ::pjrtkit::capi::test::DestroyLoaded;
using ::pjrtkit::capi::test::ErrorInfo;
using ::pjrtkit::capi::test::GetExecutable;
using ::pjrtkit::capi::test::MakeArgs;
using ::pjrtkit::capi::test::MakeF32Buffer;

// The Layouts extension of the table under test, or nullptr.
const abi::LayoutsExtension* FindLayouts(const PJRT_Api* api) {
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == PJRT_Extension_Type_Layouts) {
      return reinterpret_cast<const abi::LayoutsExtension*>(e);
    }
  }
  return nullptr;
}

class LayoutsExtensionTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    ext_ = FindLayouts(api_);
    ASSERT_NE(ext_, nullptr);
  }

  // Serializes `layout` through the extension, frees the bytes and, when `destroy`, the layout.
  std::string Text(PJRT_Layouts_MemoryLayout* layout, bool destroy = true) {
    abi::LayoutsMemoryLayoutSerializeArgs args{};
    args.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    args.layout = layout;
    ErrorInfo info = Consume(ext_->memory_layout_serialize(&args));
    EXPECT_TRUE(info.ok) << info.message;
    if (!info.ok) return "<error>";
    std::string text(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_layout_deleter(args.serialized_layout);
    if (destroy) {
      abi::LayoutsMemoryLayoutDestroyArgs destroy_args{};
      destroy_args.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
      destroy_args.layout = layout;
      ErrorInfo destroyed = Consume(ext_->memory_layout_destroy(&destroy_args));
      EXPECT_TRUE(destroyed.ok) << destroyed.message;
    }
    return text;
  }

  // The client's default layout for `type` and `dims` as text (or "error: <message>").
  std::string ClientDefault(PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
    abi::LayoutsClientGetDefaultLayoutArgs args{};
    args.struct_size = abi::kLayoutsClientGetDefaultLayoutArgsSize;
    args.client = client_;
    args.type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    ErrorInfo info = Consume(ext_->client_get_default_layout(&args));
    if (!info.ok) return "error: " + info.message;
    return Text(args.layout);
  }

  // The layout of `buffer` as text.
  std::string BufferLayout(PJRT_Buffer* buffer) {
    abi::LayoutsBufferMemoryLayoutArgs args{};
    args.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
    args.buffer = buffer;
    ErrorInfo info = Consume(ext_->buffer_memory_layout(&args));
    if (!info.ok) return "error: " + info.message;
    return Text(args.layout);
  }

  const abi::LayoutsExtension* ext_ = nullptr;  // Under test.
};

TEST_F(LayoutsExtensionTest, IsChainedBetweenFfiAndPjrtkitsOwn) {
  std::vector<int> types;
  for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
    types.push_back(RawEnumValue(e->type));  // pjrtkit's type is outside the enum (UBSan).
  }
  // Then Shardings, from the client layer: the fake device has no inner plugin to forward.
  ASSERT_EQ(types.size(), 4u);
  EXPECT_EQ(types[0], PJRT_Extension_Type_FFI);
  EXPECT_EQ(types[1], PJRT_Extension_Type_Layouts);
  EXPECT_EQ(types[2], 0x706A6B74);  // "pjkt".
  EXPECT_EQ(types[3], PJRT_Extension_Type_Shardings);
  EXPECT_EQ(ext_->base.struct_size, 80u);  // Version 4: GetParameterLayouts included.
  EXPECT_NE(ext_->executable_get_parameter_layouts, nullptr);
  EXPECT_NE(ext_->memory_layout_destroy, nullptr);
  EXPECT_NE(ext_->memory_layout_serialize, nullptr);
  EXPECT_NE(ext_->client_get_default_layout, nullptr);
  EXPECT_NE(ext_->buffer_memory_layout, nullptr);
  EXPECT_NE(ext_->topology_get_default_layout, nullptr);
  EXPECT_NE(ext_->executable_get_output_layouts, nullptr);
}

TEST_F(LayoutsExtensionTest, EveryEntryPointChecksItsArgs) {
  ErrorInfo info = Consume(ext_->memory_layout_destroy(nullptr));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::LayoutsMemoryLayoutDestroyArgs destroy{};
  destroy.struct_size = 16;
  info = Consume(ext_->memory_layout_destroy(&destroy));
  EXPECT_EQ(info.message,
            "PJRT_Layouts_MemoryLayout_Destroy: PJRT_Layouts_MemoryLayout_Destroy_Args "
            "struct_size is 16, expected at least 24 (the caller was built against an "
            "incompatible pjrt_c_api.h)");
  destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
  EXPECT_TRUE(Consume(ext_->memory_layout_destroy(&destroy)).ok);  // A null layout is fine.

  abi::LayoutsMemoryLayoutSerializeArgs serialize{};
  serialize.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize - 8;
  EXPECT_EQ(Consume(ext_->memory_layout_serialize(&serialize)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  serialize.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
  EXPECT_EQ(Consume(ext_->memory_layout_serialize(&serialize)).message,
            "PJRT_Layouts_MemoryLayout_Serialize: args->layout is null");

  abi::LayoutsClientGetDefaultLayoutArgs client{};
  client.struct_size = abi::kLayoutsClientGetDefaultLayoutArgsSize;
  EXPECT_EQ(Consume(ext_->client_get_default_layout(&client)).message,
            "PJRT_Layouts_PJRT_Client_GetDefaultLayout: args->client is null");

  abi::LayoutsBufferMemoryLayoutArgs buffer{};
  buffer.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
  EXPECT_EQ(Consume(ext_->buffer_memory_layout(&buffer)).message,
            "PJRT_Layouts_PJRT_Buffer_MemoryLayout: args->buffer is null");
  buffer.struct_size = 0;
  EXPECT_EQ(Consume(ext_->buffer_memory_layout(&buffer)).message,
            "PJRT_Layouts_PJRT_Buffer_MemoryLayout: PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args "
            "struct_size is 0, expected at least 32 (the caller was built against an "
            "incompatible pjrt_c_api.h)");

  abi::LayoutsTopologyGetDefaultLayoutArgs topology{};
  topology.struct_size = abi::kLayoutsTopologyGetDefaultLayoutArgsSize;
  EXPECT_EQ(Consume(ext_->topology_get_default_layout(&topology)).message,
            "PJRT_Layouts_PJRT_Topology_GetDefaultLayout: args->topology_description is null");

  abi::LayoutsExecutableGetOutputLayoutsArgs outputs{};
  outputs.struct_size = abi::kLayoutsExecutableGetOutputLayoutsArgsSize;
  EXPECT_EQ(Consume(ext_->executable_get_output_layouts(&outputs)).message,
            "PJRT_Layouts_PJRT_Executable_GetOutputLayouts: args->executable is null");
  outputs.struct_size = 32;
  EXPECT_EQ(Consume(ext_->executable_get_output_layouts(&outputs)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(LayoutsExtensionTest, ClientDefaultLayouts) {
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_F32, {3, 4}), "{1,0}");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_S32, {2, 3, 4}), "{2,1,0}");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_F32, {}), "{}");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_PRED, {0}), "{0}");
  // The device's answer reaches the caller (the fake packs sub-byte types).
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_S4, {5}), "{0:E(4)}");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_U2, {2, 2}), "{1,0:E(2)}");
  // Tokens have no dimensions; answered without asking the device.
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_TOKEN, {}), "{}");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_F32, {3, -1}),
            "error: PJRT_Layouts_PJRT_Client_GetDefaultLayout: args->dims[1] is -1; dimensions "
            "must be >= 0");
  EXPECT_EQ(ClientDefault(PJRT_Buffer_Type_INVALID, {3}),
            "error: PJRT_Layouts_PJRT_Client_GetDefaultLayout: invalid PJRT_Buffer_Type 0");
  abi::LayoutsClientGetDefaultLayoutArgs args{};
  args.struct_size = abi::kLayoutsClientGetDefaultLayoutArgsSize;
  args.client = client_;
  args.type = PJRT_Buffer_Type_F32;
  args.num_dims = 2;
  EXPECT_EQ(Consume(ext_->client_get_default_layout(&args)).message,
            "PJRT_Layouts_PJRT_Client_GetDefaultLayout: args->dims is null but args->num_dims "
            "is 2");
}

TEST_F(LayoutsExtensionTest, TopologyDefaultLayouts) {
  auto topology = MakeArgs<PJRT_Client_TopologyDescription_Args>();
  topology.client = client_;
  ASSERT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&topology));
  std::vector<int64_t> dims = {4, 6, 2};
  abi::LayoutsTopologyGetDefaultLayoutArgs args{};
  args.struct_size = abi::kLayoutsTopologyGetDefaultLayoutArgsSize;
  args.topology_description = topology.topology;
  args.type = PJRT_Buffer_Type_BF16;
  args.dims = dims.data();
  args.num_dims = dims.size();
  ASSERT_PJRT_OK(ext_->topology_get_default_layout(&args));
  EXPECT_EQ(Text(args.layout), "{2,1,0}");
  dims[0] = -4;
  EXPECT_EQ(Consume(ext_->topology_get_default_layout(&args)).message,
            "PJRT_Layouts_PJRT_Topology_GetDefaultLayout: args->dims[0] is -4; dimensions must "
            "be >= 0");
}

TEST_F(LayoutsExtensionTest, BufferLayouts) {
  PJRT_Buffer* row_major = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(BufferLayout(row_major), "{1,0}");

  // A column-major device layout, as jaxlib sends it: the buffer reports it.
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> m2m = {0, 1};
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = m2m.data();
  layout.tiled.minor_to_major_size = m2m.size();
  auto upload = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  upload.client = client_;
  upload.data = data.data();
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = dims.size();
  upload.device = devices_[0];
  upload.device_layout = &layout;
  ASSERT_PJRT_OK(api_->PJRT_Client_BufferFromHostBuffer(&upload));
  EXPECT_TRUE(test::AwaitAndDestroy(upload.done_with_host_buffer).ok);
  EXPECT_EQ(BufferLayout(upload.buffer), "{0,1}");

  // Metadata outlives the data: a deleted buffer still answers.
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = upload.buffer;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  EXPECT_EQ(BufferLayout(upload.buffer), "{0,1}");

  // Each call returns a new caller-owned layout.
  abi::LayoutsBufferMemoryLayoutArgs a{}, b{};
  a.struct_size = b.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
  a.buffer = b.buffer = row_major;
  ASSERT_PJRT_OK(ext_->buffer_memory_layout(&a));
  ASSERT_PJRT_OK(ext_->buffer_memory_layout(&b));
  EXPECT_NE(a.layout, b.layout);
  EXPECT_EQ(Text(a.layout), "{1,0}");
  EXPECT_EQ(Text(b.layout), "{1,0}");
  DestroyBuffer(upload.buffer);
  DestroyBuffer(row_major);
}

TEST_F(LayoutsExtensionTest, ExecutableOutputLayoutsAreOwnedByTheExecutable) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2,3] s32[] pred[4,1,5]",
                                          "output_layout=column");
  PJRT_Executable* executable = GetExecutable(loaded);
  abi::LayoutsExecutableGetOutputLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetOutputLayoutsArgsSize;
  args.executable = executable;
  ASSERT_PJRT_OK(ext_->executable_get_output_layouts(&args));
  ASSERT_EQ(args.num_outputs, 3u);
  EXPECT_EQ(Text(args.layouts[0], /*destroy=*/false), "{0,1}");
  EXPECT_EQ(Text(args.layouts[1], /*destroy=*/false), "{}");
  EXPECT_EQ(Text(args.layouts[2], /*destroy=*/false), "{0,1,2}");
  PJRT_Layouts_MemoryLayout** first = args.layouts;
  ASSERT_PJRT_OK(ext_->executable_get_output_layouts(&args));
  EXPECT_EQ(args.layouts, first);  // Cached on the handle.

  abi::LayoutsMemoryLayoutDestroyArgs destroy{};
  destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
  destroy.layout = args.layouts[0];
  ErrorInfo info = Consume(ext_->memory_layout_destroy(&destroy));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Layouts_MemoryLayout_Destroy: args->layout is an output or parameter layout "
            "of an executable, which the PJRT_Executable owns and frees (do not destroy it)");
  EXPECT_EQ(Text(args.layouts[0], /*destroy=*/false), "{0,1}");  // Still there.
  DestroyExecutable(executable);
  DestroyLoaded(loaded);

  // The client layer's default: row-major from the output dimensions.
  loaded = Compile(client_, "f32[2,3] u4[8]");
  executable = GetExecutable(loaded);
  args.executable = executable;
  ASSERT_PJRT_OK(ext_->executable_get_output_layouts(&args));
  ASSERT_EQ(args.num_outputs, 2u);
  EXPECT_EQ(Text(args.layouts[0], false), "{1,0}");
  EXPECT_EQ(Text(args.layouts[1], false), "{0}");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(LayoutsExtensionTest, AnInvalidLayoutFromTheDeviceIsAnInternalError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2,3]", "output_layout=invalid");
  PJRT_Executable* executable = GetExecutable(loaded);
  abi::LayoutsExecutableGetOutputLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetOutputLayoutsArgsSize;
  args.executable = executable;
  ErrorInfo info = Consume(ext_->executable_get_output_layouts(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message,
            "PJRT_Layouts_PJRT_Executable_GetOutputLayouts: the device returned an invalid "
            "layout for output 0: layout minor_to_major {0,0,0} is not a permutation of 2 "
            "dimensions");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

// The outputs of an execution report what the executable said it would produce.
TEST_F(LayoutsExtensionTest, OutputBuffersMatchTheOutputLayouts) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2,3]", "output_layout=column");
  PJRT_Buffer* input = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4, 5, 6}, {2, 3});
  PJRT_Buffer* const inputs[] = {input};
  PJRT_Buffer* const* argument_lists[] = {inputs};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[] = {outputs};
  auto options = MakeArgs<PJRT_ExecuteOptions>();
  auto execute = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  ASSERT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&execute));
  EXPECT_EQ(BufferLayout(outputs[0]), "{0,1}");
  DestroyBuffer(outputs[0]);
  DestroyBuffer(input);
  DestroyLoaded(loaded);
}

}  // namespace
}  // namespace capi
}  // namespace pjrtkit
