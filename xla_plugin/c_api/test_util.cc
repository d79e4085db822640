#include "xla_plugin/c_api/test_util.h"

// pjrtkit.
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace test {

const PJRT_Api* Api() { return CreatePjrtApi<testing::FakeFactory>(); }

ErrorInfo Consume(PJRT_Error* error, const PJRT_Api* api) {
  ErrorInfo info;
  if (error == nullptr) return info;
  info.ok = false;
  auto code = MakeArgs<PJRT_Error_GetCode_Args>();
  code.error = error;
  PJRT_Error* code_error = api->PJRT_Error_GetCode(&code);
  EXPECT_EQ(code_error, nullptr) << "PJRT_Error_GetCode failed";
  info.code = code.code;
  auto message = MakeArgs<PJRT_Error_Message_Args>();
  message.error = error;
  api->PJRT_Error_Message(&message);
  info.message.assign(message.message, message.message_size);
  auto destroy = MakeArgs<PJRT_Error_Destroy_Args>();
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
  return info;
}

PJRT_Client* CreateClient(const std::vector<PJRT_NamedValue>& options) {
  auto args = MakeArgs<PJRT_Client_Create_Args>();
  args.create_options = options.empty() ? nullptr : options.data();
  args.num_options = options.size();
  ErrorInfo info = Consume(Api()->PJRT_Client_Create(&args));
  EXPECT_TRUE(info.ok) << info.message;
  return info.ok ? args.client : nullptr;
}

void DestroyClient(PJRT_Client* client) {
  auto args = MakeArgs<PJRT_Client_Destroy_Args>();
  args.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_Destroy(&args));
}

namespace {

// A PJRT_NamedValue named `name` of `type`, value fields left for the caller.
PJRT_NamedValue Named(const char* name, PJRT_NamedValue_Type type) {
  PJRT_NamedValue v;
  std::memset(&v, 0, sizeof(v));
  v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v.name = name;
  v.name_size = std::strlen(name);
  v.type = type;
  v.value_size = 1;
  return v;
}

}  // namespace

PJRT_NamedValue IntOption(const char* name, int64_t value) {
  PJRT_NamedValue v = Named(name, PJRT_NamedValue_kInt64);
  v.int64_value = value;
  return v;
}

PJRT_NamedValue StringOption(const char* name, const std::string& value) {
  PJRT_NamedValue v = Named(name, PJRT_NamedValue_kString);
  v.string_value = value.data();
  v.value_size = value.size();
  return v;
}

PJRT_NamedValue BoolOption(const char* name, bool value) {
  PJRT_NamedValue v = Named(name, PJRT_NamedValue_kBool);
  v.bool_value = value;
  return v;
}

PJRT_NamedValue FloatOption(const char* name, float value) {
  PJRT_NamedValue v = Named(name, PJRT_NamedValue_kFloat);
  v.float_value = value;
  return v;
}

PJRT_NamedValue ListOption(const char* name, const std::vector<int64_t>& value) {
  PJRT_NamedValue v = Named(name, PJRT_NamedValue_kInt64List);
  v.int64_array_value = value.data();
  v.value_size = value.size();
  return v;
}

std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client) {
  auto args = MakeArgs<PJRT_Client_AddressableDevices_Args>();
  args.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_AddressableDevices(&args));
  return {args.addressable_devices, args.addressable_devices + args.num_addressable_devices};
}

std::vector<PJRT_Device*> AllDevices(PJRT_Client* client) {
  auto args = MakeArgs<PJRT_Client_Devices_Args>();
  args.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_Devices(&args));
  return {args.devices, args.devices + args.num_devices};
}

std::vector<PJRT_Memory*> AddressableMemories(PJRT_Client* client) {
  auto args = MakeArgs<PJRT_Client_AddressableMemories_Args>();
  args.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_AddressableMemories(&args));
  return {args.addressable_memories, args.addressable_memories + args.num_addressable_memories};
}

PJRT_Buffer* MakeF32Buffer(PJRT_Client* client, PJRT_Device* device,
                           const std::vector<float>& values, const std::vector<int64_t>& dims) {
  auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  args.client = client;
  args.data = values.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = device;
  ErrorInfo info = Consume(Api()->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_TRUE(info.ok) << info.message;
  if (!info.ok) return nullptr;
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_host_buffer).ok);
  return args.buffer;
}

std::vector<float> ToHostF32(PJRT_Buffer* buffer) {
  auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  args.src = buffer;
  ErrorInfo query = Consume(Api()->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_TRUE(query.ok) << query.message;
  std::vector<float> out(args.dst_size / sizeof(float));
  args.dst = out.data();
  ErrorInfo copy = Consume(Api()->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_TRUE(copy.ok) << copy.message;
  if (copy.ok) {
    EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  }
  return out;
}

void DestroyBuffer(PJRT_Buffer* buffer) {
  auto args = MakeArgs<PJRT_Buffer_Destroy_Args>();
  args.buffer = buffer;
  EXPECT_PJRT_OK(Api()->PJRT_Buffer_Destroy(&args));
}

bool IsDeleted(PJRT_Buffer* buffer) {
  auto args = MakeArgs<PJRT_Buffer_IsDeleted_Args>();
  args.buffer = buffer;
  EXPECT_PJRT_OK(Api()->PJRT_Buffer_IsDeleted(&args));
  return args.is_deleted;
}

PJRT_LoadedExecutable* Compile(PJRT_Client* client, const std::string& code,
                               const std::string& options) {
  auto program = MakeArgs<PJRT_Program>();
  std::string code_copy = code;
  program.code = code_copy.data();
  program.code_size = code_copy.size();
  program.format = "mlir";
  program.format_size = 4;
  auto args = MakeArgs<PJRT_Client_Compile_Args>();
  args.client = client;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo info = Consume(Api()->PJRT_Client_Compile(&args));
  EXPECT_TRUE(info.ok) << info.message;
  return info.ok ? args.executable : nullptr;
}

void DestroyLoaded(PJRT_LoadedExecutable* executable) {
  auto args = MakeArgs<PJRT_LoadedExecutable_Destroy_Args>();
  args.executable = executable;
  EXPECT_PJRT_OK(Api()->PJRT_LoadedExecutable_Destroy(&args));
}

PJRT_Executable* GetExecutable(PJRT_LoadedExecutable* loaded) {
  auto args = MakeArgs<PJRT_LoadedExecutable_GetExecutable_Args>();
  args.loaded_executable = loaded;
  EXPECT_PJRT_OK(Api()->PJRT_LoadedExecutable_GetExecutable(&args));
  return args.executable;
}

void DestroyExecutable(PJRT_Executable* executable) {
  auto args = MakeArgs<PJRT_Executable_Destroy_Args>();
  args.executable = executable;
  EXPECT_PJRT_OK(Api()->PJRT_Executable_Destroy(&args));
}

ErrorInfo AwaitAndDestroy(PJRT_Event* event) {
  auto await = MakeArgs<PJRT_Event_Await_Args>();
  await.event = event;
  ErrorInfo info = Consume(Api()->PJRT_Event_Await(&await));
  auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
  destroy.event = event;
  EXPECT_PJRT_OK(Api()->PJRT_Event_Destroy(&destroy));
  return info;
}

testing::FakeClient* Fake(PJRT_Client* client) {
  return static_cast<testing::FakeClient*>(client->client.get());
}

void ClientTest::SetUp() {
  api_ = Api();
  client_ = CreateClient();
  ASSERT_NE(client_, nullptr);
  devices_ = AddressableDevices(client_);
  ASSERT_EQ(devices_.size(), 2u);
}

void ClientTest::TearDown() {
  if (client_ != nullptr) DestroyClient(client_);
}

std::string ShortStruct(const std::string& fn, size_t got, size_t want) {
  return fn + ": " + fn + "_Args struct_size is " + std::to_string(got) + ", expected at least " +
         std::to_string(want) + " (the caller was built against an incompatible pjrt_c_api.h)";
}

void AppendPayload(const char* key, size_t key_size, const char* value, size_t value_size,
                   void* user_arg) {
  *static_cast<std::string*>(user_arg) +=
      std::string(key, key_size) + "=" + std::string(value, value_size) + ";";
}

PJRT_Buffer_MemoryLayout TiledLayout(const std::vector<int64_t>& minor_to_major) {
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  return layout;
}

}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
