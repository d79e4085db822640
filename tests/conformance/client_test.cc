// PJRT_Client_*: identity, devices, lookups, device assignment, memories, lifecycle.
#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class ClientTest : public ClientTestBase {
 protected:
  // Expected device count: from the traits, else whatever the client reports.
  int ExpectedAddressableCount() const {
    if (traits().addressable_device_count >= 0) return traits().addressable_device_count;
    return traits().device_count;
  }

  Status LookupDevice(int id, PJRT_Device** device) {
    PJRT_ARGS(PJRT_Client_LookupDevice_Args, args);
    args.client = client();
    args.id = id;
    const Status status = PJRT_CALL(api()->PJRT_Client_LookupDevice(&args));
    *device = args.device;
    return status;
  }

  Status LookupAddressable(int local_hardware_id, PJRT_Device** device) {
    PJRT_ARGS(PJRT_Client_LookupAddressableDevice_Args, args);
    args.client = client();
    args.local_hardware_id = local_hardware_id;
    const Status status = PJRT_CALL(api()->PJRT_Client_LookupAddressableDevice(&args));
    *device = args.addressable_device;
    return status;
  }

  Status LocalHardwareId(PJRT_Device* device, int* id) {
    PJRT_ARGS(PJRT_Device_LocalHardwareId_Args, args);
    args.device = device;
    const Status status = PJRT_CALL(api()->PJRT_Device_LocalHardwareId(&args));
    *id = args.local_hardware_id;
    return status;
  }

  // Asks for a replicas x partitions assignment into `assignment`, telling the plugin it has
  // `declared_size` entries (default: all of them).
  Status DefaultAssignment(int replicas, int partitions, std::vector<int>* assignment,
                           int declared_size = -1) {
    PJRT_ARGS(PJRT_Client_DefaultDeviceAssignment_Args, args);
    args.client = client();
    args.num_replicas = replicas;
    args.num_partitions = partitions;
    args.default_assignment_size = declared_size >= 0 ? declared_size : assignment->size();
    args.default_assignment = assignment->data();
    return PJRT_CALL(api()->PJRT_Client_DefaultDeviceAssignment(&args));
  }

  // One past the largest device id.
  int IdBound() {
    int bound = 0;
    for (PJRT_Device* device : Devices()) bound = std::max(bound, DeviceId(device) + 1);
    return bound;
  }
};

TEST_F(ClientTest, PlatformNameIsExpected) {
  PJRT_ARGS(PJRT_Client_PlatformName_Args, args);
  args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_PlatformName(&args)));
  const std::string name = Str(args.platform_name, args.platform_name_size);
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(name.find('\0'), std::string::npos) << "platform_name_size counts a NUL";
  if (!traits().platform_name.empty()) {
    EXPECT_EQ(name, traits().platform_name);
  }
}

TEST_F(ClientTest, PlatformVersionIsNonEmpty) {
  PJRT_ARGS(PJRT_Client_PlatformVersion_Args, args);
  args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_PlatformVersion(&args)));
  const std::string version = Str(args.platform_version, args.platform_version_size);
  EXPECT_FALSE(version.empty());
  Report("platform_version", version);
}

TEST_F(ClientTest, ProcessIndexIsExpected) {
  PJRT_ARGS(PJRT_Client_ProcessIndex_Args, args);
  args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_ProcessIndex(&args)));
  EXPECT_EQ(args.process_index, traits().process_index);
}

TEST_F(ClientTest, DeviceCountIsExpected) {
  const std::vector<PJRT_Device*> devices = Devices();
  EXPECT_FALSE(devices.empty());
  if (traits().device_count >= 0) {
    EXPECT_EQ(devices.size(), static_cast<size_t>(traits().device_count));
  }
  for (PJRT_Device* device : devices) EXPECT_NE(device, nullptr);
}

TEST_F(ClientTest, AddressableDevicesAreDevicesAndAddressable) {
  const std::vector<PJRT_Device*> all = Devices();
  const std::vector<PJRT_Device*> addressable = AddressableDevices();
  ASSERT_FALSE(addressable.empty());
  if (ExpectedAddressableCount() >= 0) {
    EXPECT_EQ(addressable.size(), static_cast<size_t>(ExpectedAddressableCount()));
  }
  const std::set<PJRT_Device*> all_set(all.begin(), all.end());
  for (PJRT_Device* device : addressable) {
    EXPECT_EQ(all_set.count(device), 1u) << "addressable device not in PJRT_Client_Devices";
    PJRT_ARGS(PJRT_Device_IsAddressable_Args, args);
    args.device = device;
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Device_IsAddressable(&args)));
    EXPECT_TRUE(args.is_addressable);
  }
  EXPECT_EQ(std::set<PJRT_Device*>(addressable.begin(), addressable.end()).size(),
            addressable.size())
      << "a device is listed twice";
}

TEST_F(ClientTest, DeviceListsAreStable) {
  // Returned arrays are owned by the client: a second call returns the same handles.
  EXPECT_EQ(Devices(), Devices());
  EXPECT_EQ(AddressableDevices(), AddressableDevices());
}

TEST_F(ClientTest, DeviceIdsAreUnique) {
  std::set<int> ids;
  for (PJRT_Device* device : Devices()) {
    const int id = DeviceId(device);
    EXPECT_GE(id, 0);
    EXPECT_TRUE(ids.insert(id).second) << "device id " << id << " twice";
  }
}

TEST_F(ClientTest, LookupDeviceFindsEveryDevice) {
  for (PJRT_Device* device : Devices()) {
    PJRT_Device* found = nullptr;
    PJRT_ASSERT_OK(LookupDevice(DeviceId(device), &found));
    EXPECT_EQ(found, device);
  }
}

TEST_F(ClientTest, LookupDeviceNegativeIdIsAnError) {
  PJRT_Device* found = nullptr;
  PJRT_ASSERT_ERROR(LookupDevice(-1, &found));
}

TEST_F(ClientTest, LookupDeviceOutOfRangeIdIsAnError) {
  PJRT_Device* found = nullptr;
  PJRT_ASSERT_ERROR(LookupDevice(IdBound() + 1000, &found));
  PJRT_ASSERT_ERROR(LookupDevice(INT_MAX, &found));
}

TEST_F(ClientTest, LookupAddressableDeviceByLocalHardwareId) {
  for (PJRT_Device* device : AddressableDevices()) {
    int local_id = -1;
    PJRT_ASSERT_OK(LocalHardwareId(device, &local_id));
    PJRT_Device* found = nullptr;
    PJRT_ASSERT_OK(LookupAddressable(local_id, &found));
    EXPECT_EQ(found, device) << "local hardware id " << local_id;
  }
}

TEST_F(ClientTest, LookupAddressableDeviceNegativeIdIsAnError) {
  PJRT_Device* found = nullptr;
  PJRT_ASSERT_ERROR(LookupAddressable(-1, &found));
}

TEST_F(ClientTest, LookupAddressableDeviceOutOfRangeIdIsAnError) {
  int bound = 0;
  for (PJRT_Device* device : AddressableDevices()) {
    int local_id = -1;
    PJRT_ASSERT_OK(LocalHardwareId(device, &local_id));
    bound = std::max(bound, local_id + 1);
  }
  PJRT_Device* found = nullptr;
  PJRT_ASSERT_ERROR(LookupAddressable(bound + 1000, &found));
}

TEST_F(ClientTest, DefaultDeviceAssignmentOneByOne) {
  std::vector<int> assignment(1, -7);
  PJRT_ASSERT_OK(DefaultAssignment(1, 1, &assignment));
  PJRT_Device* device = nullptr;
  PJRT_EXPECT_OK(LookupDevice(assignment[0], &device));
}

TEST_F(ClientTest, DefaultDeviceAssignmentReplicasUseDistinctDevices) {
  const int replicas = static_cast<int>(AddressableDevices().size());
  std::vector<int> assignment(replicas, -7);
  PJRT_ASSERT_OK(DefaultAssignment(replicas, 1, &assignment));
  const std::set<int> distinct(assignment.begin(), assignment.end());
  EXPECT_EQ(distinct.size(), assignment.size()) << "a device is assigned twice";
  for (int id : assignment) {
    PJRT_Device* device = nullptr;
    PJRT_EXPECT_OK(LookupDevice(id, &device));
  }
}

TEST_F(ClientTest, DefaultDeviceAssignmentWritesOnlyReplicasTimesPartitions) {
  std::vector<int> assignment(5, -7);
  PJRT_ASSERT_OK(DefaultAssignment(1, 1, &assignment));
  for (size_t i = 1; i < assignment.size(); ++i) {
    EXPECT_EQ(assignment[i], -7) << "wrote past num_replicas * num_partitions at " << i;
  }
}

TEST_F(ClientTest, DefaultDeviceAssignmentTooSmallOutputIsAnError) {
  std::vector<int> assignment(1, -7);
  PJRT_ASSERT_ERROR(DefaultAssignment(1, 1, &assignment, /*declared_size=*/0));
  EXPECT_EQ(assignment[0], -7) << "wrote into a buffer declared empty";
  if (AddressableDevices().size() >= 2) {
    std::vector<int> one(1, -7);  // Room for 1, asking for 2.
    PJRT_ASSERT_ERROR(DefaultAssignment(2, 1, &one));
  }
}

TEST_F(ClientTest, AddressableMemoriesAreUniqueAndReachable) {
  PJRT_ARGS(PJRT_Client_AddressableMemories_Args, args);
  args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_AddressableMemories(&args)));
  ASSERT_GT(args.num_addressable_memories, 0u);
  std::set<int> ids;
  const std::vector<PJRT_Device*> devices = AddressableDevices();
  for (size_t i = 0; i < args.num_addressable_memories; ++i) {
    PJRT_Memory* memory = args.addressable_memories[i];
    PJRT_ARGS(PJRT_Memory_Id_Args, id_args);
    id_args.memory = memory;
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Memory_Id(&id_args)));
    EXPECT_TRUE(ids.insert(id_args.id).second) << "memory id " << id_args.id << " twice";
    PJRT_ARGS(PJRT_Memory_AddressableByDevices_Args, by_args);
    by_args.memory = memory;
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Memory_AddressableByDevices(&by_args)));
    EXPECT_GT(by_args.num_devices, 0u) << "memory " << id_args.id << " has no device";
    for (size_t d = 0; d < by_args.num_devices; ++d) {
      EXPECT_NE(std::find(devices.begin(), devices.end(), by_args.devices[d]), devices.end())
          << "memory " << id_args.id << " names a device the client does not address";
    }
  }
}

TEST_F(ClientTest, EveryDeviceDefaultMemoryIsAClientMemory) {
  PJRT_ARGS(PJRT_Client_AddressableMemories_Args, args);
  args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_AddressableMemories(&args)));
  const std::set<PJRT_Memory*> memories(args.addressable_memories,
                                        args.addressable_memories + args.num_addressable_memories);
  for (PJRT_Device* device : AddressableDevices()) {
    EXPECT_EQ(memories.count(DefaultMemory(device)), 1u);
  }
}

TEST_F(ClientTest, SecondClientSeesTheSameDevicesAndDestroysCleanly) {
  ClientPtr second;
  PJRT_ASSERT_OK(CreateClient(options(), &second));
  PJRT_ARGS(PJRT_Client_Devices_Args, args);
  args.client = second.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_Devices(&args)));
  EXPECT_EQ(args.num_devices, Devices().size());
  PJRT_ARGS(PJRT_Client_PlatformName_Args, name_args);
  name_args.client = second.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_PlatformName(&name_args)));
  EXPECT_FALSE(Str(name_args.platform_name, name_args.platform_name_size).empty());
  second.reset();  // Destroy must succeed (checked by the owner) and not disturb the shared one.
  EXPECT_FALSE(Devices().empty());
}

TEST_F(ClientTest, UnknownCreateOptionIsRejectedOrIgnored) {
  std::vector<NamedOption> with_unknown = options();
  with_unknown.push_back(NamedOption::Int("pjrt_conformance_no_such_option", 1));
  ClientPtr extra;
  const Status status = CreateClient(with_unknown, &extra);
  if (!status.ok()) {
    EXPECT_FALSE(status.message.empty()) << "rejection must say why";
    Report("unknown_create_option", "rejected: " + status.message);
  } else {
    ASSERT_TRUE(extra);  // Ignored: the client must still work.
    Report("unknown_create_option", "ignored");
  }
}

}  // namespace
}  // namespace pjrt_conformance
