// PJRT_Plugin_*, PJRT_Client_* (except buffers and compile), PJRT_Device*, PJRT_Memory_* and
// PJRT_TopologyDescription_*.

// C++ standard library.
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

// The attributes of `device`'s description.
std::vector<PJRT_NamedValue> DeviceAttributes(PJRT_Device* device) {
  auto desc = MakeArgs<PJRT_Device_GetDescription_Args>();
  desc.device = device;
  EXPECT_PJRT_OK(Api()->PJRT_Device_GetDescription(&desc));
  auto args = MakeArgs<PJRT_DeviceDescription_Attributes_Args>();
  args.device_description = desc.device_description;
  EXPECT_PJRT_OK(Api()->PJRT_DeviceDescription_Attributes(&args));
  return {args.attributes, args.attributes + args.num_attributes};
}

TEST(PluginTest, InitializeAndAttributes) {
  auto init = MakeArgs<PJRT_Plugin_Initialize_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Plugin_Initialize(&init));
  auto args = MakeArgs<PJRT_Plugin_Attributes_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Plugin_Attributes(&args));
  ASSERT_EQ(args.num_attributes, 5u);
  // In name order: fake_name, fake_plugin, fake_scale, stablehlo_current_version, xla_version.
  const PJRT_NamedValue* a = args.attributes;
  EXPECT_EQ(Str(a[0].name, a[0].name_size), "fake_name");
  EXPECT_EQ(a[0].type, PJRT_NamedValue_kString);
  EXPECT_EQ(Str(a[0].string_value, a[0].value_size), "pjrtkit-fake");
  EXPECT_EQ(a[1].type, PJRT_NamedValue_kBool);
  EXPECT_TRUE(a[1].bool_value);
  EXPECT_EQ(a[2].type, PJRT_NamedValue_kFloat);
  EXPECT_EQ(a[2].float_value, 0.5f);
  EXPECT_EQ(Str(a[3].name, a[3].name_size), "stablehlo_current_version");
  EXPECT_EQ(a[3].type, PJRT_NamedValue_kInt64List);
  ASSERT_EQ(a[3].value_size, 3u);
  EXPECT_EQ(std::vector<int64_t>(a[3].int64_array_value, a[3].int64_array_value + 3),
            (std::vector<int64_t>{1, 9, 0}));
  EXPECT_EQ(a[4].type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(a[4].int64_value, 2);
  // Process lifetime: the same array every time.
  auto again = MakeArgs<PJRT_Plugin_Attributes_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Plugin_Attributes(&again));
  EXPECT_EQ(again.attributes, args.attributes);
}

TEST(ClientCreateTest, OptionsOfEveryTypeReachTheClient) {
  const std::string version = "v9";
  const std::vector<int64_t> shape = {4, 5, 6};
  std::vector<PJRT_NamedValue> options = {
      IntOption("device_count", 3), StringOption("platform_version", version),
      BoolOption("delay_ready", false), FloatOption("scale", 2.5f), ListOption("shape", shape)};
  PJRT_Client* client = CreateClient(options);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(AddressableDevices(client).size(), 3u);
  auto pv = MakeArgs<PJRT_Client_PlatformVersion_Args>();
  pv.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_PlatformVersion(&pv));
  EXPECT_EQ(Str(pv.platform_version, pv.platform_version_size), "v9");

  // The fake echoes the options into the device attributes (plus its "index").
  std::vector<PJRT_NamedValue> attrs = DeviceAttributes(AddressableDevices(client)[2]);
  ASSERT_EQ(attrs.size(), 6u);
  EXPECT_EQ(Str(attrs[0].name, attrs[0].name_size), "delay_ready");
  EXPECT_EQ(attrs[0].type, PJRT_NamedValue_kBool);
  EXPECT_FALSE(attrs[0].bool_value);
  EXPECT_EQ(Str(attrs[1].name, attrs[1].name_size), "device_count");
  EXPECT_EQ(attrs[1].type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(attrs[1].int64_value, 3);
  EXPECT_EQ(Str(attrs[2].name, attrs[2].name_size), "index");
  EXPECT_EQ(attrs[2].int64_value, 2);
  EXPECT_EQ(Str(attrs[3].name, attrs[3].name_size), "platform_version");
  EXPECT_EQ(attrs[3].type, PJRT_NamedValue_kString);
  EXPECT_EQ(Str(attrs[3].string_value, attrs[3].value_size), "v9");
  EXPECT_EQ(Str(attrs[4].name, attrs[4].name_size), "scale");
  EXPECT_EQ(attrs[4].type, PJRT_NamedValue_kFloat);
  EXPECT_EQ(attrs[4].float_value, 2.5f);
  EXPECT_EQ(Str(attrs[5].name, attrs[5].name_size), "shape");
  EXPECT_EQ(attrs[5].type, PJRT_NamedValue_kInt64List);
  EXPECT_EQ(std::vector<int64_t>(attrs[5].int64_array_value,
                                 attrs[5].int64_array_value + attrs[5].value_size),
            shape);
  DestroyClient(client);
}

// PJRT_Client_Create with `options`; returns the error.
ErrorInfo CreateError(const std::vector<PJRT_NamedValue>& options) {
  auto args = MakeArgs<PJRT_Client_Create_Args>();
  args.create_options = options.data();
  args.num_options = options.size();
  ErrorInfo info = Consume(Api()->PJRT_Client_Create(&args));
  EXPECT_FALSE(info.ok);
  return info;
}

TEST(ClientCreateTest, UnknownOptionIsInvalidArgument) {
  ErrorInfo info = CreateError({IntOption("bogus", 1)});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("unknown create option 'bogus'"), std::string::npos) << info.message;
  EXPECT_NE(info.message.find("device_count (int64)"), std::string::npos) << info.message;
}

TEST(ClientCreateTest, WrongTypeIsInvalidArgument) {
  ErrorInfo info = CreateError({FloatOption("device_count", 2.0f)});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message.rfind("create option 'device_count' must be int64, got float", 0), 0u)
      << info.message;
}

TEST(ClientCreateTest, MalformedNamedValuesAreRejected) {
  PJRT_NamedValue bad_type = IntOption("device_count", 1);
  bad_type.type = static_cast<PJRT_NamedValue_Type>(99);
  ErrorInfo info = CreateError({bad_type});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_Create: option 'device_count' has unknown PJRT_NamedValue_Type 99");

  PJRT_NamedValue no_name = IntOption("x", 1);
  no_name.name = nullptr;
  info = CreateError({no_name});
  EXPECT_EQ(info.message, "PJRT_Client_Create: option #0 has no name");

  info = CreateError({IntOption("device_count", 1), IntOption("device_count", 2)});
  EXPECT_EQ(info.message, "PJRT_Client_Create: option 'device_count' is given more than once");

  PJRT_NamedValue short_struct = IntOption("device_count", 1);
  short_struct.struct_size = 8;
  info = CreateError({short_struct});
  EXPECT_EQ(
      info.message.rfind("PJRT_Client_Create: option #0 has PJRT_NamedValue struct_size 8", 0), 0u);

  auto null_array = MakeArgs<PJRT_Client_Create_Args>();
  null_array.num_options = 2;
  info = Consume(Api()->PJRT_Client_Create(&null_array));
  EXPECT_EQ(info.message, "PJRT_Client_Create: the options array is null but num_options is 2");
}

TEST_F(ClientTest, PlatformNameAndProcessIndex) {
  auto name = MakeArgs<PJRT_Client_PlatformName_Args>();
  name.client = client_;
  EXPECT_PJRT_OK(api_->PJRT_Client_PlatformName(&name));
  EXPECT_EQ(Str(name.platform_name, name.platform_name_size), "fake");
  auto index = MakeArgs<PJRT_Client_ProcessIndex_Args>();
  index.client = client_;
  index.process_index = 7;
  EXPECT_PJRT_OK(api_->PJRT_Client_ProcessIndex(&index));
  EXPECT_EQ(index.process_index, 0);
}

TEST(ClientDevicesTest, AddressableAndRemoteDevices) {
  std::vector<PJRT_NamedValue> options = {IntOption("remote_device_count", 1)};
  PJRT_Client* client = CreateClient(options);
  std::vector<PJRT_Device*> all = AllDevices(client);
  std::vector<PJRT_Device*> local = AddressableDevices(client);
  ASSERT_EQ(all.size(), 3u);
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(all[0], local[0]);
  EXPECT_EQ(all[1], local[1]);

  auto addressable = MakeArgs<PJRT_Device_IsAddressable_Args>();
  addressable.device = all[2];
  EXPECT_PJRT_OK(Api()->PJRT_Device_IsAddressable(&addressable));
  EXPECT_FALSE(addressable.is_addressable);
  auto hw = MakeArgs<PJRT_Device_LocalHardwareId_Args>();
  hw.device = all[2];
  EXPECT_PJRT_OK(Api()->PJRT_Device_LocalHardwareId(&hw));
  EXPECT_EQ(hw.local_hardware_id, -1);
  auto memory = MakeArgs<PJRT_Device_DefaultMemory_Args>();
  memory.device = all[2];
  ErrorInfo info = Consume(Api()->PJRT_Device_DefaultMemory(&memory));
  EXPECT_EQ(info.code, PJRT_Error_Code_NOT_FOUND);
  EXPECT_EQ(info.message, "PJRT_Device_DefaultMemory: device FAKE_2 has no default memory");

  auto desc = MakeArgs<PJRT_Device_GetDescription_Args>();
  desc.device = all[2];
  EXPECT_PJRT_OK(Api()->PJRT_Device_GetDescription(&desc));
  auto process = MakeArgs<PJRT_DeviceDescription_ProcessIndex_Args>();
  process.device_description = desc.device_description;
  EXPECT_PJRT_OK(Api()->PJRT_DeviceDescription_ProcessIndex(&process));
  EXPECT_EQ(process.process_index, 1);
  DestroyClient(client);
}

TEST_F(ClientTest, LookupDevices) {
  auto lookup = MakeArgs<PJRT_Client_LookupDevice_Args>();
  lookup.client = client_;
  lookup.id = 1;
  EXPECT_PJRT_OK(api_->PJRT_Client_LookupDevice(&lookup));
  EXPECT_EQ(lookup.device, devices_[1]);
  lookup.id = 99;
  ErrorInfo info = Consume(api_->PJRT_Client_LookupDevice(&lookup));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "no device with id 99; valid ids are [0, 1]");

  auto local = MakeArgs<PJRT_Client_LookupAddressableDevice_Args>();
  local.client = client_;
  local.local_hardware_id = 0;
  EXPECT_PJRT_OK(api_->PJRT_Client_LookupAddressableDevice(&local));
  EXPECT_EQ(local.addressable_device, devices_[0]);
}

TEST_F(ClientTest, DeviceDescriptionStrings) {
  auto desc = MakeArgs<PJRT_Device_GetDescription_Args>();
  desc.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Device_GetDescription(&desc));
  PJRT_DeviceDescription* d = desc.device_description;
  auto id = MakeArgs<PJRT_DeviceDescription_Id_Args>();
  id.device_description = d;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Id(&id));
  EXPECT_EQ(id.id, 1);
  auto kind = MakeArgs<PJRT_DeviceDescription_Kind_Args>();
  kind.device_description = d;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Kind(&kind));
  EXPECT_EQ(Str(kind.device_kind, kind.device_kind_size), "fake");
  auto debug = MakeArgs<PJRT_DeviceDescription_DebugString_Args>();
  debug.device_description = d;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_DebugString(&debug));
  EXPECT_EQ(Str(debug.debug_string, debug.debug_string_size), "FAKE_1");
  auto text = MakeArgs<PJRT_DeviceDescription_ToString_Args>();
  text.device_description = d;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_ToString(&text));
  EXPECT_EQ(Str(text.to_string, text.to_string_size), "FakeDevice(id=1)");
}

TEST_F(ClientTest, MemoriesAndTheirDevices) {
  std::vector<PJRT_Memory*> memories = AddressableMemories(client_);
  ASSERT_EQ(memories.size(), 3u);  // Two device memories, one shared pinned_host.
  auto dm = MakeArgs<PJRT_Device_AddressableMemories_Args>();
  dm.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Device_AddressableMemories(&dm));
  ASSERT_EQ(dm.num_memories, 2u);
  EXPECT_EQ(dm.memories[0], memories[1]);
  EXPECT_EQ(dm.memories[1], memories[2]);
  auto def = MakeArgs<PJRT_Device_DefaultMemory_Args>();
  def.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Device_DefaultMemory(&def));
  EXPECT_EQ(def.memory, memories[1]);

  PJRT_Memory* pinned = memories[2];
  auto kind = MakeArgs<PJRT_Memory_Kind_Args>();
  kind.memory = pinned;
  EXPECT_PJRT_OK(api_->PJRT_Memory_Kind(&kind));
  EXPECT_EQ(Str(kind.kind, kind.kind_size), "pinned_host");
  auto kind_id = MakeArgs<PJRT_Memory_Kind_Id_Args>();
  kind_id.memory = pinned;
  EXPECT_PJRT_OK(api_->PJRT_Memory_Kind_Id(&kind_id));
  EXPECT_EQ(kind_id.kind_id, 1);
  auto id = MakeArgs<PJRT_Memory_Id_Args>();
  id.memory = pinned;
  EXPECT_PJRT_OK(api_->PJRT_Memory_Id(&id));
  EXPECT_EQ(id.id, 1000);
  auto debug = MakeArgs<PJRT_Memory_DebugString_Args>();
  debug.memory = memories[0];
  EXPECT_PJRT_OK(api_->PJRT_Memory_DebugString(&debug));
  EXPECT_EQ(Str(debug.debug_string, debug.debug_string_size), "FAKE_0:device");
  auto text = MakeArgs<PJRT_Memory_ToString_Args>();
  text.memory = memories[0];
  EXPECT_PJRT_OK(api_->PJRT_Memory_ToString(&text));
  EXPECT_EQ(Str(text.to_string, text.to_string_size), "FakeMemory(id=0, kind=device)");
  auto by = MakeArgs<PJRT_Memory_AddressableByDevices_Args>();
  by.memory = pinned;
  EXPECT_PJRT_OK(api_->PJRT_Memory_AddressableByDevices(&by));
  ASSERT_EQ(by.num_devices, 2u);
  EXPECT_EQ(by.devices[0], devices_[0]);
  EXPECT_EQ(by.devices[1], devices_[1]);
}

TEST_F(ClientTest, MemoryStatsMapOptionalsToIsSet) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
  stats.device = devices_[0];
  stats.bytes_reserved_is_set = true;   // Must be cleared.
  stats.peak_pool_bytes_is_set = true;  // Must be cleared.
  EXPECT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.bytes_in_use, 16);
  EXPECT_TRUE(stats.peak_bytes_in_use_is_set);
  EXPECT_EQ(stats.peak_bytes_in_use, 16);
  EXPECT_TRUE(stats.num_allocs_is_set);
  EXPECT_EQ(stats.num_allocs, 1);
  EXPECT_TRUE(stats.bytes_limit_is_set);
  EXPECT_EQ(stats.bytes_limit, int64_t{1} << 30);
  EXPECT_TRUE(stats.bytes_reservable_limit_is_set);
  EXPECT_EQ(stats.bytes_reservable_limit, int64_t{1} << 29);
  EXPECT_TRUE(stats.pool_bytes_is_set);
  EXPECT_EQ(stats.pool_bytes, 16 + 4096);
  EXPECT_FALSE(stats.largest_alloc_size_is_set);
  EXPECT_FALSE(stats.bytes_reserved_is_set);
  EXPECT_FALSE(stats.peak_pool_bytes_is_set);
  DestroyBuffer(buffer);
  EXPECT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.bytes_in_use, 0);
}

TEST_F(ClientTest, DefaultDeviceAssignment) {
  int ids[4] = {-7, -7, -7, -7};
  auto args = MakeArgs<PJRT_Client_DefaultDeviceAssignment_Args>();
  args.client = client_;
  args.num_replicas = 2;
  args.num_partitions = 1;
  args.default_assignment_size = 4;
  args.default_assignment = ids;
  EXPECT_PJRT_OK(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  EXPECT_EQ(ids[2], -7);  // Only replicas * partitions entries are written.

  args.num_replicas = 1;
  args.num_partitions = 2;
  args.default_assignment_size = 1;
  ErrorInfo info = Consume(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_DefaultDeviceAssignment: default_assignment_size is 1 but 1 replicas x 2 "
            "partitions need 2");

  args.num_replicas = 3;
  args.num_partitions = 1;
  args.default_assignment_size = 4;
  info = Consume(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "a device assignment of 3 replicas x 1 partitions needs 3 devices; this client has 2");
}

TEST_F(ClientTest, ClientTopologyIsOwnedByTheClient) {
  auto args = MakeArgs<PJRT_Client_TopologyDescription_Args>();
  args.client = client_;
  EXPECT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&args));
  ASSERT_NE(args.topology, nullptr);
  auto name = MakeArgs<PJRT_TopologyDescription_PlatformName_Args>();
  name.topology = args.topology;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_PlatformName(&name));
  EXPECT_EQ(Str(name.platform_name, name.platform_name_size), "fake");
  auto version = MakeArgs<PJRT_TopologyDescription_PlatformVersion_Args>();
  version.topology = args.topology;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_PlatformVersion(&version));
  EXPECT_EQ(Str(version.platform_version, version.platform_version_size), "fake 1.0");
  auto descs = MakeArgs<PJRT_TopologyDescription_GetDeviceDescriptions_Args>();
  descs.topology = args.topology;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_GetDeviceDescriptions(&descs));
  ASSERT_EQ(descs.num_descriptions, 2u);
  auto id = MakeArgs<PJRT_DeviceDescription_Id_Args>();
  id.device_description = descs.descriptions[1];
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Id(&id));
  EXPECT_EQ(id.id, 1);
  auto attrs = MakeArgs<PJRT_TopologyDescription_Attributes_Args>();
  attrs.topology = args.topology;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Attributes(&attrs));
  ASSERT_EQ(attrs.num_attributes, 2u);
  EXPECT_EQ(Str(attrs.attributes[0].name, attrs.attributes[0].name_size), "num_devices");
  EXPECT_EQ(attrs.attributes[0].int64_value, 2);

  auto serialize = MakeArgs<PJRT_TopologyDescription_Serialize_Args>();
  serialize.topology = args.topology;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Serialize(&serialize));
  EXPECT_EQ(Str(serialize.serialized_bytes, serialize.serialized_bytes_size),
            "pjrtkit-topology 2\nplatform 4:fake\nversion 8:fake 1.0\nattributes 2\n"
            "attr 11:num_devices i 2\nattr 13:topology_kind s 4:fake\ndevices 2\n"
            "device 0 0 4:fake 6:FAKE_0 16:FakeDevice(id=0) 1\nattr 5:index i 0\n"
            "device 1 0 4:fake 6:FAKE_1 16:FakeDevice(id=1) 1\nattr 5:index i 1\n");
  ASSERT_NE(serialize.serialized_topology_deleter, nullptr);
  serialize.serialized_topology_deleter(serialize.serialized_topology);

  auto destroy = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
  destroy.topology = args.topology;
  ErrorInfo info = Consume(api_->PJRT_TopologyDescription_Destroy(&destroy));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST(TopologyTest, CreateFromTheFactory) {
  std::vector<PJRT_NamedValue> options = {IntOption("device_count", 4)};
  auto args = MakeArgs<PJRT_TopologyDescription_Create_Args>();
  args.topology_name = "fake";
  args.topology_name_size = 4;
  args.create_options = options.data();
  args.num_options = options.size();
  EXPECT_PJRT_OK(Api()->PJRT_TopologyDescription_Create(&args));
  auto descs = MakeArgs<PJRT_TopologyDescription_GetDeviceDescriptions_Args>();
  descs.topology = args.topology;
  EXPECT_PJRT_OK(Api()->PJRT_TopologyDescription_GetDeviceDescriptions(&descs));
  EXPECT_EQ(descs.num_descriptions, 4u);
  auto destroy = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
  destroy.topology = args.topology;
  EXPECT_PJRT_OK(Api()->PJRT_TopologyDescription_Destroy(&destroy));

  args.topology_name = "tpu_v9";
  args.topology_name_size = 6;
  ErrorInfo info = Consume(Api()->PJRT_TopologyDescription_Create(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_NOT_FOUND);
  EXPECT_EQ(info.message, "fake: unknown topology 'tpu_v9'");
}

TEST_F(ClientTest, HandlesOfAnotherClientAreRejected) {
  PJRT_Client* other = CreateClient();
  std::vector<float> data = {1.0f};
  std::vector<int64_t> dims = {1};
  auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 1;
  args.device = AddressableDevices(other)[0];
  ErrorInfo info = Consume(api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_BufferFromHostBuffer: args->device belongs to another client; only "
            "objects of the client of the call are accepted");
  DestroyClient(other);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
