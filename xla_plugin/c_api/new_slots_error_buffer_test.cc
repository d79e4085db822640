// PJRT_Client_CreateErrorBuffer (PJRT C API 0.82+) against the fake device: the error buffer's
// metadata, every data operation and an execution failing with its error and payloads, layouts,
// and older callers' shorter structs.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/new_slots_buffer_fixture.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

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
            "PJRT_LoadedExecutable_Execute: argument_lists[0][0] has been deleted or donated; "
            "only a live buffer is accepted");
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
            "PJRT_Client_CreateErrorBuffer: args->shape_dims[1] is -3; dimensions must be >= 0");
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
            "PJRT_Client_CreateErrorBuffer: args->memory belongs to another client; only "
            "objects of the client of the call are accepted");
  DestroyClient(other);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
