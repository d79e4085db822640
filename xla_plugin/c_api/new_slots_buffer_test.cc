// The PJRT C API 0.82-0.117 slots of buffers against the fake device: error buffers
// (PJRT_Client_CreateErrorBuffer: metadata, every data operation and an execution failing with
// the error, older callers' shorter structs), PJRT_Buffer_CopyRawToHostFuture (the copy issued
// by the framework's callback, which may bring an error), literal transfers
// (PJRT_AsyncHostToDeviceTransferManager_TransferLiteral), and the C-API layer's side of
// PJRT_Buffer_Bitcast and PJRT_Buffer_DonateWithControlDependency.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// The text of the struct_size refusal of `fn` for `got` bytes when `want` are needed.
std::string ShortStruct(const std::string& fn, size_t got, size_t want) {
  return fn + ": " + fn + "_Args struct_size is " + std::to_string(got) + ", expected at least " +
         std::to_string(want) + " (the caller was built against an incompatible pjrt_c_api.h)";
}

// A pointer that must never be read: the tests put it in fields an older caller does not have.
template <typename T>
T* Poison() {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(0x10));
}

// Payload visitor: appends "key=value;" to the std::string at `user_arg`.
void AppendPayload(const char* key, size_t key_size, const char* value, size_t value_size,
                   void* user_arg) {
  *static_cast<std::string*>(user_arg) +=
      std::string(key, key_size) + "=" + std::string(value, value_size) + ";";
}

// A string-valued PJRT_NamedValue pointing at `name` and `value` (which must outlive it).
PJRT_NamedValue StringValue(const char* name, const char* value) {
  auto v = MakeArgs<PJRT_NamedValue>(PJRT_NamedValue_STRUCT_SIZE);
  v.name = name;
  v.name_size = std::strlen(name);
  v.type = PJRT_NamedValue_kString;
  v.string_value = value;
  v.value_size = std::strlen(value);
  return v;
}

// A tiled layout with `minor_to_major` and no tiles.
PJRT_Buffer_MemoryLayout TiledLayout(const std::vector<int64_t>& minor_to_major) {
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  return layout;
}

class NewBufferSlotsTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    memories_ = AddressableMemories(client_);
    ASSERT_EQ(memories_.size(), 3u);  // FAKE_0:device, FAKE_1:device, FAKE:pinned_host.
    // Read as an int: pjrtkit's own extension type is outside the enum (UBSan).
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
      if (RawEnumValue(e->type) == PJRT_Extension_Type_Layouts) {
        layouts_ = reinterpret_cast<const abi::LayoutsExtension*>(e);
      }
    }
    ASSERT_NE(layouts_, nullptr);
  }

  // CreateErrorBuffer args: f32[2] in device 0's memory, UNAVAILABLE "link down".
  PJRT_Client_CreateErrorBuffer_Args ErrorBufferArgs() {
    auto args = MakeArgs<PJRT_Client_CreateErrorBuffer_Args>();
    args.client = client_;
    args.error_code = PJRT_Error_Code_UNAVAILABLE;
    args.error_message = message_.data();
    args.error_message_size = message_.size();
    args.shape_dims = dims2_.data();
    args.shape_num_dims = dims2_.size();
    args.shape_element_type = PJRT_Buffer_Type_F32;
    args.memory = memories_[0];
    return args;
  }

  // Creates an error buffer from `args`; fails the test on error.
  PJRT_Buffer* CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args) {
    ErrorInfo info = Consume(api_->PJRT_Client_CreateErrorBuffer(args));
    EXPECT_TRUE(info.ok) << info.message;
    EXPECT_NE(args->buffer, nullptr);
    return info.ok ? args->buffer : nullptr;
  }

  // The layout of `buffer` as xla::Layout text, through the Layouts extension.
  std::string LayoutText(PJRT_Buffer* buffer) {
    abi::LayoutsBufferMemoryLayoutArgs get{};
    get.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
    get.buffer = buffer;
    ErrorInfo info = Consume(layouts_->buffer_memory_layout(&get));
    if (!info.ok) return "error: " + info.message;
    abi::LayoutsMemoryLayoutSerializeArgs serialize{};
    serialize.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    serialize.layout = get.layout;
    EXPECT_PJRT_OK(layouts_->memory_layout_serialize(&serialize));
    std::string text(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_layout_deleter(serialize.serialized_layout);
    abi::LayoutsMemoryLayoutDestroyArgs destroy{};
    destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
    destroy.layout = get.layout;
    EXPECT_PJRT_OK(layouts_->memory_layout_destroy(&destroy));
    return text;
  }

  // The payloads of the error `event` fails with, as "key=value;...", and that error.
  std::string EventPayloads(PJRT_Event* event, ErrorInfo* info) {
    auto await = MakeArgs<PJRT_Event_Await_Args>();
    await.event = event;
    PJRT_Error* error = api_->PJRT_Event_Await(&await);
    std::string payloads;
    if (error != nullptr) error->vtable->for_each_payload(error, &AppendPayload, &payloads);
    *info = Consume(error);
    auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
    destroy.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_Destroy(&destroy));
    return payloads;
  }

  // The ready event of `buffer`.
  PJRT_Event* ReadyEvent(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_->PJRT_Buffer_ReadyEvent(&args));
    return args.event;
  }

  bool IsReady(PJRT_Event* event) {
    auto args = MakeArgs<PJRT_Event_IsReady_Args>();
    args.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }

  // Runs `loaded` on device 0 with `arguments`; the outputs are destroyed. Returns the error
  // and, through `payloads`, its payloads.
  ErrorInfo Execute(PJRT_LoadedExecutable* loaded, std::vector<PJRT_Buffer*> arguments,
                    std::string* payloads) {
    PJRT_Buffer* const* lists[] = {arguments.data()};
    std::vector<PJRT_Buffer*> out(arguments.size(), nullptr);
    PJRT_Buffer** outputs[] = {out.data()};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = arguments.size();
    args.output_lists = outputs;
    PJRT_Error* error = api_->PJRT_LoadedExecutable_Execute(&args);
    if (error != nullptr) error->vtable->for_each_payload(error, &AppendPayload, payloads);
    ErrorInfo info = Consume(error);
    for (PJRT_Buffer* buffer : out) {
      if (info.ok) {
        EXPECT_NE(buffer, nullptr);
      } else {
        EXPECT_EQ(buffer, nullptr);  // A failed execution hands out nothing.
      }
      if (buffer != nullptr) DestroyBuffer(buffer);
    }
    return info;
  }

  std::string message_ = "link down";            // The error buffers' message.
  std::vector<int64_t> dims2_ = {2};              // f32[2].
  std::vector<PJRT_Memory*> memories_;            // The client's memories.
  const abi::LayoutsExtension* layouts_ = nullptr;  // For LayoutText.
};

// ---- PJRT_Client_CreateErrorBuffer ------------------------------------------------------------

TEST_F(NewBufferSlotsTest, AnErrorBufferHasItsShapeAndPlaceButNoMemory) {
  auto args = ErrorBufferArgs();
  args.memory = memories_[1];  // Device 1's.
  PJRT_Buffer* buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  auto type = MakeArgs<PJRT_Buffer_ElementType_Args>();
  type.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_F32);
  auto dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  dims.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Dimensions(&dims));
  ASSERT_EQ(dims.num_dims, 1u);
  EXPECT_EQ(dims.dims[0], 2);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, memories_[1]);
  auto size = MakeArgs<PJRT_Buffer_OnDeviceSizeInBytes_Args>();
  size.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_OnDeviceSizeInBytes(&size));
  EXPECT_EQ(size.on_device_size_in_bytes, 0u);
  auto on_cpu = MakeArgs<PJRT_Buffer_IsOnCpu_Args>();
  on_cpu.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_IsOnCpu(&on_cpu));
  EXPECT_FALSE(on_cpu.is_on_cpu);
  EXPECT_FALSE(IsDeleted(buffer));
  EXPECT_EQ(LayoutText(buffer), "{0}");  // The client's default for f32[2].
  // The memory counts nothing for it.
  auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
  stats.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.bytes_in_use, 0);
  DestroyBuffer(buffer);
}

TEST_F(NewBufferSlotsTest, AMemoryOfSeveralDevicesPlacesTheBufferOnTheFirst) {
  auto args = ErrorBufferArgs();
  args.memory = memories_[2];  // pinned_host, addressable by both devices.
  PJRT_Buffer* buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[0]);
  auto memory = MakeArgs<PJRT_Buffer_Memory_Args>();
  memory.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, memories_[2]);
  DestroyBuffer(buffer);
}

TEST_F(NewBufferSlotsTest, EveryDataOperationOfAnErrorBufferFailsWithItsError) {
  std::vector<PJRT_NamedValue> payload = {StringValue("where", "rack 7"),
                                          StringValue("retry", "yes")};
  auto args = ErrorBufferArgs();
  args.payload = payload.data();
  args.num_payload = payload.size();
  PJRT_Buffer* buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  // The ready event: the error, with its payloads (ToAttributeMap keeps them in name order).
  ErrorInfo info;
  EXPECT_EQ(EventPayloads(ReadyEvent(buffer), &info), "retry=yes;where=rack 7;");
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  // ToHostBuffer: the size query answers, the copy fails.
  auto host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  host.src = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&host));
  EXPECT_EQ(host.dst_size, 8u);
  float dst[2] = {-1, -1};
  host.dst = dst;
  info = Consume(api_->PJRT_Buffer_ToHostBuffer(&host));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  EXPECT_EQ(dst[0], -1);
  // Copies to another device or memory.
  auto to_device = MakeArgs<PJRT_Buffer_CopyToDevice_Args>();
  to_device.buffer = buffer;
  to_device.dst_device = devices_[1];
  info = Consume(api_->PJRT_Buffer_CopyToDevice(&to_device));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  EXPECT_EQ(to_device.dst_buffer, nullptr);
  auto to_memory = MakeArgs<PJRT_Buffer_CopyToMemory_Args>();
  to_memory.buffer = buffer;
  to_memory.dst_memory = memories_[2];
  info = Consume(api_->PJRT_Buffer_CopyToMemory(&to_memory));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  // Raw copies, at once and as a future.
  auto raw = MakeArgs<PJRT_Buffer_CopyRawToHost_Args>();
  raw.buffer = buffer;
  raw.dst = dst;
  raw.transfer_size = 0;
  info = Consume(api_->PJRT_Buffer_CopyRawToHost(&raw));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  auto future = MakeArgs<PJRT_Buffer_CopyRawToHostFuture_Args>();
  future.buffer = buffer;
  future.transfer_size = 4;
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&future));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  EXPECT_EQ(future.event, nullptr);
  EXPECT_EQ(future.future_ready_callback, nullptr);
  // Bitcasts and donations.
  auto bitcast = MakeArgs<PJRT_Buffer_Bitcast_Args>();
  bitcast.buffer = buffer;
  bitcast.element_type = PJRT_Buffer_Type_S32;
  bitcast.dims = dims2_.data();
  bitcast.num_dims = 1;
  info = Consume(api_->PJRT_Buffer_Bitcast(&bitcast));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  auto donate = MakeArgs<PJRT_Buffer_DonateWithControlDependency_Args>();
  donate.buffer = buffer;
  info = Consume(api_->PJRT_Buffer_DonateWithControlDependency(&donate));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  EXPECT_FALSE(IsDeleted(buffer));
  // Delete works like any buffer's.
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  EXPECT_TRUE(IsDeleted(buffer));
  DestroyBuffer(buffer);
}

TEST_F(NewBufferSlotsTest, AnExecutionGivenAnErrorBufferFailsWithItsError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] f32[2]");
  ASSERT_NE(loaded, nullptr);
  std::vector<PJRT_NamedValue> payload = {StringValue("origin", "host transfer")};
  auto args = ErrorBufferArgs();
  args.error_code = PJRT_Error_Code_DATA_LOSS;
  args.payload = payload.data();
  args.num_payload = 1;
  PJRT_Buffer* error_buffer = CreateErrorBuffer(&args);
  PJRT_Buffer* good = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  ASSERT_NE(error_buffer, nullptr);
  ASSERT_NE(good, nullptr);
  std::string payloads;
  ErrorInfo info = Execute(loaded, {good, error_buffer}, &payloads);
  EXPECT_EQ(info.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][1] is an error buffer: link down");
  EXPECT_EQ(payloads, "origin=host transfer;");
  payloads.clear();
  info = Execute(loaded, {error_buffer, good}, &payloads);
  EXPECT_EQ(info.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][0] is an error buffer: link down");
  // The device never ran: the fake records no launch.
  EXPECT_EQ(Fake(client_)->last_launch_id(), -1);
  // The arguments are untouched, and the good one still runs.
  payloads.clear();
  EXPECT_TRUE(Execute(loaded, {good, good}, &payloads).ok);
  EXPECT_EQ(payloads, "");
  EXPECT_EQ(ToHostF32(good), (std::vector<float>{1, 2}));
  DestroyBuffer(good);
  DestroyBuffer(error_buffer);
  DestroyLoaded(loaded);
}

TEST_F(NewBufferSlotsTest, ADeletedErrorBufferIsRefusedAsDeleted) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]");
  ASSERT_NE(loaded, nullptr);
  auto args = ErrorBufferArgs();
  PJRT_Buffer* buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  std::string payloads;
  ErrorInfo info = Execute(loaded, {buffer}, &payloads);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][0] has been deleted or donated");
  DestroyBuffer(buffer);
  DestroyLoaded(loaded);
}

TEST_F(NewBufferSlotsTest, DeviceLayoutWinsOverTheDeprecatedShapeLayout) {
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> column = {0, 1}, row = {1, 0};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  PJRT_Buffer_MemoryLayout row_layout = TiledLayout(row);
  auto args = ErrorBufferArgs();
  args.shape_dims = dims.data();
  args.shape_num_dims = 2;
  args.shape_layout = &column_layout;
  PJRT_Buffer* shape_only = CreateErrorBuffer(&args);
  ASSERT_NE(shape_only, nullptr);
  EXPECT_EQ(LayoutText(shape_only), "{0,1}");
  args.device_layout = &row_layout;
  PJRT_Buffer* both = CreateErrorBuffer(&args);
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(LayoutText(both), "{1,0}");
  args.shape_layout = nullptr;
  args.device_layout = &column_layout;
  PJRT_Buffer* device_only = CreateErrorBuffer(&args);
  ASSERT_NE(device_only, nullptr);
  EXPECT_EQ(LayoutText(device_only), "{0,1}");
  // Neither: the device's default for the shape (the fake packs sub-byte types).
  args.device_layout = nullptr;
  args.shape_element_type = PJRT_Buffer_Type_S4;
  PJRT_Buffer* packed = CreateErrorBuffer(&args);
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(LayoutText(packed), "{1,0:E(4)}");
  // An invalid layout is refused.
  std::vector<int64_t> repeated = {0, 0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(repeated);
  args.device_layout = &bad;
  ErrorInfo info = Consume(api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_CreateErrorBuffer: layout minor_to_major is not a permutation of the "
            "dimensions");
  for (PJRT_Buffer* b : {shape_only, both, device_only, packed}) DestroyBuffer(b);
}

TEST_F(NewBufferSlotsTest, AnOlderCallersStructEndsAtBuffer) {
  // A caller built before payload / num_payload / device_layout: they are never read (poisoned
  // pointers here would crash), so the error has no payloads and the shape layout is used.
  EXPECT_EQ(sizeof(PJRT_Client_CreateErrorBuffer_Args), 120u);
  EXPECT_EQ(offsetof(PJRT_Client_CreateErrorBuffer_Args, payload), 96u);
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> column = {0, 1};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  auto args = ErrorBufferArgs();
  args.struct_size = offsetof(PJRT_Client_CreateErrorBuffer_Args, payload);
  args.shape_dims = dims.data();
  args.shape_num_dims = 2;
  args.shape_layout = &column_layout;
  args.payload = Poison<const PJRT_NamedValue>();
  args.num_payload = 5;
  args.device_layout = Poison<PJRT_Buffer_MemoryLayout>();
  PJRT_Buffer* buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(args.payload, Poison<const PJRT_NamedValue>());  // Not written either.
  EXPECT_EQ(LayoutText(buffer), "{0,1}");
  ErrorInfo info;
  EXPECT_EQ(EventPayloads(ReadyEvent(buffer), &info), "");
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "link down");
  DestroyBuffer(buffer);

  // A struct that ends at num_payload: the payloads are read, device_layout is not.
  std::vector<PJRT_NamedValue> payload = {StringValue("k", "v")};
  args.struct_size = offsetof(PJRT_Client_CreateErrorBuffer_Args, device_layout);
  args.payload = payload.data();
  args.num_payload = 1;
  buffer = CreateErrorBuffer(&args);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(LayoutText(buffer), "{0,1}");
  EXPECT_EQ(EventPayloads(ReadyEvent(buffer), &info), "k=v;");
  DestroyBuffer(buffer);

  // One byte short of `buffer` is refused.
  args.struct_size = offsetof(PJRT_Client_CreateErrorBuffer_Args, buffer);
  info = Consume(api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Client_CreateErrorBuffer", 88, 96));
}

TEST_F(NewBufferSlotsTest, CreateErrorBufferChecksItsArguments) {
  auto args = ErrorBufferArgs();
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(nullptr)).message,
            "PJRT_Client_CreateErrorBuffer: args is null");
  args.client = nullptr;
  ErrorInfo info = Consume(api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Client_CreateErrorBuffer: args->client is null");
  args = ErrorBufferArgs();
  args.memory = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: args->memory is null");
  args = ErrorBufferArgs();
  args.error_code = PJRT_Error_Code_OK;
  info = Consume(api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_CreateErrorBuffer: error_code must be an error (1..16), got 0");
  const int unknown = 40;
  std::memcpy(&args.error_code, &unknown, sizeof(unknown));
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: error_code must be an error (1..16), got 40");
  args = ErrorBufferArgs();
  args.error_message = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: error_message is null but its size is 9");
  args = ErrorBufferArgs();
  std::vector<PJRT_NamedValue> not_a_string = {IntOption("count", 3)};
  args.payload = not_a_string.data();
  args.num_payload = 1;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: payload 'count' must be a string");
  args = ErrorBufferArgs();
  args.shape_element_type = PJRT_Buffer_Type_INVALID;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: invalid PJRT_Buffer_Type 0");
  args = ErrorBufferArgs();
  std::vector<int64_t> negative = {2, -3};
  args.shape_dims = negative.data();
  args.shape_num_dims = 2;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: dimension 1 is -3; dimensions must be >= 0");
  args.shape_dims = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_CreateErrorBuffer(&args)).message,
            "PJRT_Client_CreateErrorBuffer: dims is null but num_dims is 2");
  // A memory of another client.
  PJRT_Client* other = CreateClient();
  ASSERT_NE(other, nullptr);
  args = ErrorBufferArgs();
  args.memory = AddressableMemories(other)[0];
  info = Consume(api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_CreateErrorBuffer: args->memory belongs to another PJRT_Client");
  DestroyClient(other);
}

// ---- PJRT_Buffer_CopyRawToHostFuture ----------------------------------------------------------

// Calls a CopyRawToHostFuture callback as the framework does.
void Fulfil(const PJRT_Buffer_CopyRawToHostFuture_Args& future, void* dst,
            PJRT_Error_Code code = PJRT_Error_Code_OK, const char* message = nullptr,
            size_t struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE) {
  auto ready = MakeArgs<PJRT_Buffer_CopyRawToHostFuture_Callback_Args>();
  ready.struct_size = struct_size;
  ready.callback_data = future.callback_data;
  ready.error_code = code;
  ready.error_message = message;
  ready.error_message_size = message == nullptr ? 0 : std::strlen(message);
  ready.dst = dst;
  future.future_ready_callback(&ready);
}

class CopyRawToHostFutureTest : public NewBufferSlotsTest {
 protected:
  void SetUp() override {
    NewBufferSlotsTest::SetUp();
    buffer_ = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
    ASSERT_NE(buffer_, nullptr);
  }
  void TearDown() override {
    if (buffer_ != nullptr) DestroyBuffer(buffer_);
    NewBufferSlotsTest::TearDown();
  }

  // Args for bytes [offset, offset + size) of buffer_.
  PJRT_Buffer_CopyRawToHostFuture_Args Args(int64_t offset, int64_t size) {
    auto args = MakeArgs<PJRT_Buffer_CopyRawToHostFuture_Args>();
    args.buffer = buffer_;
    args.offset = offset;
    args.transfer_size = size;
    return args;
  }

  PJRT_Buffer* buffer_ = nullptr;  // f32[4] {1, 2, 3, 4} on device 0.
};

TEST_F(CopyRawToHostFutureTest, TheCopyHappensWhenTheDestinationIsReady) {
  auto args = Args(4, 8);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  ASSERT_NE(args.event, nullptr);
  ASSERT_NE(args.callback_data, nullptr);
  ASSERT_NE(args.future_ready_callback, nullptr);
  EXPECT_FALSE(IsReady(args.event));
  float dst[3] = {-1, -1, -1};
  Fulfil(args, dst);
  EXPECT_TRUE(IsReady(args.event));
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  EXPECT_EQ(dst[0], 2);
  EXPECT_EQ(dst[1], 3);
  EXPECT_EQ(dst[2], -1);  // Only transfer_size bytes are written.
}

TEST_F(CopyRawToHostFutureTest, TheEventMayBeDestroyedBeforeTheCallback) {
  auto args = Args(0, 16);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_Event_Destroy(&destroy));
  float dst[4] = {0, 0, 0, 0};
  Fulfil(args, dst);
  EXPECT_EQ(dst[3], 4);
}

TEST_F(CopyRawToHostFutureTest, ACallbackWithAnErrorFailsTheEventAndCopiesNothing) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[1] = {-1};
  Fulfil(args, dst, PJRT_Error_Code_RESOURCE_EXHAUSTED, "no pinned memory left");
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the destination failed: no pinned memory left");
  EXPECT_EQ(dst[0], -1);
  // Without a message.
  args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr, PJRT_Error_Code_CANCELLED);
  info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the destination failed: ");
}

TEST_F(CopyRawToHostFutureTest, ABadCallbackFailsTheEvent) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr);  // OK but no destination.
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the callback's dst is null");
  // A callback struct without dst.
  args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[1] = {-1};
  Fulfil(args, dst, PJRT_Error_Code_OK, nullptr, 40);
  info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: the callback's struct_size is 40");
  EXPECT_EQ(dst[0], -1);
  // A zero-byte copy needs no destination.
  args = Args(16, 0);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  Fulfil(args, nullptr);
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
}

TEST_F(CopyRawToHostFutureTest, ABufferDeletedBeforeTheCallbackFailsTheEvent) {
  auto args = Args(0, 4);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer_;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  float dst[1] = {-1};
  Fulfil(args, dst);
  ErrorInfo info = AwaitAndDestroy(args.event);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the buffer was deleted or donated before the "
            "destination was ready");
  EXPECT_EQ(dst[0], -1);
  // And a deleted buffer is refused up front.
  args = Args(0, 4);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: the buffer has been deleted or donated");
}

TEST_F(CopyRawToHostFutureTest, ArgumentChecks) {
  ErrorInfo info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(nullptr));
  EXPECT_EQ(info.message, "PJRT_Buffer_CopyRawToHostFuture: args is null");
  auto args = Args(0, 4);
  EXPECT_EQ(sizeof(PJRT_Buffer_CopyRawToHostFuture_Args), 64u);
  args.struct_size = 56;
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Buffer_CopyRawToHostFuture", 56, 64));
  args = Args(0, 4);
  args.buffer = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args)).message,
            "PJRT_Buffer_CopyRawToHostFuture: args->buffer is null");
  args = Args(-1, 4);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: offset (-1) and transfer_size (4) must be >= 0");
  args = Args(0, -4);
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args)).message,
            "PJRT_Buffer_CopyRawToHostFuture: offset (0) and transfer_size (-4) must be >= 0");
  args = Args(12, 8);
  info = Consume(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_CopyRawToHostFuture: [offset, offset + transfer_size) = [12, 20) is "
            "outside the buffer's 16 bytes");
  EXPECT_EQ(args.event, nullptr);
  EXPECT_EQ(args.future_ready_callback, nullptr);
  // The whole buffer is in range.
  args = Args(0, 16);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  float dst[4];
  Fulfil(args, dst);
  EXPECT_TRUE(AwaitAndDestroy(args.event).ok);
  EXPECT_EQ(dst[0], 1);
  EXPECT_EQ(dst[3], 4);
}

// ---- PJRT_AsyncHostToDeviceTransferManager_TransferLiteral ------------------------------------

class TransferLiteralTest : public NewBufferSlotsTest {
 protected:
  void SetUp() override {
    NewBufferSlotsTest::SetUp();
    specs_[0] = Spec(PJRT_Buffer_Type_F32, dims0_);
    specs_[1] = Spec(PJRT_Buffer_Type_S8, dims1_);
  }
  void TearDown() override {
    if (manager_ != nullptr) {
      auto destroy = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>();
      destroy.transfer_manager = manager_;
      EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
    }
    NewBufferSlotsTest::TearDown();
  }

  static PJRT_ShapeSpec Spec(PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
    auto spec = MakeArgs<PJRT_ShapeSpec>();
    spec.element_type = type;
    spec.dims = dims.data();
    spec.num_dims = dims.size();
    return spec;
  }

  // Makes the manager of specs_ in device 0's memory, with `layouts` (one per spec) when given.
  void Create(PJRT_Buffer_MemoryLayout** layouts = nullptr) {
    auto args = MakeArgs<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>();
    args.client = client_;
    args.shape_specs = specs_;
    args.num_shape_specs = 2;
    args.device_layouts = layouts;
    args.num_device_layouts = layouts == nullptr ? 0 : 2;
    args.memory = memories_[0];
    ASSERT_PJRT_OK(api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
    manager_ = args.transfer_manager;
  }

  // TransferLiteral args for buffer `index` of `type` and `dims` from `data`.
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

  // Retrieves buffer `index`.
  PJRT_Buffer* Retrieve(int index) {
    auto args = MakeArgs<PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args>();
    args.transfer_manager = manager_;
    args.buffer_index = index;
    EXPECT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args));
    return args.buffer_out;
  }

  PJRT_ShapeSpec specs_[2];
  std::vector<int64_t> dims0_ = {2, 2};  // f32[2,2].
  std::vector<int64_t> dims1_ = {3};     // s8[3].
  std::vector<int64_t> literal_dims_;    // The last Literal's.
  PJRT_AsyncHostToDeviceTransferManager* manager_ = nullptr;
};

TEST_F(TransferLiteralTest, ALiteralFillsItsBuffer) {
  Create();
  PJRT_Buffer* buffer = Retrieve(0);
  ASSERT_NE(buffer, nullptr);
  PJRT_Event* before = ReadyEvent(buffer);  // Retrieved before the data arrives.
  EXPECT_FALSE(IsReady(before));
  std::vector<float> values = {1.5f, -2, 3, 4};
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  ASSERT_NE(args.done_with_h2d_transfer, nullptr);
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  EXPECT_TRUE(AwaitAndDestroy(before).ok);
  EXPECT_EQ(ToHostF32(buffer), values);
  // The other buffer, with its layout spelled out (row-major is the buffer's own).
  std::vector<int8_t> bytes = {-1, 0, 7};
  std::vector<int64_t> row = {0};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(row);
  auto second = Literal(1, bytes.data(), PJRT_Buffer_Type_S8, {3});
  second.shape_layout = &layout;
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&second));
  EXPECT_TRUE(AwaitAndDestroy(second.done_with_h2d_transfer).ok);
  PJRT_Buffer* small = Retrieve(1);
  ASSERT_NE(small, nullptr);
  auto host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  int8_t out[3] = {0, 0, 0};
  host.src = small;
  host.dst = out;
  host.dst_size = 3;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_ToHostBuffer(&host));
  EXPECT_TRUE(AwaitAndDestroy(host.event).ok);
  EXPECT_EQ(std::vector<int8_t>(out, out + 3), bytes);
  DestroyBuffer(buffer);
  DestroyBuffer(small);
}

TEST_F(TransferLiteralTest, AShapeOtherThanTheBuffersIsRefused) {
  Create();
  std::vector<int32_t> ints = {1, 2, 3, 4};
  auto args = Literal(0, ints.data(), PJRT_Buffer_Type_S32, {2, 2});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "s32[2,2] but buffer 0 is f32[2,2]");
  args = Literal(0, ints.data(), PJRT_Buffer_Type_F32, {4});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "f32[4] but buffer 0 is f32[2,2]");
  args = Literal(1, ints.data(), PJRT_Buffer_Type_S8, {});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape is "
            "s8[] but buffer 1 is s8[3]");
  EXPECT_EQ(args.done_with_h2d_transfer, nullptr);
}

TEST_F(TransferLiteralTest, ALayoutOtherThanTheBuffersIsRefused) {
  Create();
  std::vector<float> values = {1, 2, 3, 4};
  std::vector<int64_t> column = {0, 1};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.shape_layout = &column_layout;
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal is laid out as "
            "{0,1} but buffer 0 as {1,0}; pjrtkit copies literals in the buffer's own layout "
            "only");
  // An invalid layout.
  std::vector<int64_t> short_m2m = {0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(short_m2m);
  args.shape_layout = &bad;
  info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: layout minor_to_major has 1 "
            "entries but the array has 2 dimensions");
}

TEST_F(TransferLiteralTest, ABufferMadeColumnMajorTakesColumnMajorLiteralsOnly) {
  std::vector<int64_t> column = {0, 1}, single = {0};
  PJRT_Buffer_MemoryLayout column_layout = TiledLayout(column);
  PJRT_Buffer_MemoryLayout single_layout = TiledLayout(single);
  PJRT_Buffer_MemoryLayout* layouts[] = {&column_layout, &single_layout};
  Create(layouts);
  std::vector<float> values = {1, 3, 2, 4};  // Column-major bytes of [[1, 2], [3, 4]].
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal is laid out as "
            "{1,0} but buffer 0 as {0,1}; pjrtkit copies literals in the buffer's own layout "
            "only");
  args.shape_layout = &column_layout;
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  PJRT_Buffer* buffer = Retrieve(0);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(LayoutText(buffer), "{0,1}");
  // The bytes are copied as they are (in the buffer's layout).
  auto raw = MakeArgs<PJRT_Buffer_CopyRawToHost_Args>();
  float out[4] = {0, 0, 0, 0};
  raw.buffer = buffer;
  raw.dst = out;
  raw.transfer_size = sizeof(out);
  ASSERT_PJRT_OK(api_->PJRT_Buffer_CopyRawToHost(&raw));
  EXPECT_TRUE(AwaitAndDestroy(raw.event).ok);
  EXPECT_EQ(std::vector<float>(out, out + 4), values);
  DestroyBuffer(buffer);
}

TEST_F(TransferLiteralTest, ArgumentChecks) {
  Create();
  std::vector<float> values = {1, 2, 3, 4};
  const std::string fn = "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral";
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(nullptr)).message,
            fn + ": args is null");
  auto args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(sizeof(args), 80u);
  args.struct_size = 72;
  ErrorInfo info = Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct(fn, 72, 80));
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.transfer_manager = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->transfer_manager is null");
  args = Literal(2, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": buffer_index 2 is out of range; the transfer has 2 buffer(s)");
  args = Literal(-1, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": buffer_index -1 is out of range; the transfer has 2 buffer(s)");
  args = Literal(0, nullptr, PJRT_Buffer_Type_F32, {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->data is null");
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  args.shape_dims = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": args->shape_dims is null");
  args = Literal(0, values.data(), static_cast<PJRT_Buffer_Type>(0), {2, 2});
  EXPECT_EQ(Consume(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args)).message,
            fn + ": invalid PJRT_Buffer_Type 0");
  // None of the refusals filled the buffer: it is filled once, by this.
  args = Literal(0, values.data(), PJRT_Buffer_Type_F32, {2, 2});
  ASSERT_PJRT_OK(api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_TRUE(AwaitAndDestroy(args.done_with_h2d_transfer).ok);
  PJRT_Buffer* buffer = Retrieve(0);
  EXPECT_EQ(ToHostF32(buffer), values);
  DestroyBuffer(buffer);
}

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
            fn + ": dimensions must be >= 0, got -4");
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
