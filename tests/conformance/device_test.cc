// PJRT_Device_*, PJRT_DeviceDescription_* and PJRT_Memory_*.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class DeviceTest : public ClientTestBase {
 protected:
  std::string Kind(PJRT_Device* device) {
    PJRT_ARGS(PJRT_DeviceDescription_Kind_Args, args);
    args.device_description = Description(device);
    const Status status = PJRT_CALL(api()->PJRT_DeviceDescription_Kind(&args));
    EXPECT_TRUE(status.ok()) << status;
    return Str(args.device_kind, args.device_kind_size);
  }

  std::string MemoryKind(PJRT_Memory* memory, int* kind_id) {
    PJRT_ARGS(PJRT_Memory_Kind_Args, args);
    args.memory = memory;
    Status status = PJRT_CALL(api()->PJRT_Memory_Kind(&args));
    EXPECT_TRUE(status.ok()) << status;
    PJRT_ARGS(PJRT_Memory_Kind_Id_Args, id_args);
    id_args.memory = memory;
    status = PJRT_CALL(api()->PJRT_Memory_Kind_Id(&id_args));
    EXPECT_TRUE(status.ok()) << status;
    *kind_id = id_args.kind_id;
    return Str(args.kind, args.kind_size);
  }
};

TEST_F(DeviceTest, DescriptionIdMatchesLookup) {
  for (PJRT_Device* device : Devices()) {
    PJRT_ARGS(PJRT_Client_LookupDevice_Args, args);
    args.client = client();
    args.id = DeviceId(device);
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_LookupDevice(&args)));
    EXPECT_EQ(args.device, device);
  }
}

TEST_F(DeviceTest, DescriptionProcessIndexIsTheClients) {
  for (PJRT_Device* device : AddressableDevices()) {
    PJRT_ARGS(PJRT_DeviceDescription_ProcessIndex_Args, args);
    args.device_description = Description(device);
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_DeviceDescription_ProcessIndex(&args)));
    EXPECT_EQ(args.process_index, traits().process_index);
  }
}

TEST_F(DeviceTest, KindIsNonEmptyAndExpected) {
  for (PJRT_Device* device : Devices()) {
    const std::string kind = Kind(device);
    EXPECT_FALSE(kind.empty());
    if (!traits().device_kind.empty()) {
      EXPECT_EQ(kind, traits().device_kind);
    }
  }
}

TEST_F(DeviceTest, DebugStringIsNonEmpty) {
  for (PJRT_Device* device : Devices()) {
    PJRT_ARGS(PJRT_DeviceDescription_DebugString_Args, args);
    args.device_description = Description(device);
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_DeviceDescription_DebugString(&args)));
    EXPECT_FALSE(Str(args.debug_string, args.debug_string_size).empty());
  }
}

TEST_F(DeviceTest, ToStringIsNonEmptyAndDistinctPerDevice) {
  std::set<std::string> seen;
  for (PJRT_Device* device : Devices()) {
    PJRT_ARGS(PJRT_DeviceDescription_ToString_Args, args);
    args.device_description = Description(device);
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_DeviceDescription_ToString(&args)));
    const std::string text = Str(args.to_string, args.to_string_size);
    EXPECT_FALSE(text.empty());
    EXPECT_TRUE(seen.insert(text).second) << "two devices print as '" << text << "'";
  }
}

TEST_F(DeviceTest, AttributesAreWellFormed) {
  for (PJRT_Device* device : Devices()) {
    PJRT_ARGS(PJRT_DeviceDescription_Attributes_Args, args);
    args.device_description = Description(device);
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_DeviceDescription_Attributes(&args)));
    ExpectWellFormedNamedValues(args.attributes, args.num_attributes, "device attributes");
  }
}

TEST_F(DeviceTest, LocalHardwareIdsAreUniqueAndNonNegative) {
  std::set<int> ids;
  for (PJRT_Device* device : AddressableDevices()) {
    PJRT_ARGS(PJRT_Device_LocalHardwareId_Args, args);
    args.device = device;
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Device_LocalHardwareId(&args)));
    EXPECT_GE(args.local_hardware_id, 0);
    EXPECT_TRUE(ids.insert(args.local_hardware_id).second) << args.local_hardware_id;
  }
}

TEST_F(DeviceTest, EveryDeviceHasAddressableMemories) {
  for (PJRT_Device* device : AddressableDevices()) {
    const std::vector<PJRT_Memory*> memories = DeviceMemories(device);
    EXPECT_FALSE(memories.empty()) << "device " << DeviceId(device);
    for (PJRT_Memory* memory : memories) EXPECT_NE(memory, nullptr);
  }
}

TEST_F(DeviceTest, DefaultMemoryIsAmongTheDevicesMemories) {
  for (PJRT_Device* device : AddressableDevices()) {
    PJRT_Memory* memory = DefaultMemory(device);
    ASSERT_NE(memory, nullptr);
    const std::vector<PJRT_Memory*> memories = DeviceMemories(device);
    EXPECT_NE(std::find(memories.begin(), memories.end(), memory), memories.end())
        << "device " << DeviceId(device) << ": default memory not in its memories";
  }
}

TEST_F(DeviceTest, MemoriesListTheirDevice) {
  for (PJRT_Device* device : AddressableDevices()) {
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      PJRT_ARGS(PJRT_Memory_AddressableByDevices_Args, args);
      args.memory = memory;
      PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Memory_AddressableByDevices(&args)));
      const std::vector<PJRT_Device*> by(args.devices, args.devices + args.num_devices);
      EXPECT_NE(std::find(by.begin(), by.end(), device), by.end())
          << "memory of device " << DeviceId(device) << " does not list it";
    }
  }
}

TEST_F(DeviceTest, MemoryKindsAndKindIdsAgree) {
  std::map<std::string, int> kind_ids;
  for (PJRT_Device* device : AddressableDevices()) {
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      int kind_id = -1;
      const std::string kind = MemoryKind(memory, &kind_id);
      EXPECT_FALSE(kind.empty());
      const auto inserted = kind_ids.emplace(kind, kind_id);
      EXPECT_EQ(inserted.first->second, kind_id) << "kind '" << kind << "' has two kind ids";
    }
  }
  std::set<int> distinct;
  for (const auto& entry : kind_ids) distinct.insert(entry.second);
  EXPECT_EQ(distinct.size(), kind_ids.size()) << "two memory kinds share a kind id";
}

TEST_F(DeviceTest, MemoryDebugStringAndToStringAreNonEmpty) {
  PJRT_Memory* memory = DefaultMemory(FirstDevice());
  ASSERT_NE(memory, nullptr);
  PJRT_ARGS(PJRT_Memory_DebugString_Args, debug);
  debug.memory = memory;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Memory_DebugString(&debug)));
  EXPECT_FALSE(Str(debug.debug_string, debug.debug_string_size).empty());
  PJRT_ARGS(PJRT_Memory_ToString_Args, to_string);
  to_string.memory = memory;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Memory_ToString(&to_string)));
  EXPECT_FALSE(Str(to_string.to_string, to_string.to_string_size).empty());
}

TEST_F(DeviceTest, MemoryStatsOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_Device_MemoryStats);
  PJRT_ARGS(PJRT_Device_MemoryStats_Args, args);
  args.device = FirstDevice();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Device_MemoryStats(&args)),
                             "PJRT_Device_MemoryStats");
  EXPECT_GE(args.bytes_in_use, 0);
  if (args.peak_bytes_in_use_is_set) {
    EXPECT_GE(args.peak_bytes_in_use, args.bytes_in_use);
  }
  if (args.bytes_limit_is_set) {
    EXPECT_GE(args.bytes_limit, args.bytes_in_use);
  }
  if (args.num_allocs_is_set) {
    EXPECT_GE(args.num_allocs, 0);
  }
}

}  // namespace
}  // namespace pjrt_conformance
