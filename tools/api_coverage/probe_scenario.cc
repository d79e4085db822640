#include "tools/api_coverage/probe_scenario.h"

// C++ standard library.
#include <cstring>
#include <vector>

// The per-area probes.
#include "tools/api_coverage/probe_buffers.h"
#include "tools/api_coverage/probe_executables.h"
#include "tools/api_coverage/probe_topologies.h"

namespace api_coverage {

void RunScenario(ProbeRecorder* probe, const std::vector<CreateOption>& options) {
  PROBE_ARGS(PJRT_Plugin_Initialize_Args, init);
  PROBE_CALL(PJRT_Plugin_Initialize, init);
  PROBE_ARGS(PJRT_Plugin_Attributes_Args, attributes);
  PROBE_CALL(PJRT_Plugin_Attributes, attributes);

  std::vector<PJRT_NamedValue> values(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    PJRT_NamedValue& v = values[i];
    std::memset(&v, 0, sizeof(v));
    v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v.name = options[i].name.c_str();
    v.name_size = options[i].name.size();
    if (options[i].is_bool) {
      v.type = PJRT_NamedValue_kBool;
      v.bool_value = options[i].int_value != 0;
      v.value_size = 1;
    } else if (options[i].is_int) {
      v.type = PJRT_NamedValue_kInt64;
      v.int64_value = options[i].int_value;
      v.value_size = 1;
    } else {
      v.type = PJRT_NamedValue_kString;
      v.string_value = options[i].string_value.c_str();
      v.value_size = options[i].string_value.size();
    }
  }
  PROBE_ARGS(PJRT_Client_Create_Args, create);
  create.create_options = values.data();
  create.num_options = values.size();
  if (!PROBE_CALL(PJRT_Client_Create, create) || create.client == nullptr) return;
  PJRT_Client* client = create.client;

  PROBE_ARGS(PJRT_Client_PlatformName_Args, platform);
  platform.client = client;
  PROBE_CALL(PJRT_Client_PlatformName, platform);
  PROBE_ARGS(PJRT_Client_ProcessIndex_Args, process);
  process.client = client;
  PROBE_CALL(PJRT_Client_ProcessIndex, process);
  PROBE_ARGS(PJRT_Client_PlatformVersion_Args, version);
  version.client = client;
  PROBE_CALL(PJRT_Client_PlatformVersion, version);
  PROBE_ARGS(PJRT_Client_Devices_Args, devices);
  devices.client = client;
  PROBE_CALL(PJRT_Client_Devices, devices);
  PROBE_ARGS(PJRT_Client_AddressableMemories_Args, memories);
  memories.client = client;
  PROBE_CALL(PJRT_Client_AddressableMemories, memories);
  PROBE_ARGS(PJRT_Client_DefaultDeviceAssignment_Args, assignment);
  int assigned[1] = {-1};
  assignment.client = client;
  assignment.num_replicas = 1;
  assignment.num_partitions = 1;
  assignment.default_assignment_size = 1;
  assignment.default_assignment = assigned;
  PROBE_CALL(PJRT_Client_DefaultDeviceAssignment, assignment);
  PROBE_ARGS(PJRT_Client_AddressableDevices_Args, addressable);
  addressable.client = client;
  if (PROBE_CALL(PJRT_Client_AddressableDevices, addressable) &&
      addressable.num_addressable_devices > 0) {
    PJRT_Device* device = addressable.addressable_devices[0];
    PROBE_ARGS(PJRT_Device_GetDescription_Args, get_description);
    get_description.device = device;
    if (PROBE_CALL(PJRT_Device_GetDescription, get_description)) {
      PJRT_DeviceDescription* description = get_description.device_description;
      PROBE_ARGS(PJRT_DeviceDescription_Id_Args, id);
      id.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_Id, id);
      PROBE_ARGS(PJRT_DeviceDescription_ProcessIndex_Args, description_process);
      description_process.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_ProcessIndex, description_process);
      PROBE_ARGS(PJRT_DeviceDescription_Attributes_Args, description_attributes);
      description_attributes.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_Attributes, description_attributes);
      PROBE_ARGS(PJRT_DeviceDescription_Kind_Args, kind);
      kind.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_Kind, kind);
      PROBE_ARGS(PJRT_DeviceDescription_DebugString_Args, debug);
      debug.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_DebugString, debug);
      PROBE_ARGS(PJRT_DeviceDescription_ToString_Args, to_string);
      to_string.device_description = description;
      PROBE_CALL(PJRT_DeviceDescription_ToString, to_string);
      PROBE_ARGS(PJRT_Client_LookupDevice_Args, lookup);
      lookup.client = client;
      lookup.id = id.id;
      PROBE_CALL(PJRT_Client_LookupDevice, lookup);
    }
    PROBE_ARGS(PJRT_Device_IsAddressable_Args, is_addressable);
    is_addressable.device = device;
    PROBE_CALL(PJRT_Device_IsAddressable, is_addressable);
    PROBE_ARGS(PJRT_Device_LocalHardwareId_Args, hardware_id);
    hardware_id.device = device;
    if (PROBE_CALL(PJRT_Device_LocalHardwareId, hardware_id)) {
      PROBE_ARGS(PJRT_Client_LookupAddressableDevice_Args, lookup);
      lookup.client = client;
      lookup.local_hardware_id = hardware_id.local_hardware_id;
      PROBE_CALL(PJRT_Client_LookupAddressableDevice, lookup);
    }
    PROBE_ARGS(PJRT_Device_AddressableMemories_Args, device_memories);
    device_memories.device = device;
    PROBE_CALL(PJRT_Device_AddressableMemories, device_memories);
    PROBE_ARGS(PJRT_Device_MemoryStats_Args, stats);
    stats.device = device;
    PROBE_CALL(PJRT_Device_MemoryStats, stats);
    PROBE_ARGS(PJRT_Device_DefaultMemory_Args, default_memory);
    default_memory.device = device;
    PJRT_Memory* memory = nullptr;
    if (PROBE_CALL(PJRT_Device_DefaultMemory, default_memory)) {
      memory = default_memory.memory;
      PROBE_ARGS(PJRT_Memory_Id_Args, memory_id);
      memory_id.memory = memory;
      PROBE_CALL(PJRT_Memory_Id, memory_id);
      PROBE_ARGS(PJRT_Memory_Kind_Args, memory_kind);
      memory_kind.memory = memory;
      PROBE_CALL(PJRT_Memory_Kind, memory_kind);
      PROBE_ARGS(PJRT_Memory_Kind_Id_Args, memory_kind_id);
      memory_kind_id.memory = memory;
      PROBE_CALL(PJRT_Memory_Kind_Id, memory_kind_id);
      PROBE_ARGS(PJRT_Memory_DebugString_Args, memory_debug);
      memory_debug.memory = memory;
      PROBE_CALL(PJRT_Memory_DebugString, memory_debug);
      PROBE_ARGS(PJRT_Memory_ToString_Args, memory_string);
      memory_string.memory = memory;
      PROBE_CALL(PJRT_Memory_ToString, memory_string);
      PROBE_ARGS(PJRT_Memory_AddressableByDevices_Args, by_devices);
      by_devices.memory = memory;
      PROBE_CALL(PJRT_Memory_AddressableByDevices, by_devices);
    }
    ProbeBuffers(probe, client, device, memory);
    ProbeExecutables(probe, client, device);
  }
  ProbeTopologies(probe, client);

  PROBE_ARGS(PJRT_Client_Destroy_Args, destroy);
  destroy.client = client;
  PROBE_CALL(PJRT_Client_Destroy, destroy);
}

}  // namespace api_coverage
