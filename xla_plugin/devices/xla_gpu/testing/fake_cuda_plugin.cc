// A fake of OpenXLA's CUDA PJRT plugin (xla_cuda_plugin.so) for tests on machines without a GPU:
// just enough of the PJRT C API for pjrtkit's xla_gpu device to create a client and describe it.
// It checks create options the way the real plugin does (names and types), makes one device per
// visible GPU (2 by default, or `visible_devices`), each an "NVIDIA H200" with XLA:GPU's
// attributes, "device" and "pinned_host" memories and allocator statistics, and reports the
// options it was given in its platform version ("fake-cuda 13.0 [name=value;...]") so tests can
// see what pjrtkit passed through. Its topologies (PJRT_TopologyDescription_Create) and
// deviceless compiles (PJRT_Compile) behave like XLA:GPU's without a GPU: a topology needs a
// target_config (and a topology shape "PxHxD"), and its attribute "fake_given" records the name and
// options it was given; an executable records what PJRT_Compile was given (topology, client,
// options, program) in its fingerprint and serialized bytes. FakeCudaPluginLiveObjects (exported)
// counts the topologies and executables not yet destroyed. Every other slot answers
// UNIMPLEMENTED.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

// PJRT_Error and PJRT_Memory are defined by the header (a function-table pointer, left null
// here: nothing that talks to this fake reads it); the fake's own state follows.
struct FakeError : PJRT_Error {
  PJRT_Error_Code code;
  std::string message;
};

struct FakeMemory : PJRT_Memory {
  int id;
  std::string kind;
  std::vector<PJRT_Device*> devices;
};

struct PJRT_DeviceDescription {
  int id;
  std::string kind = "NVIDIA H200";
  std::string debug_string;
  std::string to_string;
  std::vector<PJRT_NamedValue> attributes;
  std::string compute_capability = "9.0";
  std::string vendor = "NVIDIA Corporation";
};

struct PJRT_Device {
  PJRT_DeviceDescription description;
  int local_hardware_id;
  std::vector<PJRT_Memory*> memories;
};

struct PJRT_Client {
  std::string platform_version;
  std::vector<std::unique_ptr<PJRT_Device>> devices;
  std::vector<PJRT_Device*> device_ptrs;
  std::vector<std::unique_ptr<FakeMemory>> memories;
};

struct PJRT_TopologyDescription {
  std::string version;                                            // The device kind, as XLA:GPU.
  std::string target_config;                                      // As given.
  std::string host_options;                                       // As given, or a default.
  std::string given;                                              // "name=...;option=value;...".
  std::vector<PJRT_NamedValue> attributes;                        // Point into the above.
  std::vector<std::unique_ptr<PJRT_DeviceDescription>> devices;  // Its devices.
  std::vector<PJRT_DeviceDescription*> device_ptrs;               // Into devices.
};

struct PJRT_Executable {
  std::string name;    // The module's name.
  std::string record;  // What PJRT_Compile was given.
};

struct FakeSerialized {
  std::string bytes;
};

namespace {

// Topologies and executables created and not yet destroyed.
int live_topologies = 0;
int live_executables = 0;

PJRT_Error* Error(PJRT_Error_Code code, std::string message) {
  auto* error = new FakeError();
  error->vtable = nullptr;
  error->code = code;
  error->message = std::move(message);
  return error;
}

PJRT_Error* Unimplemented(PJRT_Error_Destroy_Args*) {
  return Error(PJRT_Error_Code_UNIMPLEMENTED, "not implemented by the fake CUDA plugin");
}

const FakeError* Fake(const PJRT_Error* error) { return static_cast<const FakeError*>(error); }
FakeMemory* Fake(PJRT_Memory* memory) { return static_cast<FakeMemory*>(memory); }

void ErrorDestroy(PJRT_Error_Destroy_Args* args) { delete Fake(args->error); }

void ErrorMessage(PJRT_Error_Message_Args* args) {
  args->message = Fake(args->error)->message.data();
  args->message_size = Fake(args->error)->message.size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  args->code = Fake(args->error)->code;
  return nullptr;
}

PJRT_Error* PluginInitialize(PJRT_Plugin_Initialize_Args*) { return nullptr; }

PJRT_NamedValue Int64Value(const char* name, int64_t value) {
  PJRT_NamedValue v{};
  v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v.name = name;
  v.name_size = std::strlen(name);
  v.type = PJRT_NamedValue_kInt64;
  v.int64_value = value;
  v.value_size = 1;
  return v;
}

PJRT_NamedValue StringValue(const char* name, const std::string& value) {
  PJRT_NamedValue v{};
  v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v.name = name;
  v.name_size = std::strlen(name);
  v.type = PJRT_NamedValue_kString;
  v.string_value = value.data();
  v.value_size = value.size();
  return v;
}

PJRT_Error* PluginAttributes(PJRT_Plugin_Attributes_Args* args) {
  static const int64_t kCurrent[] = {1, 20, 0};
  static const int64_t kMinimum[] = {0, 9, 0};
  static PJRT_NamedValue attributes[4];
  attributes[0] = Int64Value("xla_version", 2);
  attributes[1] = Int64Value("stablehlo_current_version", 0);
  attributes[1].type = PJRT_NamedValue_kInt64List;
  attributes[1].int64_array_value = kCurrent;
  attributes[1].value_size = 3;
  attributes[2] = attributes[1];
  attributes[2].name = "stablehlo_minimum_version";
  attributes[2].name_size = std::strlen(attributes[2].name);
  attributes[2].int64_array_value = kMinimum;
  attributes[3] = Int64Value("cuda_version", 13000);
  args->attributes = attributes;
  args->num_attributes = 4;
  return nullptr;
}

// The real plugin's option names and types (xla_cuda_plugin.so 0.11.2).
const std::map<std::string, PJRT_NamedValue_Type>& KnownOptions() {
  static const auto* known = new std::map<std::string, PJRT_NamedValue_Type>{
      {"platform_name", PJRT_NamedValue_kString},
      {"allocator", PJRT_NamedValue_kString},
      {"memory_fraction", PJRT_NamedValue_kFloat},
      {"preallocate", PJRT_NamedValue_kBool},
      {"collective_memory_size", PJRT_NamedValue_kInt64},
      {"visible_devices", PJRT_NamedValue_kInt64List},
      {"should_stage_host_to_device_transfers", PJRT_NamedValue_kBool},
      {"abort_collectives_on_failure", PJRT_NamedValue_kBool},
      {"max_inflight_computations", PJRT_NamedValue_kInt64},
      {"use_tfrt_gpu_client", PJRT_NamedValue_kBool},
  };
  return *known;
}

// "name=value" of one option.
std::string Describe(const PJRT_NamedValue& v) {
  std::string out(v.name, v.name_size);
  out += "=";
  switch (v.type) {
    case PJRT_NamedValue_kString: return out + std::string(v.string_value, v.value_size);
    case PJRT_NamedValue_kInt64: return out + std::to_string(v.int64_value);
    case PJRT_NamedValue_kBool: return out + (v.bool_value ? "true" : "false");
    case PJRT_NamedValue_kFloat: {
      char text[32];
      std::snprintf(text, sizeof(text), "%g", v.float_value);
      return out + text;
    }
    case PJRT_NamedValue_kInt64List: {
      for (size_t i = 0; i < v.value_size; ++i) {
        out += (i > 0 ? "," : "") + std::to_string(v.int64_array_value[i]);
      }
      return out;
    }
    default: return out + "?";
  }
}

PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args) {
  std::map<std::string, std::string> given;
  std::vector<int64_t> visible = {0, 1};
  for (size_t i = 0; i < args->num_options; ++i) {
    const PJRT_NamedValue& v = args->create_options[i];
    const std::string name(v.name, v.name_size);
    auto it = KnownOptions().find(name);
    if (it == KnownOptions().end()) {
      return Error(PJRT_Error_Code_INVALID_ARGUMENT,
                   "Unexpected option name passed to PJRT_Client_Create: " + name);
    }
    if (it->second != v.type) {
      return Error(PJRT_Error_Code_INVALID_ARGUMENT, "Option passed to PJRT_Client_Create with "
                   "name " + name + " has the wrong type");
    }
    if (name == "visible_devices") {
      visible.assign(v.int64_array_value, v.int64_array_value + v.value_size);
    }
    given[name] = Describe(v);
  }
  auto client = std::make_unique<PJRT_Client>();
  client->platform_version = "fake-cuda 13.0 [";
  bool first = true;
  for (const auto& [name, text] : given) {
    client->platform_version += (first ? "" : ";") + text;
    first = false;
  }
  client->platform_version += "]";
  for (size_t i = 0; i < visible.size(); ++i) {
    if (visible[i] > 3) {
      return Error(PJRT_Error_Code_INVALID_ARGUMENT,
                   "visible_devices: GPU " + std::to_string(visible[i]) + " does not exist");
    }
    auto device = std::make_unique<PJRT_Device>();
    const int id = static_cast<int>(i);
    device->local_hardware_id = static_cast<int>(visible[i]);
    PJRT_DeviceDescription& d = device->description;
    d.id = id;
    d.debug_string = "cuda:" + std::to_string(id);
    d.to_string = "CudaDevice(id=" + std::to_string(id) + ")";
    d.attributes = {StringValue("compute_capability", d.compute_capability),
                    Int64Value("core_count", 132), StringValue("device_vendor", d.vendor)};
    for (const char* kind : {"device", "pinned_host"}) {
      auto memory = std::make_unique<FakeMemory>();
      memory->vtable = nullptr;
      memory->id = static_cast<int>(client->memories.size());
      memory->kind = kind;
      memory->devices = {device.get()};
      device->memories.push_back(memory.get());
      client->memories.push_back(std::move(memory));
    }
    client->device_ptrs.push_back(device.get());
    client->devices.push_back(std::move(device));
  }
  args->client = client.release();
  return nullptr;
}

PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args) {
  delete args->client;
  return nullptr;
}

PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  args->platform_version = args->client->platform_version.data();
  args->platform_version_size = args->client->platform_version.size();
  return nullptr;
}

PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args) {
  static const char kName[] = "cuda";
  args->platform_name = kName;
  args->platform_name_size = 4;
  return nullptr;
}

PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args) {
  args->devices = args->client->device_ptrs.data();
  args->num_devices = args->client->device_ptrs.size();
  return nullptr;
}

PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* args) {
  args->addressable_devices = args->client->device_ptrs.data();
  args->num_addressable_devices = args->client->device_ptrs.size();
  return nullptr;
}

PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args) {
  args->device_description = &args->device->description;
  return nullptr;
}

PJRT_Error* DescriptionId(PJRT_DeviceDescription_Id_Args* args) {
  args->id = args->device_description->id;
  return nullptr;
}

PJRT_Error* DescriptionKind(PJRT_DeviceDescription_Kind_Args* args) {
  args->device_kind = args->device_description->kind.data();
  args->device_kind_size = args->device_description->kind.size();
  return nullptr;
}

PJRT_Error* DescriptionDebugString(PJRT_DeviceDescription_DebugString_Args* args) {
  args->debug_string = args->device_description->debug_string.data();
  args->debug_string_size = args->device_description->debug_string.size();
  return nullptr;
}

PJRT_Error* DescriptionToString(PJRT_DeviceDescription_ToString_Args* args) {
  args->to_string = args->device_description->to_string.data();
  args->to_string_size = args->device_description->to_string.size();
  return nullptr;
}

PJRT_Error* DescriptionAttributes(PJRT_DeviceDescription_Attributes_Args* args) {
  args->attributes = args->device_description->attributes.data();
  args->num_attributes = args->device_description->attributes.size();
  return nullptr;
}

PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  args->local_hardware_id = args->device->local_hardware_id;
  return nullptr;
}

PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args) {
  args->is_addressable = true;
  return nullptr;
}

PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  args->memory = args->device->memories[0];
  return nullptr;
}

PJRT_Error* DeviceAddressableMemories(PJRT_Device_AddressableMemories_Args* args) {
  args->memories = args->device->memories.data();
  args->num_memories = args->device->memories.size();
  return nullptr;
}

// Allocator statistics: bytes_in_use 1 MiB x (id + 1), a 140 GiB limit, peak and allocation
// count; the rest unset.
PJRT_Error* DeviceMemoryStats(PJRT_Device_MemoryStats_Args* args) {
  const int64_t id = args->device->description.id;
  args->bytes_in_use = (id + 1) << 20;
  args->peak_bytes_in_use = (id + 2) << 20;
  args->peak_bytes_in_use_is_set = true;
  args->num_allocs = 7;
  args->num_allocs_is_set = true;
  args->bytes_limit = int64_t{140} << 30;
  args->bytes_limit_is_set = true;
  args->largest_alloc_size_is_set = false;
  args->bytes_reserved_is_set = false;
  args->peak_bytes_reserved_is_set = false;
  args->bytes_reservable_limit_is_set = false;
  args->largest_free_block_bytes_is_set = false;
  args->pool_bytes_is_set = false;
  args->peak_pool_bytes_is_set = false;
  return nullptr;
}

PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args) {
  args->kind = Fake(args->memory)->kind.data();
  args->kind_size = Fake(args->memory)->kind.size();
  return nullptr;
}

PJRT_Error* MemoryAddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args) {
  args->devices = Fake(args->memory)->devices.data();
  args->num_devices = Fake(args->memory)->devices.size();
  return nullptr;
}

// The value of `field: "..."` in a text proto, or empty.
std::string TextField(const std::string& text, const std::string& field) {
  const std::string key = field + ": \"";
  const size_t start = text.find(key);
  if (start == std::string::npos) return "";
  const size_t end = text.find('"', start + key.size());
  return end == std::string::npos ? "" : text.substr(start + key.size(), end - start - key.size());
}

// Like XLA:GPU 0.11.2: reads "topology", "target_config" and "host_target_machine_options" (all
// strings) and ignores other names; without a target config it would ask the machine's GPU,
// which this machine has not.
PJRT_Error* TopologyCreate(PJRT_TopologyDescription_Create_Args* args) {
  auto topology = std::make_unique<PJRT_TopologyDescription>();
  topology->given = "name=" + std::string(args->topology_name, args->topology_name_size);
  std::string shape;
  for (size_t i = 0; i < args->num_options; ++i) {
    const PJRT_NamedValue& v = args->create_options[i];
    const std::string name(v.name, v.name_size);
    topology->given += ";" + Describe(v);
    if (name != "topology" && name != "target_config" && name != "host_target_machine_options") {
      continue;
    }
    if (v.type != PJRT_NamedValue_kString) {
      return Error(PJRT_Error_Code_INTERNAL, "std::get: wrong index for variant (" + name + ")");
    }
    const std::string value(v.string_value, v.value_size);
    if (name == "topology") shape = value;
    if (name == "target_config") topology->target_config = value;
    if (name == "host_target_machine_options") topology->host_options = value;
  }
  if (topology->target_config.empty()) {
    return Error(PJRT_Error_Code_FAILED_PRECONDITION, "No visible GPU devices.");
  }
  if (topology->target_config.find("gpu_device_info") == std::string::npos) {
    return Error(PJRT_Error_Code_FAILED_PRECONDITION,
                 "Failed to parse GpuTargetConfigProto from the 'target_config' parameter.");
  }
  int count = 0;
  int partitions = 0, hosts = 0, per_host = 0;
  if (std::sscanf(shape.c_str(), "%dx%dx%d", &partitions, &hosts, &per_host) == 3) {
    count = partitions * hosts * per_host;
  }
  if (count <= 0) {
    return Error(PJRT_Error_Code_FAILED_PRECONDITION,
                 "Cannot create topology without an explicit topology shape or without a client");
  }
  if (topology->host_options.empty()) topology->host_options = "triple: \"x86_64\"";
  std::string kind = TextField(topology->target_config, "device_description_str");
  if (kind.empty()) kind = "NVIDIA H200";
  topology->version = kind;
  for (int id = 0; id < count; ++id) {
    auto d = std::make_unique<PJRT_DeviceDescription>();
    d->id = id;
    d->kind = kind;
    d->debug_string = kind + "_" + std::to_string(id);
    d->to_string = "StreamExecutorGpuDevice(id=" + std::to_string(id) + ")";
    d->attributes = {StringValue("compute_capability", d->compute_capability),
                     Int64Value("core_count", 132), StringValue("device_vendor", d->vendor)};
    topology->device_ptrs.push_back(d.get());
    topology->devices.push_back(std::move(d));
  }
  topology->attributes = {StringValue("target_config", topology->target_config),
                          StringValue("host_target_machine_options", topology->host_options),
                          StringValue("fake_given", topology->given)};
  args->topology = topology.release();
  ++live_topologies;
  return nullptr;
}

PJRT_Error* TopologyDestroy(PJRT_TopologyDescription_Destroy_Args* args) {
  delete args->topology;
  --live_topologies;
  return nullptr;
}

PJRT_Error* TopologyPlatformName(PJRT_TopologyDescription_PlatformName_Args* args) {
  args->platform_name = "cuda";
  args->platform_name_size = 4;
  return nullptr;
}

PJRT_Error* TopologyPlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args* args) {
  args->platform_version = args->topology->version.data();
  args->platform_version_size = args->topology->version.size();
  return nullptr;
}

PJRT_Error* TopologyAttributes(PJRT_TopologyDescription_Attributes_Args* args) {
  args->attributes = args->topology->attributes.data();
  args->num_attributes = args->topology->attributes.size();
  return nullptr;
}

PJRT_Error* TopologyDevices(PJRT_TopologyDescription_GetDeviceDescriptions_Args* args) {
  args->descriptions = args->topology->device_ptrs.data();
  args->num_descriptions = args->topology->device_ptrs.size();
  return nullptr;
}

// Hex of `bytes`.
std::string Hex(const char* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[(static_cast<unsigned char>(bytes[i]) >> 4) & 0xf];
    out += kDigits[static_cast<unsigned char>(bytes[i]) & 0xf];
  }
  return out;
}

// A deviceless compile: "module @broken" fails as XLA:GPU's parser would.
PJRT_Error* Compile(PJRT_Compile_Args* args) {
  if (args->topology == nullptr) {
    return Error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Compile: no topology");
  }
  const std::string code(args->program->code, args->program->code_size);
  const std::string format(args->program->format, args->program->format_size);
  if (code.find("@broken") != std::string::npos) {
    return Error(PJRT_Error_Code_INVALID_ARGUMENT, "Failed to parse the program");
  }
  auto executable = std::make_unique<PJRT_Executable>();
  const size_t at = code.find('@');
  const size_t end = code.find(' ', at);
  executable->name = at == std::string::npos ? "main" : code.substr(at + 1, end - at - 1);
  executable->record = "topology=" + args->topology->version + "x" +
                       std::to_string(args->topology->devices.size()) +
                       ";client=" + (args->client == nullptr ? "null" : "given") +
                       ";options=" + Hex(args->compile_options, args->compile_options_size) +
                       ";format=" + format + ";code_size=" + std::to_string(code.size());
  args->executable = executable.release();
  ++live_executables;
  return nullptr;
}

PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args) {
  delete args->executable;
  --live_executables;
  return nullptr;
}

PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args) {
  args->executable_name = args->executable->name.data();
  args->executable_name_size = args->executable->name.size();
  return nullptr;
}

PJRT_Error* ExecutableNumReplicas(PJRT_Executable_NumReplicas_Args* args) {
  args->num_replicas = 1;
  return nullptr;
}

PJRT_Error* ExecutableNumPartitions(PJRT_Executable_NumPartitions_Args* args) {
  args->num_partitions = 1;
  return nullptr;
}

PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  args->num_outputs = 1;
  return nullptr;
}

PJRT_Error* ExecutableFingerprint(PJRT_Executable_Fingerprint_Args* args) {
  args->executable_fingerprint = args->executable->record.data();
  args->executable_fingerprint_size = args->executable->record.size();
  return nullptr;
}

void DeleteSerialized(PJRT_SerializedExecutable* serialized) {
  delete reinterpret_cast<FakeSerialized*>(serialized);
}

// "fake-cuda-executable|<name>|<record>" (never starting with a zero byte, like a protobuf).
PJRT_Error* ExecutableSerialize(PJRT_Executable_Serialize_Args* args) {
  auto* serialized = new FakeSerialized{"fake-cuda-executable|" + args->executable->name + "|" +
                                        args->executable->record};
  args->serialized_bytes = serialized->bytes.data();
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_executable = reinterpret_cast<PJRT_SerializedExecutable*>(serialized);
  args->serialized_executable_deleter = &DeleteSerialized;
  return nullptr;
}

// The table: every slot UNIMPLEMENTED, then the ones above.
PJRT_Api MakeApi() {
  PJRT_Api api{};
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  // Every slot after the version is a function pointer: fill them with the generic answer.
  using Slot = void*;
  auto* first = reinterpret_cast<Slot*>(&api.PJRT_Error_Destroy);
  auto* end = reinterpret_cast<Slot*>(reinterpret_cast<char*>(&api) + sizeof(api));
  for (Slot* slot = first; slot < end; ++slot) *slot = reinterpret_cast<Slot>(&Unimplemented);
  api.PJRT_Error_Destroy = &ErrorDestroy;
  api.PJRT_Error_Message = &ErrorMessage;
  api.PJRT_Error_GetCode = &ErrorGetCode;
  api.PJRT_Plugin_Initialize = &PluginInitialize;
  api.PJRT_Plugin_Attributes = &PluginAttributes;
  api.PJRT_Client_Create = &ClientCreate;
  api.PJRT_Client_Destroy = &ClientDestroy;
  api.PJRT_Client_PlatformName = &ClientPlatformName;
  api.PJRT_Client_PlatformVersion = &ClientPlatformVersion;
  api.PJRT_Client_Devices = &ClientDevices;
  api.PJRT_Client_AddressableDevices = &ClientAddressableDevices;
  api.PJRT_Device_GetDescription = &DeviceGetDescription;
  api.PJRT_DeviceDescription_Id = &DescriptionId;
  api.PJRT_DeviceDescription_Kind = &DescriptionKind;
  api.PJRT_DeviceDescription_DebugString = &DescriptionDebugString;
  api.PJRT_DeviceDescription_ToString = &DescriptionToString;
  api.PJRT_DeviceDescription_Attributes = &DescriptionAttributes;
  api.PJRT_Device_LocalHardwareId = &DeviceLocalHardwareId;
  api.PJRT_Device_IsAddressable = &DeviceIsAddressable;
  api.PJRT_Device_DefaultMemory = &DeviceDefaultMemory;
  api.PJRT_Device_AddressableMemories = &DeviceAddressableMemories;
  api.PJRT_Device_MemoryStats = &DeviceMemoryStats;
  api.PJRT_Memory_Kind = &MemoryKind;
  api.PJRT_Memory_AddressableByDevices = &MemoryAddressableByDevices;
  api.PJRT_TopologyDescription_Create = &TopologyCreate;
  api.PJRT_TopologyDescription_Destroy = &TopologyDestroy;
  api.PJRT_TopologyDescription_PlatformName = &TopologyPlatformName;
  api.PJRT_TopologyDescription_PlatformVersion = &TopologyPlatformVersion;
  api.PJRT_TopologyDescription_Attributes = &TopologyAttributes;
  api.PJRT_TopologyDescription_GetDeviceDescriptions = &TopologyDevices;
  api.PJRT_Compile = &Compile;
  api.PJRT_Executable_Destroy = &ExecutableDestroy;
  api.PJRT_Executable_Name = &ExecutableName;
  api.PJRT_Executable_NumReplicas = &ExecutableNumReplicas;
  api.PJRT_Executable_NumPartitions = &ExecutableNumPartitions;
  api.PJRT_Executable_NumOutputs = &ExecutableNumOutputs;
  api.PJRT_Executable_Fingerprint = &ExecutableFingerprint;
  api.PJRT_Executable_Serialize = &ExecutableSerialize;
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = MakeApi();
  return &api;
}

// The topologies and executables created and not yet destroyed, for lifetime tests.
extern "C" __attribute__((visibility("default"))) void FakeCudaPluginLiveObjects(
    int* topologies, int* executables) {
  *topologies = live_topologies;
  *executables = live_executables;
}
