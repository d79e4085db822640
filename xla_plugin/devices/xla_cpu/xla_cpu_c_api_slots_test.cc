// The PJRT C API 0.82-0.117 slots as a framework sees them on the reference device: the PJRT_Api
// table of CreatePjrtApi<XlaCpuFactory>() over the real XLA:CPU plugin. Literal transfers fill
// XLA:CPU buffers that read back exactly; error buffers stop an execution before XLA:CPU runs;
// PJRT_Client_Load keeps the compile options; tracking events are null; the logical ids, parameter
// memory kinds and layouts of XLA:CPU executables; the UNIMPLEMENTED answers name the slot and
// XLA:CPU's PJRT C API 0.81.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::xla_cpu::testing::XlaCpuPluginPath;

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";

constexpr char kAllReduce[] = R"(
module @all_reduce attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})";

constexpr char kParameters[] = R"(
module @parameters {
  func.func @main(%a: tensor<3x2xi32> {mhlo.layout_mode = "{0,1}"}, %b: tensor<4xf32>)
      -> (tensor<3x2xi32>, tensor<4xf32>) {
    return %a, %b : tensor<3x2xi32>, tensor<4xf32>
  }
})";

// A zero-filled Args struct with its struct_size.
template <typename Args>
Args MakeArgs() {
  Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(Args);
  return args;
}

// What a PJRT_Error said.
struct ErrorInfo {
  bool ok = true;
  PJRT_Error_Code code = PJRT_Error_Code_OK;
  std::string message;
};

// "<slot> is not provided by the XLA:CPU plugin at <path> (PJRT C API 0.81)".
std::string NotProvided(const std::string& slot) {
  return slot + " is not provided by the XLA:CPU plugin at " + XlaCpuPluginPath() +
         " (PJRT C API 0.81)";
}

class XlaCpuCApiSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = CreatePjrtApi<XlaCpuFactory>();
    path_ = XlaCpuPluginPath();
    ASSERT_FALSE(path_.empty());
    PJRT_NamedValue options[2];
    std::memset(options, 0, sizeof(options));
    options[0].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    options[0].name = kPluginPathOption;
    options[0].name_size = std::strlen(kPluginPathOption);
    options[0].type = PJRT_NamedValue_kString;
    options[0].string_value = path_.data();
    options[0].value_size = path_.size();
    options[1].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    options[1].name = kDeviceCountOption;
    options[1].name_size = std::strlen(kDeviceCountOption);
    options[1].type = PJRT_NamedValue_kInt64;
    options[1].int64_value = 2;
    options[1].value_size = 1;
    auto create = MakeArgs<PJRT_Client_Create_Args>();
    create.create_options = options;
    create.num_options = 2;
    ErrorInfo info = Consume(api_->PJRT_Client_Create(&create));
    ASSERT_TRUE(info.ok) << info.message;
    client_ = create.client;
    auto devices = MakeArgs<PJRT_Client_AddressableDevices_Args>();
    devices.client = client_;
    ASSERT_TRUE(Consume(api_->PJRT_Client_AddressableDevices(&devices)).ok);
    devices_.assign(devices.addressable_devices,
                    devices.addressable_devices + devices.num_addressable_devices);
    ASSERT_EQ(devices_.size(), 2u);
  }
  void TearDown() override {
    if (client_ == nullptr) return;
    auto destroy = MakeArgs<PJRT_Client_Destroy_Args>();
    destroy.client = client_;
    EXPECT_TRUE(Consume(api_->PJRT_Client_Destroy(&destroy)).ok);
  }

  // Reads and destroys `error`.
  ErrorInfo Consume(PJRT_Error* error) {
    ErrorInfo info;
    if (error == nullptr) return info;
    info.ok = false;
    info.code = error->vtable->get_code(error);
    const char* message = nullptr;
    size_t size = 0;
    error->vtable->message(error, &message, &size);
    info.message.assign(message, size);
    auto destroy = MakeArgs<PJRT_Error_Destroy_Args>();
    destroy.error = error;
    api_->PJRT_Error_Destroy(&destroy);
    return info;
  }
  ErrorInfo AwaitAndDestroy(PJRT_Event* event) {
    auto await = MakeArgs<PJRT_Event_Await_Args>();
    await.event = event;
    ErrorInfo info = Consume(api_->PJRT_Event_Await(&await));
    auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
    destroy.event = event;
    EXPECT_TRUE(Consume(api_->PJRT_Event_Destroy(&destroy)).ok);
    return info;
  }
  PJRT_Memory* DefaultMemory(PJRT_Device* device) {
    auto args = MakeArgs<PJRT_Device_DefaultMemory_Args>();
    args.device = device;
    EXPECT_TRUE(Consume(api_->PJRT_Device_DefaultMemory(&args)).ok);
    return args.memory;
  }
  // `bytes` bytes of `buffer` read back.
  std::vector<uint8_t> Read(PJRT_Buffer* buffer, size_t bytes) {
    std::vector<uint8_t> out(bytes, 0xEE);
    auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
    args.src = buffer;
    args.dst = out.data();
    args.dst_size = out.size();
    ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&args));
    EXPECT_TRUE(info.ok) << info.message;
    if (info.ok) EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
    return out;
  }
  PJRT_Buffer* F32Buffer(const std::vector<float>& values, PJRT_Device* device) {
    std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
    auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
    args.client = client_;
    args.data = values.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = 1;
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.device = device;
    ErrorInfo info = Consume(api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_TRUE(info.ok) << info.message;
    if (!info.ok) return nullptr;
    EXPECT_TRUE(AwaitAndDestroy(args.done_with_host_buffer).ok);
    return args.buffer;
  }
  void DestroyBuffer(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_Destroy_Args>();
    args.buffer = buffer;
    EXPECT_TRUE(Consume(api_->PJRT_Buffer_Destroy(&args)).ok);
  }
  // PJRT_Client_Compile of MLIR `code` with `options`.
  PJRT_LoadedExecutable* Compile(const std::string& code, const std::string& options) {
    auto program = MakeArgs<PJRT_Program>();
    program.code = const_cast<char*>(code.data());
    program.code_size = code.size();
    program.format = "mlir";
    program.format_size = 4;
    auto args = MakeArgs<PJRT_Client_Compile_Args>();
    args.client = client_;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    ErrorInfo info = Consume(api_->PJRT_Client_Compile(&args));
    EXPECT_TRUE(info.ok) << info.message;
    return info.ok ? args.executable : nullptr;
  }
  PJRT_Executable* GetExecutable(PJRT_LoadedExecutable* loaded) {
    auto args = MakeArgs<PJRT_LoadedExecutable_GetExecutable_Args>();
    args.loaded_executable = loaded;
    EXPECT_TRUE(Consume(api_->PJRT_LoadedExecutable_GetExecutable(&args)).ok);
    return args.executable;
  }
  void Destroy(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_Destroy_Args>();
    args.executable = executable;
    EXPECT_TRUE(Consume(api_->PJRT_Executable_Destroy(&args)).ok);
  }
  void Destroy(PJRT_LoadedExecutable* loaded) {
    auto args = MakeArgs<PJRT_LoadedExecutable_Destroy_Args>();
    args.executable = loaded;
    EXPECT_TRUE(Consume(api_->PJRT_LoadedExecutable_Destroy(&args)).ok);
  }
  // PJRT_Executable_GetCompileOptions (or "error: <message>").
  std::string CompileOptions(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
    args.executable = executable;
    ErrorInfo info = Consume(api_->PJRT_Executable_GetCompileOptions(&args));
    if (!info.ok) return "error: " + info.message;
    std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_compile_options_deleter(args.serialized_compile_options);
    return bytes;
  }

  const PJRT_Api* api_ = nullptr;
  std::string path_;                   // The XLA:CPU plugin.
  PJRT_Client* client_ = nullptr;      // 2 devices.
  std::vector<PJRT_Device*> devices_;  // Its devices.
};

// ---- Literal transfers ------------------------------------------------------------------------

class XlaCpuTransferLiteralTest : public XlaCpuCApiSlotsTest {
 protected:
  void SetUp() override {
    XlaCpuCApiSlotsTest::SetUp();
    if (HasFatalFailure()) return;
    PJRT_ShapeSpec specs[2];
    std::memset(specs, 0, sizeof(specs));
    specs[0].struct_size = sizeof(PJRT_ShapeSpec);
    specs[0].element_type = PJRT_Buffer_Type_F32;
    specs[0].dims = dims0_.data();
    specs[0].num_dims = dims0_.size();
    specs[1].struct_size = sizeof(PJRT_ShapeSpec);
    specs[1].element_type = PJRT_Buffer_Type_S32;
    specs[1].dims = dims1_.data();
    specs[1].num_dims = dims1_.size();
    auto args = MakeArgs<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>();
    args.client = client_;
    args.shape_specs = specs;
    args.num_shape_specs = 2;
    args.memory = DefaultMemory(devices_[1]);
    ErrorInfo info = Consume(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
    ASSERT_TRUE(info.ok) << info.message;
    manager_ = args.transfer_manager;
  }
  void TearDown() override {
    if (manager_ != nullptr) {
      auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
      destroy.transfer_manager = manager_;
      EXPECT_TRUE(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy)).ok);
    }
    XlaCpuCApiSlotsTest::TearDown();
  }
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
  PJRT_Buffer* Retrieve(int index) {
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    EXPECT_TRUE(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args)).ok);
    return args.buffer_out;
  }

  std::vector<int64_t> dims0_ = {2, 3};  // f32[2,3].
  std::vector<int64_t> dims1_ = {4};     // s32[4].
  std::vector<int64_t> literal_dims_;
  PJRT_AsyncHostToDeviceTransferManager* manager_ = nullptr;
};

TEST_F(XlaCpuTransferLiteralTest, LiteralsFillXlaCpuBuffersExactly) {
  const std::vector<float> values = {1.5f, -2, 3.25f, 0, -0.0f, 1e30f};
  auto first = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 3});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&first));
  ASSERT_TRUE(info.ok) << info.message;
  ASSERT_NE(first.done_with_h2d_transfer, nullptr);
  EXPECT_TRUE(AwaitAndDestroy(first.done_with_h2d_transfer).ok);
  // The other buffer, its row-major layout spelled out.
  const std::vector<int32_t> ints = {-1, 0, 7, 2147483647};
  std::vector<int64_t> row = {0};
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = row.data();
  layout.tiled.minor_to_major_size = 1;
  auto second = Literal(1, ints.data(), PJRT_Buffer_Type_S32, {4});
  second.shape_layout = &layout;
  info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&second));
  ASSERT_TRUE(info.ok) << info.message;
  EXPECT_TRUE(AwaitAndDestroy(second.done_with_h2d_transfer).ok);
  PJRT_Buffer* a = Retrieve(0);
  PJRT_Buffer* b = Retrieve(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = a;
  EXPECT_TRUE(Consume(api_->PJRT_Buffer_Device(&device)).ok);
  EXPECT_EQ(device.device, devices_[1]);
  std::vector<uint8_t> read_a = Read(a, 24), read_b = Read(b, 16);
  EXPECT_EQ(std::memcmp(read_a.data(), values.data(), 24), 0);
  EXPECT_EQ(std::memcmp(read_b.data(), ints.data(), 16), 0);
  DestroyBuffer(a);
  DestroyBuffer(b);
}

TEST_F(XlaCpuTransferLiteralTest, AnotherShapeOrLayoutIsRefused) {
  const std::vector<float> values(6, 1.0f);
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {3, 2});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "f32[3,2] but buffer 0 is f32[2,3]");
  std::vector<int64_t> column = {0, 1};
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = column.data();
  layout.tiled.minor_to_major_size = 2;
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 3});
  args.shape_layout = &layout;
  info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal is laid out as "
            "{0,1} but buffer 0 as {1,0}; pjrtkit copies literals in the buffer's own layout "
            "only");
  // Refusals leave the buffer to be filled: this fills it.
  args.shape_layout = nullptr;
  info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  ASSERT_TRUE(info.ok) << info.message;
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  PJRT_Buffer* a = Retrieve(0);
  std::vector<uint8_t> read = Read(a, 24);
  EXPECT_EQ(std::memcmp(read.data(), values.data(), 24), 0);
  DestroyBuffer(a);
}

// ---- Error buffers ----------------------------------------------------------------------------

TEST_F(XlaCpuCApiSlotsTest, AnErrorBufferStopsAnXlaCpuExecution) {
  PJRT_LoadedExecutable* loaded = Compile(kAdd, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  std::vector<int64_t> dims = {2};
  const std::string message = "the producer failed";
  auto create = MakeArgs<PJRT_Client_CreateErrorBuffer_Args>();
  create.client = client_;
  create.error_code = PJRT_Error_Code_ABORTED;
  create.error_message = message.data();
  create.error_message_size = message.size();
  create.shape_dims = dims.data();
  create.shape_num_dims = 1;
  create.shape_element_type = PJRT_Buffer_Type_F32;
  create.memory = DefaultMemory(devices_[0]);
  ErrorInfo info = Consume(api_->PJRT_Client_CreateErrorBuffer(&create));
  ASSERT_TRUE(info.ok) << info.message;
  PJRT_Buffer* good = F32Buffer({1, 2}, devices_[0]);
  PJRT_Buffer* list[] = {good, create.buffer};
  PJRT_Buffer* const* lists[] = {list};
  PJRT_Buffer* out[1] = {nullptr};
  PJRT_Buffer** outputs[] = {out};
  auto options = MakeArgs<PJRT_ExecuteOptions>();
  auto execute = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = lists;
  execute.num_devices = 1;
  execute.num_args = 2;
  execute.output_lists = outputs;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&execute));
  EXPECT_EQ(info.code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][1] is an error buffer: the producer "
            "failed");
  EXPECT_EQ(out[0], nullptr);
  // With two good arguments it runs.
  list[1] = good;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&execute));
  ASSERT_TRUE(info.ok) << info.message;
  std::vector<uint8_t> read = Read(out[0], 8);
  const float expected[2] = {2, 4};
  EXPECT_EQ(std::memcmp(read.data(), expected, 8), 0);
  DestroyBuffer(out[0]);
  DestroyBuffer(good);
  DestroyBuffer(create.buffer);
  Destroy(loaded);
}

// ---- Executables ------------------------------------------------------------------------------

TEST_F(XlaCpuCApiSlotsTest, LoadingAnAheadOfTimeExecutableKeepsItsCompileOptions) {
  auto topology = MakeArgs<PJRT_Client_TopologyDescription_Args>();
  topology.client = client_;
  ASSERT_TRUE(Consume(api_->PJRT_Client_TopologyDescription(&topology)).ok);
  const std::string options = MinimalCompileOptions(1, 1, false);
  const std::string code = kAdd;
  auto program = MakeArgs<PJRT_Program>();
  program.code = const_cast<char*>(code.data());
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  auto compile = MakeArgs<PJRT_Compile_Args>();
  compile.topology = topology.topology;
  compile.program = &program;
  compile.compile_options = options.data();
  compile.compile_options_size = options.size();
  ErrorInfo info = Consume(api_->PJRT_Compile(&compile));
  ASSERT_TRUE(info.ok) << info.message;
  EXPECT_EQ(CompileOptions(compile.executable), options);
  auto load = MakeArgs<PJRT_Client_Load_Args>();
  load.client = client_;
  load.executable = compile.executable;
  info = Consume(api_->PJRT_Client_Load(&load));
  ASSERT_TRUE(info.ok) << info.message;
  PJRT_Executable* loaded_executable = GetExecutable(load.loaded_executable);
  EXPECT_EQ(CompileOptions(loaded_executable), options);
  // A deserialized executable without options: XLA:CPU 0.81 cannot say.
  auto serialize = MakeArgs<PJRT_Executable_Serialize_Args>();
  serialize.executable = compile.executable;
  ASSERT_TRUE(Consume(api_->PJRT_Executable_Serialize(&serialize)).ok);
  auto deserialize = MakeArgs<PJRT_Executable_DeserializeAndLoad_Args>();
  deserialize.client = client_;
  deserialize.serialized_executable = serialize.serialized_bytes;
  deserialize.serialized_executable_size = serialize.serialized_bytes_size;
  info = Consume(api_->PJRT_Executable_DeserializeAndLoad(&deserialize));
  ASSERT_TRUE(info.ok) << info.message;
  serialize.serialized_executable_deleter(serialize.serialized_executable);
  PJRT_Executable* deserialized = GetExecutable(deserialize.loaded_executable);
  EXPECT_EQ(CompileOptions(deserialized),
            "error: " + NotProvided("PJRT_Executable_GetCompileOptions"));
  Destroy(deserialized);
  Destroy(deserialize.loaded_executable);
  Destroy(loaded_executable);
  Destroy(load.loaded_executable);
  Destroy(compile.executable);
}

TEST_F(XlaCpuCApiSlotsTest, LogicalIdsOfTwoReplicas) {
  PJRT_LoadedExecutable* loaded = Compile(kAllReduce, MinimalCompileOptions(2, 1, false));
  ASSERT_NE(loaded, nullptr);
  auto args = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  args.executable = loaded;
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args));
  ASSERT_TRUE(info.ok) << info.message;
  ASSERT_EQ(args.num_addressable_device_logical_ids, 2u);
  EXPECT_EQ(args.addressable_device_logical_ids[0].replica, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[0].partition, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[1].replica, 1);
  EXPECT_EQ(args.addressable_device_logical_ids[1].partition, 0);
  Destroy(loaded);
}

TEST_F(XlaCpuCApiSlotsTest, ParameterMemoryKindsAndLayoutsOfAnXlaCpuExecutable) {
  PJRT_LoadedExecutable* loaded = Compile(kParameters, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto kinds = MakeArgs<PJRT_Executable_ParameterMemoryKinds_Args>();
  kinds.executable = executable;
  ErrorInfo info = Consume(api_->PJRT_Executable_ParameterMemoryKinds(&kinds));
  ASSERT_TRUE(info.ok) << info.message;
  ASSERT_EQ(kinds.num_parameters, 2u);
  EXPECT_EQ(std::string(kinds.memory_kinds[0], kinds.memory_kind_sizes[0]), "device");
  EXPECT_EQ(std::string(kinds.memory_kinds[1], kinds.memory_kind_sizes[1]), "device");
  const abi::LayoutsExtension* ext = nullptr;
  for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
    if (capi::RawEnumValue(e->type) == PJRT_Extension_Type_Layouts) {
      ext = reinterpret_cast<const abi::LayoutsExtension*>(e);
    }
  }
  ASSERT_NE(ext, nullptr);
  abi::LayoutsExecutableGetParameterLayoutsArgs layouts{};
  layouts.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  layouts.executable = executable;
  info = Consume(ext->executable_get_parameter_layouts(&layouts));
  ASSERT_TRUE(info.ok) << info.message;
  ASSERT_EQ(layouts.num_parameters, 2u);
  std::vector<std::string> text;
  for (size_t i = 0; i < 2; ++i) {
    abi::LayoutsMemoryLayoutSerializeArgs serialize{};
    serialize.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    serialize.layout = layouts.layouts[i];
    ASSERT_TRUE(Consume(ext->memory_layout_serialize(&serialize)).ok);
    text.emplace_back(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_layout_deleter(serialize.serialized_layout);
  }
  EXPECT_EQ(text, (std::vector<std::string>{"{0,1}", "{0}"}));
  Destroy(executable);
  Destroy(loaded);
}

// ---- Devices ----------------------------------------------------------------------------------

TEST_F(XlaCpuCApiSlotsTest, TrackingEventsAreNull) {
  const std::string description = "collective";
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  args.device = devices_[0];
  args.description = description.data();
  args.description_size = description.size();
  ErrorInfo info = Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  ASSERT_TRUE(info.ok) << info.message;
  EXPECT_EQ(args.event, nullptr);
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_TRUE(Consume(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy)).ok);
}

TEST_F(XlaCpuCApiSlotsTest, UnimplementedSlotsNameThemselvesAndXlaCpusVersion) {
  const std::string message = "peer lost";
  auto poison = MakeArgs<PJRT_Device_PoisonExecution_Args>();
  poison.device = devices_[0];
  poison.launch_id = 1;
  poison.error_code = PJRT_Error_Code_ABORTED;
  poison.error_message = message.data();
  poison.error_message_size = message.size();
  ErrorInfo info = Consume(api_->PJRT_Device_PoisonExecution(&poison));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message, NotProvided("PJRT_Device_PoisonExecution"));
  PJRT_Buffer* buffer = F32Buffer({1, 2}, devices_[1]);
  std::vector<int64_t> dims = {2};
  auto bitcast = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  bitcast.buffer = buffer;
  bitcast.element_type = PJRT_Buffer_Type_S32;
  bitcast.dims = dims.data();
  bitcast.num_dims = 1;
  info = Consume(api_->PJRT_Buffer_Bitcast(&bitcast));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message, NotProvided("PJRT_Buffer_Bitcast"));
  auto donate = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  donate.buffer = buffer;
  info = Consume(api_->PJRT_Buffer_DonateWithControlDependency(&donate));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message, NotProvided("PJRT_Buffer_DonateWithControlDependency"));
  EXPECT_EQ(donate.out_buffer, nullptr);
  std::vector<uint8_t> read = Read(buffer, 8);  // Untouched by either.
  const float expected[2] = {1, 2};
  EXPECT_EQ(std::memcmp(read.data(), expected, 8), 0);
  DestroyBuffer(buffer);
  auto topology = MakeArgs<PJRT_Client_TopologyDescription_Args>();
  topology.client = client_;
  ASSERT_TRUE(Consume(api_->PJRT_Client_TopologyDescription(&topology)).ok);
  auto kinds = MakeArgs<PJRT_TopologyDescription_GetMemorySpaceKindIds_Args>();
  kinds.topology = topology.topology;
  info = Consume(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&kinds));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message, NotProvided("PJRT_TopologyDescription_GetMemorySpaceKindIds"));
}

TEST_F(XlaCpuCApiSlotsTest, ClearMemoryStatsThroughTheTable) {
  PJRT_Buffer* big = F32Buffer(std::vector<float>(64, 1.0f), devices_[0]);
  PJRT_Buffer* small = F32Buffer({1, 2}, devices_[0]);
  DestroyBuffer(big);
  auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
  stats.device = devices_[0];
  ASSERT_TRUE(Consume(api_->PJRT_Device_MemoryStats(&stats)).ok);
  EXPECT_EQ(stats.bytes_in_use, 8);
  EXPECT_EQ(stats.peak_bytes_in_use, 264);
  auto clear = MakeArgs<PJRT_Device_ClearMemoryStats_Args>();
  clear.device = devices_[0];
  ASSERT_TRUE(Consume(api_->PJRT_Device_ClearMemoryStats(&clear)).ok);
  ASSERT_TRUE(Consume(api_->PJRT_Device_MemoryStats(&stats)).ok);
  EXPECT_EQ(stats.bytes_in_use, 8);
  EXPECT_EQ(stats.peak_bytes_in_use, 8);
  DestroyBuffer(small);
}

TEST_F(XlaCpuCApiSlotsTest, AnF6BufferIsRefusedByName) {
  const std::vector<uint8_t> bytes(4, 0);
  std::vector<int64_t> dims = {4};
  auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  args.client = client_;
  args.data = bytes.data();
  args.type = PJRT_Buffer_Type_F6E2M3FN;
  args.dims = dims.data();
  args.num_dims = 1;
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = devices_[0];
  ErrorInfo info = Consume(api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "element type f6e2m3fn (32) is not supported by the XLA:CPU plugin at " + path_ +
                ": its PJRT C API 0.81 knows element types up to f4e2m1fn");
  EXPECT_EQ(args.buffer, nullptr);
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
