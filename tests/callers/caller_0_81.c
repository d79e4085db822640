/* A PJRT caller built against PJRT C API 0.81's header (the one xla-cpu-pjrt 0.0.1 ships), in
 * C: pjrtkit, at a newer C API, must serve it by its struct sizes. It creates a client, puts
 * f32[4] {0, 1, 2, 3} on device 0, compiles x + 1, runs it and reads back {1, 2, 3, 4}; then
 * checks that asking for a slot beyond 0.81's table is not what it does (it cannot: its
 * PJRT_Api ends at 0.81). Prints "caller 0.81: OK <values>" and exits 0, or names what failed.
 *
 * Usage: caller_0_81 <pjrtkit_plugin.so> <xla_cpu_pjrt.so> */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#if PJRT_API_MINOR != 81
#error "built against the wrong header: this caller must see PJRT C API 0.81"
#endif

static const PJRT_Api* api;

/* Exits naming `what` when `error` is set. */
static void Check(PJRT_Error* error, const char* what) {
  if (error == NULL) return;
  PJRT_Error_Message_Args message;
  memset(&message, 0, sizeof(message));
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api->PJRT_Error_Message(&message);
  fprintf(stderr, "caller 0.81: %s failed: %.*s\n", what, (int)message.message_size,
          message.message);
  exit(1);
}

/* Waits for `event` and destroys it. */
static void Await(PJRT_Event* event, const char* what) {
  PJRT_Event_Await_Args await_args;
  memset(&await_args, 0, sizeof(await_args));
  await_args.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
  await_args.event = event;
  Check(api->PJRT_Event_Await(&await_args), what);
  PJRT_Event_Destroy_Args destroy;
  memset(&destroy, 0, sizeof(destroy));
  destroy.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  destroy.event = event;
  Check(api->PJRT_Event_Destroy(&destroy), "PJRT_Event_Destroy");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <pjrtkit_plugin.so> <xla_cpu_pjrt.so>\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "caller 0.81: dlopen: %s\n", dlerror());
    return 1;
  }
  const PJRT_Api* (*get_api)(void) = (const PJRT_Api* (*)(void))dlsym(library, "GetPjrtApi");
  api = get_api();
  if (api->pjrt_api_version.major_version != PJRT_API_MAJOR ||
      api->pjrt_api_version.minor_version < PJRT_API_MINOR ||
      api->struct_size < PJRT_Api_STRUCT_SIZE) {
    fprintf(stderr, "caller 0.81: the plugin is older than 0.81\n");
    return 1;
  }

  PJRT_Plugin_Initialize_Args init;
  memset(&init, 0, sizeof(init));
  init.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
  Check(api->PJRT_Plugin_Initialize(&init), "PJRT_Plugin_Initialize");

  PJRT_NamedValue option;
  memset(&option, 0, sizeof(option));
  option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  option.name = "xla_cpu_plugin_path";
  option.name_size = strlen(option.name);
  option.type = PJRT_NamedValue_kString;
  option.string_value = argv[2];
  option.value_size = strlen(argv[2]);
  PJRT_Client_Create_Args create;
  memset(&create, 0, sizeof(create));
  create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  create.create_options = &option;
  create.num_options = 1;
  Check(api->PJRT_Client_Create(&create), "PJRT_Client_Create");

  PJRT_Client_AddressableDevices_Args devices;
  memset(&devices, 0, sizeof(devices));
  devices.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  devices.client = create.client;
  Check(api->PJRT_Client_AddressableDevices(&devices), "PJRT_Client_AddressableDevices");

  float input[4] = {0, 1, 2, 3};
  int64_t dims[1] = {4};
  PJRT_Client_BufferFromHostBuffer_Args put;
  memset(&put, 0, sizeof(put));
  put.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  put.client = create.client;
  put.data = input;
  put.type = PJRT_Buffer_Type_F32;
  put.dims = dims;
  put.num_dims = 1;
  put.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  put.device = devices.addressable_devices[0];
  Check(api->PJRT_Client_BufferFromHostBuffer(&put), "PJRT_Client_BufferFromHostBuffer");
  Await(put.done_with_host_buffer, "done_with_host_buffer");

  static const char kProgram[] =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
      "  %y = stablehlo.add %x, %c : tensor<4xf32>\n"
      "  return %y : tensor<4xf32>\n"
      "}\n";
  /* CompileOptionsProto{executable_build_options {num_replicas: 1, num_partitions: 1}}. */
  static const char kOptions[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01};
  PJRT_Program program;
  memset(&program, 0, sizeof(program));
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  program.code = (char*)kProgram;
  program.code_size = strlen(kProgram);
  program.format = "mlir";
  program.format_size = 4;
  PJRT_Client_Compile_Args compile;
  memset(&compile, 0, sizeof(compile));
  compile.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  compile.client = create.client;
  compile.program = &program;
  compile.compile_options = kOptions;
  compile.compile_options_size = sizeof(kOptions);
  Check(api->PJRT_Client_Compile(&compile), "PJRT_Client_Compile");

  /* PJRT_ExecuteOptions grew after 0.81 (112 to 160 bytes): the plugin must read nothing past
   * the 0.81 struct, so junk lies there (as pointers, 0xa5a5... would fault if followed). */
  struct {
    PJRT_ExecuteOptions options;
    unsigned char junk[64];
  } guarded_options;
  memset(&guarded_options, 0xa5, sizeof(guarded_options));
  memset(&guarded_options.options, 0, sizeof(guarded_options.options));
  PJRT_Buffer* arguments[1] = {put.buffer};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* outputs[1] = {NULL};
  PJRT_Buffer** output_lists[1] = {outputs};
  PJRT_Event* complete[1] = {NULL};
  PJRT_LoadedExecutable_Execute_Args execute;
  memset(&execute, 0, sizeof(execute));
  execute.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  execute.executable = compile.executable;
  guarded_options.options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  execute.options = &guarded_options.options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  execute.device_complete_events = complete;
  Check(api->PJRT_LoadedExecutable_Execute(&execute), "PJRT_LoadedExecutable_Execute");
  Await(complete[0], "device_complete_events[0]");

  float result[4] = {0, 0, 0, 0};
  PJRT_Buffer_ToHostBuffer_Args to_host;
  memset(&to_host, 0, sizeof(to_host));
  to_host.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  to_host.src = outputs[0];
  to_host.dst = result;
  to_host.dst_size = sizeof(result);
  Check(api->PJRT_Buffer_ToHostBuffer(&to_host), "PJRT_Buffer_ToHostBuffer");
  Await(to_host.event, "PJRT_Buffer_ToHostBuffer event");

  /* PJRT_Device_MemoryStats_Args grew after 0.81 (192 to 208 bytes): the plugin must write no
   * byte past the 0.81 struct (the guard bytes stay 0x5a). */
  struct {
    PJRT_Device_MemoryStats_Args args;
    unsigned char guard[64];
  } stats;
  memset(&stats, 0x5a, sizeof(stats));
  memset(&stats.args, 0, sizeof(stats.args));
  stats.args.struct_size = PJRT_Device_MemoryStats_Args_STRUCT_SIZE;
  stats.args.device = devices.addressable_devices[0];
  Check(api->PJRT_Device_MemoryStats(&stats.args), "PJRT_Device_MemoryStats");
  for (size_t i = 0; i < sizeof(stats.guard); ++i) {
    if (stats.guard[i] != 0x5a) {
      fprintf(stderr, "caller 0.81: PJRT_Device_MemoryStats wrote past the 0.81 struct\n");
      return 1;
    }
  }

  if (result[0] != 1 || result[1] != 2 || result[2] != 3 || result[3] != 4) {
    fprintf(stderr, "caller 0.81: got %g %g %g %g, expected 1 2 3 4\n", result[0], result[1],
            result[2], result[3]);
    return 1;
  }
  printf("caller 0.81: OK %g %g %g %g (plugin at PJRT C API %d.%d, bytes_in_use %lld)\n",
         result[0], result[1], result[2], result[3], api->pjrt_api_version.major_version,
         api->pjrt_api_version.minor_version, (long long)stats.args.bytes_in_use);

  PJRT_Buffer_Destroy_Args destroy_buffer;
  memset(&destroy_buffer, 0, sizeof(destroy_buffer));
  destroy_buffer.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
  destroy_buffer.buffer = outputs[0];
  Check(api->PJRT_Buffer_Destroy(&destroy_buffer), "PJRT_Buffer_Destroy");
  destroy_buffer.buffer = put.buffer;
  Check(api->PJRT_Buffer_Destroy(&destroy_buffer), "PJRT_Buffer_Destroy");
  PJRT_LoadedExecutable_Destroy_Args destroy_executable;
  memset(&destroy_executable, 0, sizeof(destroy_executable));
  destroy_executable.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
  destroy_executable.executable = compile.executable;
  Check(api->PJRT_LoadedExecutable_Destroy(&destroy_executable), "PJRT_LoadedExecutable_Destroy");
  PJRT_Client_Destroy_Args destroy_client;
  memset(&destroy_client, 0, sizeof(destroy_client));
  destroy_client.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
  destroy_client.client = create.client;
  Check(api->PJRT_Client_Destroy(&destroy_client), "PJRT_Client_Destroy");
  return 0;
}
