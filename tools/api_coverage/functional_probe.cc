#include "tools/api_coverage/functional_probe.h"

// C standard library / POSIX.
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

// C++ standard library.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

// The PJRT FFI extension's ABI (PJRT C API 0.81), the suite's program and compile options.
#include "tests/conformance/test_data.h"
#include "xla_plugin/abi/ffi_extension.h"

namespace api_coverage {
namespace {

// A zero-filled Args struct of type T named `var`, with its struct_size set.
#define PROBE_ARGS(T, var)      \
  T var;                        \
  std::memset(&var, 0, sizeof(var)); \
  var.struct_size = T##_STRUCT_SIZE

// Calls `slot` with `args` and records the result under the slot's name; true when it returned OK.
#define PROBE_CALL(slot, args) Call(#slot, api_->slot, &(args))
// The same, recorded under "slot (what)".
#define PROBE_CALL_AS(slot, what, args) Call(#slot " (" what ")", api_->slot, &(args))

// Flattens a message to one line without tabs.
std::string OneLine(std::string text) {
  for (char& c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';  // Tabs, newlines, bytes of binary data.
    if (c == '|') c = '/';                // Markdown table cells.
  }
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text;
}

// The name of an error code, as absl spells it.
std::string CodeName(PJRT_Error_Code code) {
  static const char* const kNames[] = {
      "OK",           "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS",   "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",   "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",      "DATA_LOSS",
      "UNAUTHENTICATED"};
  const int index = static_cast<int>(code);
  if (index >= 0 && index < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) {
    return kNames[index];
  }
  return "code " + std::to_string(index);
}

// The scenario, run in the probe child; writes "RUN\tslot" before and "DONE\tslot\tstatus\tmsg"
// after every call to `fd`.
class Scenario {
 public:
  Scenario(const PJRT_Api* api, int fd) : api_(api), fd_(fd) {}

  void Run(const std::vector<CreateOption>& options);

 private:
  // Writes one line to the parent.
  void Write(const std::string& line) {
    const std::string with_newline = line + "\n";
    ssize_t ignored = write(fd_, with_newline.data(), with_newline.size());
    (void)ignored;
  }

  // Records `status`/`message` for `name`.
  void Record(const std::string& name, const std::string& status, const std::string& message) {
    Write("DONE\t" + name + "\t" + status + "\t" + OneLine(message));
  }

  // The code and message of `error` (destroyed); "ok" for nullptr.
  void Describe(PJRT_Error* error, std::string* status, std::string* message) {
    if (error == nullptr) {
      *status = "ok";
      return;
    }
    PROBE_ARGS(PJRT_Error_GetCode_Args, code);
    code.error = error;
    PJRT_Error* code_error = api_->PJRT_Error_GetCode(&code);
    PROBE_ARGS(PJRT_Error_Message_Args, text);
    text.error = error;
    api_->PJRT_Error_Message(&text);
    *message = std::string(text.message, text.message_size);
    if (code_error != nullptr) {
      *status = "error: (no code)";
    } else if (code.code == PJRT_Error_Code_UNIMPLEMENTED) {
      *status = "UNIMPLEMENTED";
    } else {
      *status = "error: " + CodeName(code.code);
    }
    PROBE_ARGS(PJRT_Error_Destroy_Args, destroy);
    destroy.error = error;
    api_->PJRT_Error_Destroy(&destroy);
    // Describing an error used the three PJRT_Error_* slots.
    Record("PJRT_Error_GetCode", code_error == nullptr ? "ok" : "error: (no code)", "");
    Record("PJRT_Error_Message", "ok", "");
    Record("PJRT_Error_Destroy", "ok", "");
  }

  template <typename Args>
  bool Call(const std::string& name, PJRT_Error* (*fn)(Args*), Args* args) {
    if (fn == nullptr) return false;  // The zeroed-args probe reports it NULL.
    Write("RUN\t" + name);
    std::string status, message;
    Describe(fn(args), &status, &message);
    Record(name, status, message);
    return status == "ok";
  }

  // Awaits and destroys `event` (recorded as PJRT_Event_Await / _Destroy); true when it
  // completed OK.
  bool AwaitAndDestroy(PJRT_Event* event) {
    if (event == nullptr) return true;
    PROBE_ARGS(PJRT_Event_Await_Args, await);
    await.event = event;
    const bool ok = PROBE_CALL(PJRT_Event_Await, await);
    PROBE_ARGS(PJRT_Event_Destroy_Args, destroy);
    destroy.event = event;
    PROBE_CALL(PJRT_Event_Destroy, destroy);
    return ok;
  }

  // Reads `buffer` (f32[4]) into `values`; recorded as PJRT_Buffer_ToHostBuffer.
  bool Read(PJRT_Buffer* buffer, float values[4]) {
    PROBE_ARGS(PJRT_Buffer_ToHostBuffer_Args, to_host);
    to_host.src = buffer;
    to_host.dst = values;
    to_host.dst_size = 4 * sizeof(float);
    return PROBE_CALL(PJRT_Buffer_ToHostBuffer, to_host) && AwaitAndDestroy(to_host.event);
  }

  void Buffers(PJRT_Client* client, PJRT_Device* device, PJRT_Memory* memory);
  void Executables(PJRT_Client* client, PJRT_Device* device);
  void ExecuteWithContext(PJRT_LoadedExecutable* loaded, PJRT_Buffer* input);
  void Topologies(PJRT_Client* client);
  void DestroyBuffer(PJRT_Buffer* buffer) {
    PROBE_ARGS(PJRT_Buffer_Destroy_Args, destroy);
    destroy.buffer = buffer;
    PROBE_CALL(PJRT_Buffer_Destroy, destroy);
  }

  const PJRT_Api* api_;  // The plugin.
  int fd_;               // Where results go.
};

void Scenario::Run(const std::vector<CreateOption>& options) {
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
    if (options[i].is_int) {
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
    Buffers(client, device, memory);
    Executables(client, device);
  }
  Topologies(client);

  PROBE_ARGS(PJRT_Client_Destroy_Args, destroy);
  destroy.client = client;
  PROBE_CALL(PJRT_Client_Destroy, destroy);
}

void Scenario::Buffers(PJRT_Client* client, PJRT_Device* device, PJRT_Memory* memory) {
  const float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const int64_t dims[1] = {4};
  PROBE_ARGS(PJRT_Client_BufferFromHostBuffer_Args, from_host);
  from_host.client = client;
  from_host.data = data;
  from_host.type = PJRT_Buffer_Type_F32;
  from_host.dims = dims;
  from_host.num_dims = 1;
  from_host.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  from_host.device = device;
  if (!PROBE_CALL(PJRT_Client_BufferFromHostBuffer, from_host)) return;
  PJRT_Buffer* buffer = from_host.buffer;
  if (PJRT_Event* done = from_host.done_with_host_buffer) {
    PROBE_ARGS(PJRT_Event_IsReady_Args, is_ready);
    is_ready.event = done;
    PROBE_CALL(PJRT_Event_IsReady, is_ready);
    PROBE_ARGS(PJRT_Event_OnReady_Args, on_ready);
    on_ready.event = done;
    on_ready.callback = [](PJRT_Error* error, void* user_arg) {
      // The callback owns `error`; the probe only needs it to run.
      if (error != nullptr) {
        const PJRT_Api* api = static_cast<const PJRT_Api*>(user_arg);
        PROBE_ARGS(PJRT_Error_Destroy_Args, destroy);
        destroy.error = error;
        api->PJRT_Error_Destroy(&destroy);
      }
    };
    on_ready.user_arg = const_cast<PJRT_Api*>(api_);
    PROBE_CALL(PJRT_Event_OnReady, on_ready);
    PROBE_ARGS(PJRT_Event_Await_Args, await);
    await.event = done;
    PROBE_CALL(PJRT_Event_Await, await);
    PROBE_ARGS(PJRT_Event_Error_Args, event_error);
    event_error.event = done;
    PROBE_CALL(PJRT_Event_Error, event_error);
    PROBE_ARGS(PJRT_Event_Destroy_Args, destroy);
    destroy.event = done;
    PROBE_CALL(PJRT_Event_Destroy, destroy);
  }
  PROBE_ARGS(PJRT_Buffer_ElementType_Args, element_type);
  element_type.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_ElementType, element_type);
  PROBE_ARGS(PJRT_Buffer_Dimensions_Args, dimensions);
  dimensions.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Dimensions, dimensions);
  PROBE_ARGS(PJRT_Buffer_UnpaddedDimensions_Args, unpadded);
  unpadded.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_UnpaddedDimensions, unpadded);
  PROBE_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args, dynamic);
  dynamic.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_DynamicDimensionIndices, dynamic);
  PROBE_ARGS(PJRT_Buffer_GetMemoryLayout_Args, layout);
  layout.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_GetMemoryLayout, layout);
  PROBE_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args, size);
  size.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_OnDeviceSizeInBytes, size);
  PROBE_ARGS(PJRT_Buffer_Device_Args, buffer_device);
  buffer_device.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Device, buffer_device);
  PROBE_ARGS(PJRT_Buffer_Memory_Args, buffer_memory);
  buffer_memory.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Memory, buffer_memory);
  PROBE_ARGS(PJRT_Buffer_IsOnCpu_Args, on_cpu);
  on_cpu.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_IsOnCpu, on_cpu);
  PROBE_ARGS(PJRT_Buffer_ReadyEvent_Args, ready);
  ready.buffer = buffer;
  if (PROBE_CALL(PJRT_Buffer_ReadyEvent, ready)) AwaitAndDestroy(ready.event);
  PROBE_ARGS(PJRT_Buffer_UnsafePointer_Args, unsafe);
  unsafe.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_UnsafePointer, unsafe);
  PROBE_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, increase);
  increase.buffer = buffer;
  if (PROBE_CALL(PJRT_Buffer_IncreaseExternalReferenceCount, increase)) {
    PROBE_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, opaque);
    opaque.buffer = buffer;
    PROBE_CALL(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, opaque);
    PROBE_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, decrease);
    decrease.buffer = buffer;
    PROBE_CALL(PJRT_Buffer_DecreaseExternalReferenceCount, decrease);
  }
  float values[4] = {0, 0, 0, 0};
  if (Read(buffer, values) && values[3] != 4.0f) {
    Record("PJRT_Buffer_ToHostBuffer (values)", "error: wrong values", "");
  }
  PROBE_ARGS(PJRT_Buffer_CopyToDevice_Args, to_device);
  to_device.buffer = buffer;
  to_device.dst_device = device;
  if (PROBE_CALL(PJRT_Buffer_CopyToDevice, to_device)) DestroyBuffer(to_device.dst_buffer);
  if (memory != nullptr) {
    PROBE_ARGS(PJRT_Buffer_CopyToMemory_Args, to_memory);
    to_memory.buffer = buffer;
    to_memory.dst_memory = memory;
    if (PROBE_CALL(PJRT_Buffer_CopyToMemory, to_memory)) DestroyBuffer(to_memory.dst_buffer);
  }
  PROBE_ARGS(PJRT_Client_CreateUninitializedBuffer_Args, uninitialized);
  uninitialized.client = client;
  uninitialized.shape_dims = dims;
  uninitialized.shape_num_dims = 1;
  uninitialized.shape_element_type = PJRT_Buffer_Type_F32;
  uninitialized.device = device;
  if (PROBE_CALL(PJRT_Client_CreateUninitializedBuffer, uninitialized)) {
    DestroyBuffer(uninitialized.buffer);
  }
  PROBE_ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_Delete, del);
  PROBE_ARGS(PJRT_Buffer_IsDeleted_Args, is_deleted);
  is_deleted.buffer = buffer;
  PROBE_CALL(PJRT_Buffer_IsDeleted, is_deleted);
  DestroyBuffer(buffer);
}

void Scenario::Executables(PJRT_Client* client, PJRT_Device* device) {
  std::string code = pjrt_conformance::kAddOneF32;
  const std::string format = "mlir";
  const std::string compile_options = pjrt_conformance::CompileOptions1x1();
  PROBE_ARGS(PJRT_Program, program);
  program.code = &code[0];
  program.code_size = code.size();
  program.format = format.data();
  program.format_size = format.size();
  PROBE_ARGS(PJRT_Client_Compile_Args, compile);
  compile.client = client;
  compile.program = &program;
  compile.compile_options = compile_options.data();
  compile.compile_options_size = compile_options.size();
  if (!PROBE_CALL(PJRT_Client_Compile, compile)) return;
  PJRT_LoadedExecutable* loaded = compile.executable;

  PROBE_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, loaded_devices);
  loaded_devices.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_AddressableDevices, loaded_devices);
  PROBE_ARGS(PJRT_LoadedExecutable_Fingerprint_Args, loaded_fingerprint);
  loaded_fingerprint.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_Fingerprint, loaded_fingerprint);
  PROBE_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args, device_assignment);
  device_assignment.executable = loaded;
  if (PROBE_CALL(PJRT_LoadedExecutable_GetDeviceAssignment, device_assignment) &&
      device_assignment.serialized_device_assignment_deleter != nullptr) {
    device_assignment.serialized_device_assignment_deleter(
        device_assignment.serialized_device_assignment);
  }
  PROBE_ARGS(PJRT_LoadedExecutable_IsDeleted_Args, loaded_deleted);
  loaded_deleted.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_IsDeleted, loaded_deleted);

  PROBE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, get_executable);
  get_executable.loaded_executable = loaded;
  if (PROBE_CALL(PJRT_LoadedExecutable_GetExecutable, get_executable)) {
    PJRT_Executable* executable = get_executable.executable;
    PROBE_ARGS(PJRT_Executable_Name_Args, name);
    name.executable = executable;
    PROBE_CALL(PJRT_Executable_Name, name);
    PROBE_ARGS(PJRT_Executable_NumReplicas_Args, replicas);
    replicas.executable = executable;
    PROBE_CALL(PJRT_Executable_NumReplicas, replicas);
    PROBE_ARGS(PJRT_Executable_NumPartitions_Args, partitions);
    partitions.executable = executable;
    PROBE_CALL(PJRT_Executable_NumPartitions, partitions);
    PROBE_ARGS(PJRT_Executable_NumOutputs_Args, outputs);
    outputs.executable = executable;
    PROBE_CALL(PJRT_Executable_NumOutputs, outputs);
    PROBE_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, code_size);
    code_size.executable = executable;
    PROBE_CALL(PJRT_Executable_SizeOfGeneratedCodeInBytes, code_size);
    PROBE_ARGS(PJRT_Executable_GetCostAnalysis_Args, cost);
    cost.executable = executable;
    PROBE_CALL(PJRT_Executable_GetCostAnalysis, cost);
    PROBE_ARGS(PJRT_Executable_OutputElementTypes_Args, element_types);
    element_types.executable = executable;
    PROBE_CALL(PJRT_Executable_OutputElementTypes, element_types);
    PROBE_ARGS(PJRT_Executable_OutputDimensions_Args, output_dims);
    output_dims.executable = executable;
    PROBE_CALL(PJRT_Executable_OutputDimensions, output_dims);
    PROBE_ARGS(PJRT_Executable_OutputMemoryKinds_Args, memory_kinds);
    memory_kinds.executable = executable;
    PROBE_CALL(PJRT_Executable_OutputMemoryKinds, memory_kinds);
    PROBE_ARGS(PJRT_Executable_Fingerprint_Args, fingerprint);
    fingerprint.executable = executable;
    PROBE_CALL(PJRT_Executable_Fingerprint, fingerprint);
    PROBE_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args, memory_stats);
    memory_stats.executable = executable;
    PROBE_CALL(PJRT_Executable_GetCompiledMemoryStats, memory_stats);
    PROBE_ARGS(PJRT_Program, optimized_program);
    PROBE_ARGS(PJRT_Executable_OptimizedProgram_Args, optimized);
    optimized.executable = executable;
    optimized.program = &optimized_program;
    if (PROBE_CALL(PJRT_Executable_OptimizedProgram, optimized)) {
      std::string bytes(optimized_program.code_size, '\0');
      optimized_program.code = &bytes[0];
      PROBE_CALL_AS(PJRT_Executable_OptimizedProgram, "second call, with the buffer", optimized);
    }
    PROBE_ARGS(PJRT_Executable_Serialize_Args, serialize);
    serialize.executable = executable;
    if (PROBE_CALL(PJRT_Executable_Serialize, serialize)) {
      const std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
      if (serialize.serialized_executable_deleter != nullptr) {
        serialize.serialized_executable_deleter(serialize.serialized_executable);
      }
      PROBE_ARGS(PJRT_Executable_DeserializeAndLoad_Args, load);
      load.client = client;
      load.serialized_executable = bytes.data();
      load.serialized_executable_size = bytes.size();
      if (PROBE_CALL(PJRT_Executable_DeserializeAndLoad, load)) {
        PROBE_ARGS(PJRT_LoadedExecutable_Destroy_Args, destroy);
        destroy.executable = load.loaded_executable;
        PROBE_CALL(PJRT_LoadedExecutable_Destroy, destroy);
      }
    }
    PROBE_ARGS(PJRT_Executable_Destroy_Args, destroy);
    destroy.executable = executable;
    PROBE_CALL(PJRT_Executable_Destroy, destroy);
  }

  const float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const int64_t dims[1] = {4};
  PROBE_ARGS(PJRT_Client_BufferFromHostBuffer_Args, from_host);
  from_host.client = client;
  from_host.data = data;
  from_host.type = PJRT_Buffer_Type_F32;
  from_host.dims = dims;
  from_host.num_dims = 1;
  from_host.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  from_host.device = device;
  if (Call("PJRT_Client_BufferFromHostBuffer", api_->PJRT_Client_BufferFromHostBuffer,
           &from_host)) {
    AwaitAndDestroy(from_host.done_with_host_buffer);
    PJRT_Buffer* input = from_host.buffer;
    PJRT_Buffer* const arguments[1] = {input};
    PJRT_Buffer* const* argument_lists[1] = {arguments};
    PJRT_Buffer* outputs[1] = {nullptr};
    PJRT_Buffer** output_lists[1] = {outputs};
    PJRT_Event* complete[1] = {nullptr};
    PROBE_ARGS(PJRT_ExecuteOptions, options);
    PROBE_ARGS(PJRT_LoadedExecutable_Execute_Args, execute);
    execute.executable = loaded;
    execute.options = &options;
    execute.argument_lists = argument_lists;
    execute.num_devices = 1;
    execute.num_args = 1;
    execute.output_lists = output_lists;
    execute.device_complete_events = complete;
    if (PROBE_CALL(PJRT_LoadedExecutable_Execute, execute)) {
      AwaitAndDestroy(complete[0]);
      float values[4] = {0, 0, 0, 0};
      if (Read(outputs[0], values) && values[3] != 5.0f) {
        Record("PJRT_LoadedExecutable_Execute (values)", "error: wrong values", "");
      }
      DestroyBuffer(outputs[0]);
    }
    ExecuteWithContext(loaded, input);
    DestroyBuffer(input);
  }

  PROBE_ARGS(PJRT_LoadedExecutable_Delete_Args, del);
  del.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_Delete, del);
  PROBE_ARGS(PJRT_LoadedExecutable_Destroy_Args, destroy);
  destroy.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_Destroy, destroy);
}

void Scenario::ExecuteWithContext(PJRT_LoadedExecutable* loaded, PJRT_Buffer* input) {
  PROBE_ARGS(PJRT_ExecuteContext_Create_Args, create);
  if (!PROBE_CALL(PJRT_ExecuteContext_Create, create)) return;
  PJRT_ExecuteContext* context = create.context;
  PJRT_Buffer* const arguments[1] = {input};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {outputs};
  PROBE_ARGS(PJRT_ExecuteOptions, options);
  options.context = context;
  PROBE_ARGS(PJRT_LoadedExecutable_Execute_Args, execute);
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  if (PROBE_CALL_AS(PJRT_LoadedExecutable_Execute, "with an empty execute context", execute)) {
    DestroyBuffer(outputs[0]);
  }
  // FFI user data in the context (PJRT FFI extension): a type, then an entry of it.
  const PJRT_Extension_Base* ext = api_->extension_start;
  while (ext != nullptr && ext->type != PJRT_Extension_Type_FFI) ext = ext->next;
  if (ext != nullptr && ext->struct_size >= pjrtkit::abi::kFfiExtensionSize) {
    const auto* ffi = reinterpret_cast<const pjrtkit::abi::FfiExtension*>(ext);
    static const char kTypeName[] = "api_coverage_probe_type";
    pjrtkit::abi::FfiTypeRegisterArgs type{};
    type.struct_size = pjrtkit::abi::kFfiTypeRegisterArgsSize;
    type.type_name = kTypeName;
    type.type_name_size = sizeof(kTypeName) - 1;
    static const pjrtkit::abi::FfiTypeInfo kNoCallbacks{};  // XLA:CPU reads it: not null.
    type.type_info = &kNoCallbacks;
    pjrtkit::abi::FfiUserDataAddArgs add{};
    add.struct_size = pjrtkit::abi::kFfiUserDataAddArgsSize;
    add.context = context;
    static int payload = 0;
    add.user_data.data = &payload;
    if (Call("PJRT_FFI_Type_Register (FFI extension)", ffi->type_register, &type)) {
      add.user_data.type_id = type.type_id;
      if (Call("PJRT_FFI_UserData_Add (FFI extension)", ffi->user_data_add, &add)) {
        outputs[0] = nullptr;
        if (PROBE_CALL_AS(PJRT_LoadedExecutable_Execute, "execute context with FFI user data",
                          execute)) {
          DestroyBuffer(outputs[0]);
        }
      }
    }
  }
  PROBE_ARGS(PJRT_ExecuteContext_Destroy_Args, destroy);
  destroy.context = context;
  PROBE_CALL(PJRT_ExecuteContext_Destroy, destroy);
}

void Scenario::Topologies(PJRT_Client* client) {
  PROBE_ARGS(PJRT_Client_TopologyDescription_Args, get);
  get.client = client;
  if (PROBE_CALL(PJRT_Client_TopologyDescription, get)) {
    PJRT_TopologyDescription* topology = get.topology;
    PROBE_ARGS(PJRT_TopologyDescription_PlatformName_Args, name);
    name.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_PlatformName, name);
    PROBE_ARGS(PJRT_TopologyDescription_PlatformVersion_Args, version);
    version.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_PlatformVersion, version);
    PROBE_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, descriptions);
    descriptions.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_GetDeviceDescriptions, descriptions);
    PROBE_ARGS(PJRT_TopologyDescription_Attributes_Args, attributes);
    attributes.topology = topology;
    PROBE_CALL(PJRT_TopologyDescription_Attributes, attributes);
    PROBE_ARGS(PJRT_TopologyDescription_Serialize_Args, serialize);
    serialize.topology = topology;
    if (PROBE_CALL(PJRT_TopologyDescription_Serialize, serialize)) {
      const std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
      if (serialize.serialized_topology_deleter != nullptr) {
        serialize.serialized_topology_deleter(serialize.serialized_topology);
      }
      PROBE_ARGS(PJRT_TopologyDescription_Deserialize_Args, deserialize);
      deserialize.serialized_topology = bytes.data();
      deserialize.serialized_topology_size = bytes.size();
      if (PROBE_CALL(PJRT_TopologyDescription_Deserialize, deserialize)) {
        PROBE_ARGS(PJRT_TopologyDescription_Destroy_Args, destroy);
        destroy.topology = deserialize.topology;
        PROBE_CALL(PJRT_TopologyDescription_Destroy, destroy);
      }
    }
    std::string code = pjrt_conformance::kAddOneF32;
    const std::string format = "mlir";
    const std::string compile_options = pjrt_conformance::CompileOptions1x1();
    PROBE_ARGS(PJRT_Program, program);
    program.code = &code[0];
    program.code_size = code.size();
    program.format = format.data();
    program.format_size = format.size();
    PROBE_ARGS(PJRT_Compile_Args, compile);
    compile.topology = topology;
    compile.program = &program;
    compile.compile_options = compile_options.data();
    compile.compile_options_size = compile_options.size();
    compile.client = client;
    if (PROBE_CALL(PJRT_Compile, compile)) {
      PROBE_ARGS(PJRT_Executable_Destroy_Args, destroy);
      destroy.executable = compile.executable;
      PROBE_CALL(PJRT_Executable_Destroy, destroy);
    }
  }
  PROBE_ARGS(PJRT_TopologyDescription_Create_Args, create);
  if (PROBE_CALL(PJRT_TopologyDescription_Create, create)) {
    PROBE_ARGS(PJRT_TopologyDescription_Destroy_Args, destroy);
    destroy.topology = create.topology;
    PROBE_CALL(PJRT_TopologyDescription_Destroy, destroy);
  }
}

}  // namespace

bool ParseCreateOption(const std::string& text, CreateOption* option) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) return false;
  const size_t colon = text.find(':', equals);
  if (colon == std::string::npos) return false;
  option->name = text.substr(0, equals);
  const std::string type = text.substr(equals + 1, colon - equals - 1);
  const std::string value = text.substr(colon + 1);
  if (type == "int") {
    char* end = nullptr;
    option->is_int = true;
    option->int_value = std::strtoll(value.c_str(), &end, 10);
    return !value.empty() && end != nullptr && *end == '\0';
  }
  if (type == "str") {
    option->string_value = value;
    return true;
  }
  if (type == "path") {
    char resolved[PATH_MAX];
    option->string_value = realpath(value.c_str(), resolved) != nullptr ? resolved : value;
    return true;
  }
  return false;
}

std::map<std::string, FunctionalResult> RunFunctionalProbe(
    const PJRT_Api* api, const std::vector<CreateOption>& options) {
  std::map<std::string, FunctionalResult> results;
  int fds[2];
  if (pipe(fds) != 0) return results;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return results;
  }
  if (pid == 0) {
    close(fds[0]);
    Scenario(api, fds[1]).Run(options);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t got; (got = read(fds[0], chunk, sizeof(chunk))) > 0;) text.append(chunk, got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::istringstream lines(text);
  std::string line, running;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    if (fields.size() >= 2 && fields[0] == "RUN") running = fields[1];
    if (fields.size() >= 3 && fields[0] == "DONE") {
      if (fields[1] == running) running.clear();
      if (results.count(fields[1]) == 0) {
        results[fields[1]] = FunctionalResult{fields[2], fields.size() > 3 ? fields[3] : ""};
      }
    }
  }
  if (!running.empty()) results[running] = FunctionalResult{"crashed", ""};
  return results;
}

}  // namespace api_coverage
