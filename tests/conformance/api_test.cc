// The PJRT_Api table itself: version, struct_size, slots, extension chain.
#include <cstddef>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

// One function slot of PJRT_Api: its name and byte offset.
struct Slot {
  const char* name;
  size_t offset;
};

// Every slot of the header this suite is built with (the list tools/pjrt_headers/uplift.py
// generates from it).
std::vector<Slot> AllSlots() {
  return {
#define PJRT_API_SLOT(name) Slot{#name, offsetof(PJRT_Api, name)},
#include "tools/api_coverage/pjrt_api_slots.inc"
  };
}

// Reads the function pointer at `offset` of the plugin's table.
const void* SlotValue(const PJRT_Api* api, size_t offset) {
  const void* value = nullptr;
  std::memcpy(&value, reinterpret_cast<const char*>(api) + offset, sizeof(value));
  return value;
}

// The slots every PJRT client (jaxlib included) calls in normal use.
const std::set<std::string>& CoreSlotNames() {
  static const auto* names = new std::set<std::string>{
      "PJRT_Error_Destroy", "PJRT_Error_Message", "PJRT_Error_GetCode",
      "PJRT_Plugin_Initialize", "PJRT_Plugin_Attributes", "PJRT_Event_Destroy",
      "PJRT_Event_IsReady", "PJRT_Event_Error", "PJRT_Event_Await", "PJRT_Event_OnReady",
      "PJRT_Client_Create", "PJRT_Client_Destroy", "PJRT_Client_PlatformName",
      "PJRT_Client_ProcessIndex", "PJRT_Client_PlatformVersion", "PJRT_Client_Devices",
      "PJRT_Client_AddressableDevices", "PJRT_Client_LookupDevice",
      "PJRT_Client_LookupAddressableDevice", "PJRT_Client_AddressableMemories",
      "PJRT_Client_Compile", "PJRT_Client_DefaultDeviceAssignment",
      "PJRT_Client_BufferFromHostBuffer", "PJRT_DeviceDescription_Id",
      "PJRT_DeviceDescription_ProcessIndex", "PJRT_DeviceDescription_Attributes",
      "PJRT_DeviceDescription_Kind", "PJRT_DeviceDescription_DebugString",
      "PJRT_DeviceDescription_ToString", "PJRT_Device_GetDescription",
      "PJRT_Device_IsAddressable", "PJRT_Device_LocalHardwareId",
      "PJRT_Device_AddressableMemories", "PJRT_Device_DefaultMemory", "PJRT_Memory_Id",
      "PJRT_Memory_Kind", "PJRT_Memory_DebugString", "PJRT_Memory_ToString",
      "PJRT_Memory_AddressableByDevices", "PJRT_Executable_Destroy", "PJRT_Executable_Name",
      "PJRT_Executable_NumReplicas", "PJRT_Executable_NumPartitions",
      "PJRT_Executable_NumOutputs", "PJRT_Executable_OptimizedProgram",
      "PJRT_Executable_Serialize", "PJRT_LoadedExecutable_Destroy",
      "PJRT_LoadedExecutable_GetExecutable", "PJRT_LoadedExecutable_AddressableDevices",
      "PJRT_LoadedExecutable_Delete", "PJRT_LoadedExecutable_IsDeleted",
      "PJRT_LoadedExecutable_Execute", "PJRT_Executable_DeserializeAndLoad",
      "PJRT_Buffer_Destroy", "PJRT_Buffer_ElementType", "PJRT_Buffer_Dimensions",
      "PJRT_Buffer_UnpaddedDimensions", "PJRT_Buffer_DynamicDimensionIndices",
      "PJRT_Buffer_OnDeviceSizeInBytes", "PJRT_Buffer_Device", "PJRT_Buffer_Memory",
      "PJRT_Buffer_Delete", "PJRT_Buffer_IsDeleted", "PJRT_Buffer_CopyToDevice",
      "PJRT_Buffer_ToHostBuffer", "PJRT_Buffer_IsOnCpu", "PJRT_Buffer_ReadyEvent",
      "PJRT_Buffer_IncreaseExternalReferenceCount",
      "PJRT_Buffer_DecreaseExternalReferenceCount", "PJRT_Executable_OutputElementTypes",
      "PJRT_Executable_OutputDimensions", "PJRT_Buffer_CopyToMemory",
      "PJRT_Executable_Fingerprint", "PJRT_Memory_Kind_Id"};
  return *names;
}

class ApiTest : public ApiTestBase {};

TEST_F(ApiTest, MajorVersionMatchesHeader) {
  EXPECT_EQ(api()->pjrt_api_version.major_version, PJRT_API_MAJOR)
      << "PJRT keeps ABI compatibility only within one major version";
}

TEST_F(ApiTest, MinorVersionIsExpected) {
  const int minor = api()->pjrt_api_version.minor_version;
  EXPECT_GE(minor, 0);
  if (traits().api_minor_version >= 0) {
    EXPECT_EQ(minor, traits().api_minor_version);
  }
}

TEST_F(ApiTest, VersionStructSizeIsAtLeastHeaders) {
  EXPECT_GE(api()->pjrt_api_version.struct_size, PJRT_Api_Version_STRUCT_SIZE);
}

TEST_F(ApiTest, StructSizeAgreesWithMinorVersion) {
  const size_t size = api()->struct_size;
  const size_t first_slot = offsetof(PJRT_Api, PJRT_Error_Destroy);
  ASSERT_GT(size, first_slot) << "PJRT_Api has no function slots";
  EXPECT_EQ((size - first_slot) % sizeof(void*), 0u) << "struct_size ends inside a slot";
  const int minor = api()->pjrt_api_version.minor_version;
  if (minor == PJRT_API_MINOR) {
    EXPECT_EQ(size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
  } else if (minor > PJRT_API_MINOR) {
    EXPECT_GE(size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
  } else {
    EXPECT_LE(size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
  }
}

TEST_F(ApiTest, CoreSlotsAreNonNull) {
  for (const Slot& slot : AllSlots()) {
    if (CoreSlotNames().count(slot.name) == 0) continue;
    ASSERT_LE(slot.offset + sizeof(void*), api()->struct_size)
        << slot.name << " lies past PJRT_Api.struct_size";
    EXPECT_NE(SlotValue(api(), slot.offset), nullptr) << slot.name << " is NULL";
  }
}

TEST_F(ApiTest, EverySlotIsNonNullOrReported) {
  std::vector<std::string> null_slots;
  std::vector<std::string> missing_slots;
  for (const Slot& slot : AllSlots()) {
    if (slot.offset + sizeof(void*) > api()->struct_size) {
      missing_slots.push_back(slot.name);
    } else if (SlotValue(api(), slot.offset) == nullptr) {
      null_slots.push_back(slot.name);
    }
  }
  std::string report;
  for (const std::string& name : null_slots) report += " " + name;
  Report("null_slots", null_slots.empty() ? "none" : report);
  if (!missing_slots.empty()) {
    std::cout << "[ REPORT   ] " << missing_slots.size()
              << " slots lie past struct_size (older minor version)\n";
  }
  if (traits().require_all_api_slots) {
    EXPECT_TRUE(null_slots.empty()) << "NULL slots:" << report;
  }
  EXPECT_EQ(AllSlots().size(),
            (PJRT_Api_STRUCT_SIZE - offsetof(PJRT_Api, PJRT_Error_Destroy)) / sizeof(void*))
      << "tools/api_coverage/pjrt_api_slots.inc is out of date with the header";
}

TEST_F(ApiTest, ExtensionChainIsFiniteWithSaneSizes) {
  std::set<const PJRT_Extension_Base*> seen;
  int length = 0;
  for (const PJRT_Extension_Base* ext = api()->extension_start; ext != nullptr;
       ext = ext->next) {
    ASSERT_TRUE(seen.insert(ext).second) << "extension chain has a cycle at entry " << length;
    ASSERT_LT(++length, 64) << "extension chain is implausibly long";
    EXPECT_GE(ext->struct_size, sizeof(PJRT_Extension_Base)) << "extension type " << ext->type;
    EXPECT_LE(ext->struct_size, 1u << 16) << "extension type " << ext->type;
  }
  Report("extensions", std::to_string(length));
}

TEST_F(ApiTest, ExtensionTypesAreUniqueAndKnown) {
  std::set<int> types;
  int steps = 0;
  for (const PJRT_Extension_Base* ext = api()->extension_start; ext != nullptr && steps < 64;
       ext = ext->next, ++steps) {
    // A plugin's own extension may use a value outside PJRT_Extension_Type (pjrtkit's does):
    // read the int, since loading such an enum value is undefined behaviour.
    int type = 0;
    std::memcpy(&type, &ext->type, sizeof(type));
    EXPECT_TRUE(types.insert(type).second) << "extension type " << type << " twice";
    if (type > PJRT_Extension_Type_XlaTransform) {
      std::cout << "[ REPORT   ] extension type " << type
                << " is newer than this header\n";
    }
    EXPECT_GE(type, 0);
  }
}

TEST_F(ApiTest, ApiTableIsStableAcrossCalls) {
  // The table and its version are plain data the plugin must not change after loading.
  const int major = api()->pjrt_api_version.major_version;
  const int minor = api()->pjrt_api_version.minor_version;
  const size_t size = api()->struct_size;
  EnsureInitialized();
  EXPECT_EQ(api()->pjrt_api_version.major_version, major);
  EXPECT_EQ(api()->pjrt_api_version.minor_version, minor);
  EXPECT_EQ(api()->struct_size, size);
}

}  // namespace
}  // namespace pjrt_conformance
