// PJRT C API 0.82-0.117 slots of devices against the fake device: PJRT_Device_GetAttributes,
// tracking events (PJRT_Device_CreateAsyncTrackingEvent / PJRT_AsyncTrackingEvent_Destroy),
// memory statistics (the grown PJRT_Device_MemoryStats_Args, ClearMemoryStats) and
// PoisonExecution. Older callers' shorter structs are accepted and nothing past their end is read
// or written.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/new_slots_client_fixture.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// ---- PJRT_Device_GetAttributes ----------------------------------------------------------------

TEST_F(NewClientSlotsTest, DeviceAttributesAreTheDescriptionsAndOutliveTheClient) {
  const std::string version = "fake 2.5";
  std::vector<PJRT_NamedValue> options = {StringOption("platform_version", version),
                                          IntOption("device_count", 2)};
  PJRT_Client* client = CreateClient(options);
  ASSERT_NE(client, nullptr);
  PJRT_Device* device = AddressableDevices(client)[1];
  auto args = MakeArgs<PJRT_Device_GetAttributes_Args>();
  args.device = device;
  ASSERT_PJRT_OK(api_->PJRT_Device_GetAttributes(&args));
  ASSERT_NE(args.device_attributes, nullptr);
  ASSERT_NE(args.attributes_deleter, nullptr);
  // The description's attributes, as PJRT_DeviceDescription_Attributes gives them.
  auto description = MakeArgs<PJRT_Device_GetDescription_Args>();
  description.device = device;
  EXPECT_PJRT_OK(api_->PJRT_Device_GetDescription(&description));
  auto described = MakeArgs<PJRT_DeviceDescription_Attributes_Args>();
  described.device_description = description.device_description;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Attributes(&described));
  ASSERT_EQ(args.num_attributes, described.num_attributes);
  ASSERT_EQ(args.num_attributes, 3u);  // The echoed options and "index", in name order.
  EXPECT_NE(args.attributes, described.attributes);  // A copy the caller frees.
  DestroyClient(client);  // The copy outlives the client.
  EXPECT_EQ(Str(args.attributes[0].name, args.attributes[0].name_size), "device_count");
  EXPECT_EQ(args.attributes[0].type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(args.attributes[0].int64_value, 2);
  EXPECT_EQ(Str(args.attributes[1].name, args.attributes[1].name_size), "index");
  EXPECT_EQ(args.attributes[1].int64_value, 1);
  EXPECT_EQ(Str(args.attributes[2].name, args.attributes[2].name_size), "platform_version");
  EXPECT_EQ(args.attributes[2].type, PJRT_NamedValue_kString);
  EXPECT_EQ(Str(args.attributes[2].string_value, args.attributes[2].value_size), "fake 2.5");
  args.attributes_deleter(args.device_attributes);
}

TEST_F(NewClientSlotsTest, GetAttributesChecksItsArguments) {
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(nullptr)).message,
            "PJRT_Device_GetAttributes: args is null");
  auto args = MakeArgs<PJRT_Device_GetAttributes_Args>();
  EXPECT_EQ(sizeof(args), 56u);
  args.struct_size = 48;
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(&args)).message,
            ShortStruct("PJRT_Device_GetAttributes", 48, 56));
  EXPECT_EQ(args.device_attributes, nullptr);
  args.struct_size = sizeof(args);
  args.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(&args)).message,
            "PJRT_Device_GetAttributes: args->device is null");
}

// ---- Tracking events --------------------------------------------------------------------------

TEST_F(NewClientSlotsTest, ATrackingEventLivesUntilDestroyed) {
  const std::string description = "all-reduce #3";
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  args.device = devices_[1];
  args.description = description.data();
  args.description_size = description.size();
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  ASSERT_NE(args.event, nullptr);
  EXPECT_EQ(FakeDevice(1)->live_tracking_events(), 1);
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
  EXPECT_EQ(FakeDevice(1)->tracking_descriptions(), std::vector<std::string>{"all-reduce #3"});
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
  EXPECT_EQ(FakeDevice(1)->live_tracking_events(), 0);
  // An event may outlive the client.
  args.event = nullptr;
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  ASSERT_NE(args.event, nullptr);
  DestroyClient(client_);
  client_ = nullptr;
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
}

TEST_F(NewClientSlotsTest, ADeviceMayTrackNothing) {
  const std::string description = "untracked";  // The fake's hook: no event.
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  args.device = devices_[0];
  args.description = description.data();
  args.description_size = description.size();
  args.event = reinterpret_cast<PJRT_AsyncTrackingEvent*>(static_cast<uintptr_t>(0x10));
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  EXPECT_EQ(args.event, nullptr);
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
  // Destroying no event is fine.
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
}

TEST_F(NewClientSlotsTest, TrackingEventSlotsCheckTheirArguments) {
  const std::string fn = "PJRT_Device_CreateAsyncTrackingEvent";
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(nullptr)).message,
            fn + ": args is null");
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  EXPECT_EQ(sizeof(args), 48u);
  args.struct_size = 40;
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            ShortStruct(fn, 40, 48));
  args.struct_size = sizeof(args);
  args.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            fn + ": args->device is null");
  args.device = devices_[0];
  args.description_size = 4;
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            fn + ": description is null but its size is 4");
  EXPECT_EQ(args.event, nullptr);
  EXPECT_TRUE(FakeDevice(0)->tracking_descriptions().empty());  // The device was not asked.
  // An empty description is fine.
  args.description_size = 0;
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  EXPECT_EQ(FakeDevice(0)->tracking_descriptions(), std::vector<std::string>{""});
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_EQ(sizeof(destroy), 24u);
  destroy.struct_size = 16;
  EXPECT_EQ(Consume(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy)).message,
            ShortStruct("PJRT_AsyncTrackingEvent_Destroy", 16, 24));
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 1);  // Not destroyed by the refusal.
  EXPECT_EQ(Consume(api_->PJRT_AsyncTrackingEvent_Destroy(nullptr)).message,
            "PJRT_AsyncTrackingEvent_Destroy: args is null");
  destroy.struct_size = sizeof(destroy);
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
}

// ---- Memory statistics ------------------------------------------------------------------------

TEST_F(NewClientSlotsTest, MemoryStatsWritePeakAllocatedBytesForANewCaller) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});  // 16 bytes.
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});        // 8 bytes.
  DestroyBuffer(a);
  EXPECT_EQ(sizeof(PJRT_Device_MemoryStats_Args), 208u);
  auto args = Sentinel<PJRT_Device_MemoryStats_Args>(sizeof(PJRT_Device_MemoryStats_Args));
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 8);
  EXPECT_EQ(args.peak_bytes_in_use, 24);
  EXPECT_TRUE(args.peak_bytes_in_use_is_set);
  EXPECT_EQ(args.num_allocs, 2);
  EXPECT_EQ(args.pool_bytes, 8 + 4096);
  EXPECT_TRUE(args.pool_bytes_is_set);
  EXPECT_FALSE(args.peak_pool_bytes_is_set);  // Unset fields are written too.
  EXPECT_EQ(args.peak_pool_bytes, 0);
  EXPECT_EQ(args.peak_allocated_bytes, 24);
  EXPECT_TRUE(args.peak_allocated_bytes_is_set);
  DestroyBuffer(b);
}

TEST_F(NewClientSlotsTest, MemoryStatsLeaveWhatAnOlderCallerLacks) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  // PJRT C API 0.81's struct ends at peak_pool_bytes_is_set.
  const size_t v081 = offsetof(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set) + 1;
  EXPECT_EQ(v081, 185u);
  auto args = Sentinel<PJRT_Device_MemoryStats_Args>(v081);
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 16);
  EXPECT_EQ(args.pool_bytes, 16 + 4096);
  EXPECT_TRUE(UntouchedFrom(args, v081));
  // Older still: without the pool fields.
  const size_t no_pool =
      offsetof(PJRT_Device_MemoryStats_Args, largest_free_block_bytes_is_set) + 1;
  EXPECT_EQ(no_pool, 153u);
  args = Sentinel<PJRT_Device_MemoryStats_Args>(no_pool);
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 16);
  EXPECT_EQ(args.bytes_limit, int64_t{1} << 30);
  EXPECT_TRUE(UntouchedFrom(args, no_pool));
  // Shorter than that is refused, and writes nothing.
  args = Sentinel<PJRT_Device_MemoryStats_Args>(no_pool - 1);
  args.device = devices_[0];
  ErrorInfo info = Consume(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Device_MemoryStats", 152, 153));
  EXPECT_TRUE(UntouchedFrom(args, offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use)));
  DestroyBuffer(a);
}

TEST_F(NewClientSlotsTest, ClearMemoryStatsStartsThePeakOver) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  DestroyBuffer(a);
  auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
  stats.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.peak_bytes_in_use, 24);
  auto clear = MakeArgs<PJRT_Device_ClearMemoryStats_Args>();
  clear.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_ClearMemoryStats(&clear));
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.bytes_in_use, 8);
  EXPECT_EQ(stats.peak_bytes_in_use, 8);
  EXPECT_EQ(stats.peak_allocated_bytes, 8);
  EXPECT_EQ(stats.num_allocs, 2);  // Counts of allocations are not peaks.
  // Only that device's.
  PJRT_Buffer* c = MakeF32Buffer(client_, devices_[1], {1}, {1});
  DestroyBuffer(c);
  stats.device = devices_[1];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.peak_bytes_in_use, 4);
  // The checks.
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(nullptr)).message,
            "PJRT_Device_ClearMemoryStats: args is null");
  EXPECT_EQ(sizeof(clear), 24u);
  clear.struct_size = 16;
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(&clear)).message,
            ShortStruct("PJRT_Device_ClearMemoryStats", 16, 24));
  clear.struct_size = sizeof(clear);
  clear.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(&clear)).message,
            "PJRT_Device_ClearMemoryStats: args->device is null");
  DestroyBuffer(b);
}

// ---- PJRT_Device_PoisonExecution --------------------------------------------------------------

TEST_F(NewClientSlotsTest, PoisoningReachesTheDeviceWithTheError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[1]");
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(RunIdentity(loaded, devices_[0], {7}, {1}, /*launch_id=*/5), std::vector<float>{7});
  const std::string message = "peer lost";
  auto payload = MakeArgs<PJRT_NamedValue>(PJRT_NamedValue_STRUCT_SIZE);
  payload.name = "host";
  payload.name_size = 4;
  payload.type = PJRT_NamedValue_kString;
  payload.string_value = "n17";
  payload.value_size = 3;
  auto args = MakeArgs<PJRT_Device_PoisonExecution_Args>();
  args.device = devices_[0];
  args.launch_id = 5;
  args.error_code = PJRT_Error_Code_ABORTED;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.payload = &payload;
  args.num_payload = 1;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_TRUE(args.poisoned);
  std::optional<testing::FakePoison> poison = FakeDevice(0)->last_poison();
  ASSERT_TRUE(poison.has_value());
  EXPECT_EQ(poison->launch_id, 5);
  EXPECT_EQ(poison->error.code(), StatusCode::kAborted);
  EXPECT_EQ(poison->error.message(), "peer lost");
  EXPECT_EQ(poison->error.payloads(),
            (std::vector<std::pair<std::string, std::string>>{{"host", "n17"}}));
  // No execution of that launch id on the device.
  args.launch_id = 6;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_FALSE(args.poisoned);
  args.launch_id = 5;
  args.device = devices_[1];
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_FALSE(args.poisoned);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, AnOlderPoisonCallerHasNoPayloads) {
  const size_t old_size = offsetof(PJRT_Device_PoisonExecution_Args, poisoned) + sizeof(bool);
  EXPECT_EQ(old_size, 49u);
  EXPECT_EQ(sizeof(PJRT_Device_PoisonExecution_Args), 72u);
  const std::string message = "old caller";
  auto args = Sentinel<PJRT_Device_PoisonExecution_Args>(old_size);
  args.device = devices_[0];
  args.launch_id = 1;
  args.error_code = PJRT_Error_Code_INTERNAL;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.poisoned = true;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));  // payload (0xAB...) is not read.
  EXPECT_FALSE(args.poisoned);
  EXPECT_TRUE(UntouchedFrom(args, old_size));
  std::optional<testing::FakePoison> poison = FakeDevice(0)->last_poison();
  ASSERT_TRUE(poison.has_value());
  EXPECT_EQ(poison->error.code(), StatusCode::kInternal);
  EXPECT_EQ(poison->error.message(), "old caller");
  EXPECT_TRUE(poison->error.payloads().empty());
  // One byte shorter is refused.
  args = Sentinel<PJRT_Device_PoisonExecution_Args>(old_size - 1);
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            ShortStruct("PJRT_Device_PoisonExecution", 48, 49));
}

TEST_F(NewClientSlotsTest, PoisonExecutionChecksItsArguments) {
  const std::string fn = "PJRT_Device_PoisonExecution";
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(nullptr)).message, fn + ": args is null");
  auto args = MakeArgs<PJRT_Device_PoisonExecution_Args>();
  args.error_code = PJRT_Error_Code_INTERNAL;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": args->device is null");
  args.device = devices_[0];
  args.error_code = PJRT_Error_Code_OK;
  ErrorInfo info = Consume(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, fn + ": error_code must be an error (1..16), got 0");
  for (int unknown : {17, 40, -2}) {  // Read as an int, never loaded as the enum.
    std::memcpy(&args.error_code, &unknown, sizeof(unknown));
    EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
              fn + ": error_code must be an error (1..16), got " + std::to_string(unknown));
  }
  args.error_code = PJRT_Error_Code_INTERNAL;
  args.error_message_size = 2;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": error_message is null but its size is 2");
  args.error_message_size = 0;
  PJRT_NamedValue number = IntOption("attempt", 2);
  args.payload = &number;
  args.num_payload = 1;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": payload 'attempt' must be a string");
  EXPECT_FALSE(FakeDevice(0)->last_poison().has_value());  // The device was never asked.
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
