#include "tools/api_coverage/probe_executables.h"

// C++ standard library.
#include <cstdint>
#include <cstring>
#include <string>

// The PJRT FFI extension's ABI (PJRT C API 0.81), the suite's program and compile options.
#include "tests/conformance/test_data.h"
#include "xla_plugin/abi/ffi_extension.h"
#include "tools/api_coverage/probe_fixtures.h"

namespace api_coverage {
namespace {

// Executes `loaded` on `input` with an empty execute context, then with one holding FFI user
// data (through the PJRT FFI extension, when the plugin has it).
void ProbeExecuteWithContext(ProbeRecorder* probe, PJRT_LoadedExecutable* loaded,
                             PJRT_Buffer* input) {
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
    probe->DestroyBuffer(outputs[0]);
  }
  // FFI user data in the context (PJRT FFI extension): a type, then an entry of it.
  const PJRT_Extension_Base* ext = probe->api()->extension_start;
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
    if (probe->Call("PJRT_FFI_Type_Register (FFI extension)", ffi->type_register, &type)) {
      add.user_data.type_id = type.type_id;
      if (probe->Call("PJRT_FFI_UserData_Add (FFI extension)", ffi->user_data_add, &add)) {
        outputs[0] = nullptr;
        if (PROBE_CALL_AS(PJRT_LoadedExecutable_Execute, "execute context with FFI user data",
                          execute)) {
          probe->DestroyBuffer(outputs[0]);
        }
      }
    }
  }
  PROBE_ARGS(PJRT_ExecuteContext_Destroy_Args, destroy);
  destroy.context = context;
  PROBE_CALL(PJRT_ExecuteContext_Destroy, destroy);
}

}  // namespace

void ProbeExecutables(ProbeRecorder* probe, PJRT_Client* client, PJRT_Device* device) {
  AddOneProgram add_one;
  PROBE_ARGS(PJRT_Client_Compile_Args, compile);
  compile.client = client;
  compile.program = add_one.program();
  compile.compile_options = add_one.compile_options().data();
  compile.compile_options_size = add_one.compile_options().size();
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

  PJRT_Client_BufferFromHostBuffer_Args from_host = ProbeF32Buffer(probe, client, device);
  if (from_host.buffer != nullptr) {
    probe->AwaitAndDestroy(from_host.done_with_host_buffer);
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
      probe->AwaitAndDestroy(complete[0]);
      float values[4] = {0, 0, 0, 0};
      if (probe->Read(outputs[0], values) && values[3] != 5.0f) {
        probe->Record("PJRT_LoadedExecutable_Execute (values)", "error: wrong values", "");
      }
      probe->DestroyBuffer(outputs[0]);
    }
    ProbeExecuteWithContext(probe, loaded, input);
    probe->DestroyBuffer(input);
  }

  PROBE_ARGS(PJRT_LoadedExecutable_Delete_Args, del);
  del.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_Delete, del);
  PROBE_ARGS(PJRT_LoadedExecutable_Destroy_Args, destroy);
  destroy.executable = loaded;
  PROBE_CALL(PJRT_LoadedExecutable_Destroy, destroy);
}

}  // namespace api_coverage
