// The extensions pjrtkit forwards from its inner plugin, through pjrtkit's own PJRT_Api: the chain
// holds pjrtkit's three, then every forwardable one the inner plugin has; each forwarded entry
// point gets pjrtkit's handles translated, answers what the inner plugin answers, and reports
// errors as pjrtkit's.
//
// Usage: forwarded_extensions_test <pjrtkit_plugin.so> <inner_plugin.so> [gtest flags]. The
// device is the process device: set PJRTKIT_DEVICE=xla_gpu (and pass the CUDA plugin) to run it
// on the GPU device; tools/gpu/run_extensions.sh does.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_abi_version_extension.h"
#include "xla/pjrt/c/pjrt_c_api_custom_partitioner_extension.h"
#include "xla/pjrt/c/pjrt_c_api_gpu_extension.h"
#include "xla/pjrt/c/pjrt_c_api_memory_descriptions_extension.h"
#include "xla/pjrt/c/pjrt_c_api_phase_compile_extension.h"
#include "xla/pjrt/c/pjrt_c_api_profiler_extension.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"
#include "xla/pjrt/c/pjrt_c_api_stream_extension.h"
#include "tests/conformance/status.h"
#include "tests/conformance/test_data.h"

namespace {

using pjrt_conformance::Status;
using pjrt_conformance::TakeError;

const char* g_plugin = nullptr;  // argv[1].
const char* g_inner = nullptr;   // argv[2].

// On the GPU device both the pjrtkit client and the inner one share the GPU: neither preallocates.
bool OnGpu() {
  const char* device = getenv("PJRTKIT_DEVICE");
  return device != nullptr && std::string(device) == "xla_gpu";
}

// A client of `api` with no preallocation on the GPU.
PJRT_Client* NewClient(const PJRT_Api* api) {
  PJRT_NamedValue preallocate{};
  preallocate.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  preallocate.name = "preallocate";
  preallocate.name_size = std::strlen(preallocate.name);
  preallocate.type = PJRT_NamedValue_kBool;
  preallocate.bool_value = false;
  preallocate.value_size = 1;
  PJRT_Client_Create_Args create{};
  create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  if (OnGpu()) {
    create.create_options = &preallocate;
    create.num_options = 1;
  }
  Status created = TakeError(api, api->PJRT_Client_Create(&create));
  EXPECT_TRUE(created.ok()) << created;
  return create.client;
}

// The first addressable device of `client`.
PJRT_Device* FirstDevice(const PJRT_Api* api, PJRT_Client* client) {
  PJRT_Client_AddressableDevices_Args devices{};
  devices.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  devices.client = client;
  EXPECT_TRUE(TakeError(api, api->PJRT_Client_AddressableDevices(&devices)).ok());
  return devices.num_addressable_devices == 0 ? nullptr : devices.addressable_devices[0];
}

// The description of `device`.
PJRT_DeviceDescription* DescriptionOf(const PJRT_Api* api, PJRT_Device* device) {
  PJRT_Device_GetDescription_Args args{};
  args.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
  args.device = device;
  EXPECT_TRUE(TakeError(api, api->PJRT_Device_GetDescription(&args)).ok());
  return args.device_description;
}

// The first device description of `client`'s topology.
PJRT_DeviceDescription* TopologyDescriptionOf(const PJRT_Api* api, PJRT_Client* client) {
  PJRT_Client_TopologyDescription_Args topology{};
  topology.struct_size = PJRT_Client_TopologyDescription_Args_STRUCT_SIZE;
  topology.client = client;
  EXPECT_TRUE(TakeError(api, api->PJRT_Client_TopologyDescription(&topology)).ok());
  PJRT_TopologyDescription_GetDeviceDescriptions_Args devices{};
  devices.struct_size = PJRT_TopologyDescription_GetDeviceDescriptions_Args_STRUCT_SIZE;
  devices.topology = topology.topology;
  EXPECT_TRUE(TakeError(api, api->PJRT_TopologyDescription_GetDeviceDescriptions(&devices)).ok());
  return devices.num_descriptions == 0 ? nullptr : devices.descriptions[0];
}

// Destroys `client` of `api`.
void DestroyClientOf(const PJRT_Api* api, PJRT_Client* client) {
  PJRT_Client_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
  destroy.client = client;
  TakeError(api, api->PJRT_Client_Destroy(&destroy));
}

// The PJRT_Api of the library at `path` (dlopened once).
const PJRT_Api* Load(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  auto get = reinterpret_cast<const PJRT_Api* (*)()>(dlsym(handle, "GetPjrtApi"));
  return get == nullptr ? nullptr : get();
}

// The extension of `type` in `api`'s chain, or null.
const PJRT_Extension_Base* Find(const PJRT_Api* api, int type) {
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    int t = 0;
    std::memcpy(&t, &e->type, sizeof(t));
    if (t == type) return e;
  }
  return nullptr;
}

// The types of `api`'s chain, in order.
std::vector<int> Types(const PJRT_Api* api) {
  std::vector<int> out;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    int t = 0;
    std::memcpy(&t, &e->type, sizeof(t));
    out.push_back(t);
  }
  return out;
}

// The extension types pjrtkit forwards (forwarding/chain.cc).
const std::set<int>& Forwardable() {
  static const std::set<int> types = {
      PJRT_Extension_Type_Gpu_Custom_Call, PJRT_Extension_Type_Profiler,
      PJRT_Extension_Type_Custom_Partitioner, PJRT_Extension_Type_Stream,
      PJRT_Extension_Type_MemoryDescriptions, PJRT_Extension_Type_PhaseCompile,
      PJRT_Extension_Type_Shardings, PJRT_Extension_Type_AbiVersion,
      PJRT_Extension_Type_Callback};
  return types;
}

class ForwardedExtensionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = Load(g_plugin);
    inner_ = Load(g_inner);
    ASSERT_NE(api_, nullptr) << g_plugin << ": " << dlerror();
    ASSERT_NE(inner_, nullptr) << g_inner;
    PJRT_Plugin_Initialize_Args init{};
    init.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
    ASSERT_TRUE(TakeError(api_, api_->PJRT_Plugin_Initialize(&init)).ok());
    client_ = NewClient(api_);
    ASSERT_NE(client_, nullptr);
    device_ = FirstDevice(api_, client_);
    ASSERT_NE(device_, nullptr);
  }
  void TearDown() override {
    if (client_ != nullptr) DestroyClientOf(api_, client_);
  }

  // The memory kinds of `device` as PJRT_Device_AddressableMemories lists them.
  std::vector<std::string> DeviceMemoryKinds(PJRT_Device* device) {
    PJRT_Device_AddressableMemories_Args args{};
    args.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
    args.device = device;
    EXPECT_TRUE(TakeError(api_, api_->PJRT_Device_AddressableMemories(&args)).ok());
    std::vector<std::string> kinds;
    for (size_t i = 0; i < args.num_memories; ++i) {
      PJRT_Memory_Kind_Args kind{};
      kind.struct_size = PJRT_Memory_Kind_Args_STRUCT_SIZE;
      kind.memory = args.memories[i];
      EXPECT_TRUE(TakeError(api_, api_->PJRT_Memory_Kind(&kind)).ok());
      kinds.emplace_back(kind.kind, kind.kind_size);
    }
    return kinds;
  }

  // The kinds MemoryDescriptions of `api` reports for `description`.
  std::vector<std::string> DescribedKinds(const PJRT_Api* api,
                                          const PJRT_MemoryDescriptions_Extension* ext,
                                          PJRT_DeviceDescription* description,
                                          size_t* default_index) {
    PJRT_DeviceDescription_MemoryDescriptions_Args args{};
    args.struct_size = PJRT_DeviceDescription_MemoryDescriptions_Args_STRUCT_SIZE;
    args.device_description = description;
    Status status = TakeError(api, ext->PJRT_DeviceDescription_MemoryDescriptions(&args));
    EXPECT_TRUE(status.ok()) << status;
    std::vector<std::string> kinds;
    for (size_t i = 0; i < args.num_memory_descriptions; ++i) {
      PJRT_MemoryDescription_Kind_Args kind{};
      kind.struct_size = PJRT_MemoryDescription_Kind_Args_STRUCT_SIZE;
      kind.memory_description = args.memory_descriptions[i];
      EXPECT_TRUE(TakeError(api, ext->PJRT_MemoryDescription_Kind(&kind)).ok());
      kinds.emplace_back(kind.kind, kind.kind_size);
    }
    *default_index = args.default_memory_index;
    return kinds;
  }

  const PJRT_Api* api_ = nullptr;    // pjrtkit.
  const PJRT_Api* inner_ = nullptr;  // The inner plugin, loaded directly.
  PJRT_Client* client_ = nullptr;
  PJRT_Device* device_ = nullptr;
};

TEST_F(ForwardedExtensionsTest, TheChainIsPjrtkitsThenTheInnerPluginsForwardableOnes) {
  std::vector<int> expected = {PJRT_Extension_Type_FFI, PJRT_Extension_Type_Layouts, 0x706A6B74};
  std::vector<int> inner_forwardable;
  for (int type : Types(inner_)) {
    if (Forwardable().count(type) > 0) inner_forwardable.push_back(type);
  }
  std::sort(inner_forwardable.begin(), inner_forwardable.end());
  expected.insert(expected.end(), inner_forwardable.begin(), inner_forwardable.end());
  EXPECT_EQ(Types(api_), expected);
  for (int type : inner_forwardable) {
    const PJRT_Extension_Base* ours = Find(api_, type);
    const PJRT_Extension_Base* theirs = Find(inner_, type);
    EXPECT_LE(ours->struct_size, theirs->struct_size) << "type " << type;
    EXPECT_NE(ours, theirs) << "a copy, with pjrtkit's entry points";
  }
  // What the reference devices' plugins have (XLA:CPU 0.0.1: MemoryDescriptions, PhaseCompile).
  if (inner_->pjrt_api_version.minor_version == 81) {
    EXPECT_EQ(inner_forwardable, (std::vector<int>{PJRT_Extension_Type_MemoryDescriptions,
                                                   PJRT_Extension_Type_PhaseCompile}));
  }
}

TEST_F(ForwardedExtensionsTest, MemoryDescriptionsAreTheInnerPluginsAnswer) {
  const auto* ours = reinterpret_cast<const PJRT_MemoryDescriptions_Extension*>(
      Find(api_, PJRT_Extension_Type_MemoryDescriptions));
  const auto* theirs = reinterpret_cast<const PJRT_MemoryDescriptions_Extension*>(
      Find(inner_, PJRT_Extension_Type_MemoryDescriptions));
  if (ours == nullptr) GTEST_SKIP() << "the inner plugin has no MemoryDescriptions extension";
  PJRT_Client* inner_client = NewClient(inner_);
  ASSERT_NE(inner_client, nullptr);
  // A client device's, and a topology device's.
  size_t ours_default = 99, theirs_default = 98;
  EXPECT_EQ(DescribedKinds(api_, ours, DescriptionOf(api_, device_), &ours_default),
            DescribedKinds(inner_, theirs,
                           DescriptionOf(inner_, FirstDevice(inner_, inner_client)),
                           &theirs_default));
  EXPECT_EQ(ours_default, theirs_default);
  std::vector<std::string> topology_kinds =
      DescribedKinds(api_, ours, TopologyDescriptionOf(api_, client_), &ours_default);
  EXPECT_EQ(topology_kinds, DescribedKinds(inner_, theirs,
                                           TopologyDescriptionOf(inner_, inner_client),
                                           &theirs_default));
  // XLA:CPU 0.0.1 describes no memories; the CUDA plugin its device and host memories.
  if (!OnGpu()) EXPECT_TRUE(topology_kinds.empty());
  DestroyClientOf(inner_, inner_client);
}

TEST_F(ForwardedExtensionsTest, ForwardedEntryPointsCheckTheirArgumentsAsPjrtkitDoes) {
  const auto* ext = reinterpret_cast<const PJRT_MemoryDescriptions_Extension*>(
      Find(api_, PJRT_Extension_Type_MemoryDescriptions));
  if (ext == nullptr) GTEST_SKIP() << "the inner plugin has no MemoryDescriptions extension";
  Status null_args = TakeError(api_, ext->PJRT_DeviceDescription_MemoryDescriptions(nullptr));
  EXPECT_EQ(null_args.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(null_args.message, "PJRT_DeviceDescription_MemoryDescriptions: args is null");
  PJRT_DeviceDescription_MemoryDescriptions_Args args{};
  args.struct_size = PJRT_DeviceDescription_MemoryDescriptions_Args_STRUCT_SIZE;
  Status null_handle = TakeError(api_, ext->PJRT_DeviceDescription_MemoryDescriptions(&args));
  EXPECT_EQ(null_handle.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(null_handle.message,
            "PJRT_DeviceDescription_MemoryDescriptions: args->device_description is null");
}

TEST_F(ForwardedExtensionsTest, PhaseCompileNamesTheInnerPluginsPhases) {
  const auto* ours = reinterpret_cast<const PJRT_PhaseCompile_Extension*>(
      Find(api_, PJRT_Extension_Type_PhaseCompile));
  const auto* theirs = reinterpret_cast<const PJRT_PhaseCompile_Extension*>(
      Find(inner_, PJRT_Extension_Type_PhaseCompile));
  if (ours == nullptr) GTEST_SKIP() << "the inner plugin has no PhaseCompile extension";
  // pjrtkit offers the entry points the inner plugin does (XLA:CPU 0.0.1's are all null).
  EXPECT_EQ(ours->phase_compile_get_compiler == nullptr,
            theirs->phase_compile_get_compiler == nullptr);
  EXPECT_EQ(ours->phase_compile_destroy_compiler == nullptr,
            theirs->phase_compile_destroy_compiler == nullptr);
  EXPECT_EQ(ours->phase_compile_run_phases == nullptr, theirs->phase_compile_run_phases == nullptr);
  EXPECT_EQ(ours->phase_compile_get_phase_names == nullptr,
            theirs->phase_compile_get_phase_names == nullptr);
  EXPECT_EQ(ours->phase_compile_c_buffers_destroy == nullptr,
            theirs->phase_compile_c_buffers_destroy == nullptr);
  if (theirs->phase_compile_get_compiler == nullptr ||
      theirs->phase_compile_get_phase_names == nullptr) {
    GTEST_SKIP() << "the inner plugin's PhaseCompile extension has no compiler";
  }
  // The phase names through pjrtkit are the inner plugin's, asked directly.
  auto names = [](const PJRT_Api* api, const PJRT_PhaseCompile_Extension* ext) {
    PJRT_PhaseCompile_Get_Compiler_Args get{};
    get.struct_size = PJRT_PhaseCompile_Get_Compiler_Args_STRUCT_SIZE;
    Status got = TakeError(api, ext->phase_compile_get_compiler(&get));
    EXPECT_TRUE(got.ok()) << got;
    PJRT_PhaseCompile_Get_PhaseNames_Args args{};
    args.struct_size = PJRT_PhaseCompile_Get_PhaseNames_Args_STRUCT_SIZE;
    args.phase_compiler = get.phase_compiler;
    Status listed = TakeError(api, ext->phase_compile_get_phase_names(&args));
    EXPECT_TRUE(listed.ok()) << listed;
    std::vector<std::string> out;
    for (size_t i = 0; i < args.num_phase_names; ++i) {
      out.emplace_back(args.phase_names[i], args.phase_names_sizes[i]);
    }
    PJRT_PhaseCompile_C_Buffers_Destroy_Args free_names{};
    free_names.struct_size = PJRT_PhaseCompile_C_Buffers_Destroy_Args_STRUCT_SIZE;
    free_names.char_buffers = args.phase_names;
    free_names.char_buffer_sizes = args.phase_names_sizes;
    free_names.num_char_buffers = args.num_phase_names;
    ext->phase_compile_c_buffers_destroy(&free_names);
    PJRT_PhaseCompile_Destroy_Compiler_Args destroy{};
    destroy.struct_size = PJRT_PhaseCompile_Destroy_Compiler_Args_STRUCT_SIZE;
    destroy.phase_compiler = get.phase_compiler;
    ext->phase_compile_destroy_compiler(&destroy);
    return out;
  };
  std::vector<std::string> through_pjrtkit = names(api_, ours);
  EXPECT_FALSE(through_pjrtkit.empty());
  EXPECT_EQ(through_pjrtkit, names(inner_, theirs));
}

TEST_F(ForwardedExtensionsTest, StreamOfADeviceAndWaitingForABuffer) {
  const auto* ext =
      reinterpret_cast<const PJRT_Stream_Extension*>(Find(api_, PJRT_Extension_Type_Stream));
  if (ext == nullptr) GTEST_SKIP() << "the inner plugin has no Stream extension";
  PJRT_Get_Stream_For_External_Ready_Events_Args stream{};
  stream.struct_size = PJRT_Get_Stream_For_External_Ready_Events_Args_STRUCT_SIZE;
  stream.device = device_;
  Status got = TakeError(api_, ext->get_stream(&stream));
  ASSERT_TRUE(got.ok()) << got;
  EXPECT_NE(stream.stream, 0);
  float data[4] = {1, 2, 3, 4};
  int64_t dims[1] = {4};
  PJRT_Client_BufferFromHostBuffer_Args put{};
  put.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  put.client = client_;
  put.data = data;
  put.type = PJRT_Buffer_Type_F32;
  put.dims = dims;
  put.num_dims = 1;
  put.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  put.device = device_;
  ASSERT_TRUE(TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&put)).ok());
  PJRT_Wait_Until_Buffer_Ready_On_Stream_Args wait{};
  wait.struct_size = PJRT_Wait_Until_Buffer_Ready_On_Stream_Args_STRUCT_SIZE;
  wait.stream = stream.stream;
  wait.buffer = put.buffer;
  Status waited = TakeError(api_, ext->wait_stream(&wait));
  EXPECT_TRUE(waited.ok()) << waited;
  PJRT_Event_Destroy_Args done{};
  done.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  done.event = put.done_with_host_buffer;
  TakeError(api_, api_->PJRT_Event_Destroy(&done));
  PJRT_Buffer_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
  destroy.buffer = put.buffer;
  TakeError(api_, api_->PJRT_Buffer_Destroy(&destroy));
}

TEST_F(ForwardedExtensionsTest, ShardingsOfACompiledExecutable) {
  const auto* ext = reinterpret_cast<const PJRT_Shardings_Extension*>(
      Find(api_, PJRT_Extension_Type_Shardings));
  if (ext == nullptr) GTEST_SKIP() << "the inner plugin has no Shardings extension";
  const std::string code = pjrt_conformance::kAddOneF32;
  const std::string options = pjrt_conformance::CompileOptions1x1();
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  program.code = const_cast<char*>(code.data());
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  PJRT_Client_Compile_Args compile{};
  compile.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  compile.client = client_;
  compile.program = &program;
  compile.compile_options = options.data();
  compile.compile_options_size = options.size();
  Status compiled = TakeError(api_, api_->PJRT_Client_Compile(&compile));
  ASSERT_TRUE(compiled.ok()) << compiled;
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = compile.executable;
  ASSERT_TRUE(TakeError(api_, api_->PJRT_LoadedExecutable_GetExecutable(&get)).ok());
  PJRT_Shardings_PJRT_Executable_OutputShardings_Args outputs{};
  outputs.struct_size = PJRT_Shardings_PJRT_Executable_OutputShardings_Args_STRUCT_SIZE;
  outputs.executable = get.executable;
  Status listed =
      TakeError(api_, ext->PJRT_Shardings_PJRT_Executable_OutputShardings(&outputs));
  EXPECT_TRUE(listed.ok()) << listed;
  EXPECT_LE(outputs.num_outputs, 1u);
  PJRT_Executable_Destroy_Args free_executable{};
  free_executable.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  free_executable.executable = get.executable;
  TakeError(api_, api_->PJRT_Executable_Destroy(&free_executable));
  PJRT_LoadedExecutable_Destroy_Args free_loaded{};
  free_loaded.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
  free_loaded.executable = compile.executable;
  TakeError(api_, api_->PJRT_LoadedExecutable_Destroy(&free_loaded));
}

// Custom-partitioner callbacks that are never called (nothing here partitions).
void NoDtor(JAX_CustomCallPartitioner_Callbacks*) {}

TEST_F(ForwardedExtensionsTest, CustomPartitionersRegisterWithTheInnerPlugin) {
  const auto* ext = reinterpret_cast<const PJRT_Custom_Partitioner_Extension*>(
      Find(api_, PJRT_Extension_Type_Custom_Partitioner));
  if (ext == nullptr) GTEST_SKIP() << "the inner plugin has no Custom_Partitioner extension";
  static JAX_CustomCallPartitioner_Callbacks callbacks{};
  callbacks.version = 1;
  callbacks.dtor = &NoDtor;
  PJRT_Register_Custom_Partitioner_Args args{};
  args.struct_size = PJRT_Register_Custom_Partitioner_Args_STRUCT_SIZE;
  args.name = "pjrtkit_forwarded_partitioner_test";
  args.name_size = std::strlen(args.name);
  args.callbacks = &callbacks;
  Status registered = TakeError(api_, ext->register_custom_partitioner(&args));
  EXPECT_TRUE(registered.ok()) << registered;
  args.callbacks = nullptr;
  Status refused = TakeError(api_, ext->register_custom_partitioner(&args));
  EXPECT_EQ(refused.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(refused.message, "PJRT_Register_Custom_Partitioner: args->callbacks is null");
}

// An untyped (API version 0) custom-call target: registered by address, never called here.
void NoopLegacyCustomCall(void* /*stream*/, void** /*buffers*/, const char* /*opaque*/,
                          size_t /*opaque_len*/, void* /*status*/) {}

// A "typed XLA FFI handler" that does not answer XLA's metadata query: XLA calls a typed handler
// once at registration to read its FFI API version, and refuses this one.
void* SilentFfiHandler(void* /*call_frame*/) { return nullptr; }

TEST_F(ForwardedExtensionsTest, GpuCustomCallTargetsRegisterWithTheInnerPlugin) {
  const auto* ext = reinterpret_cast<const PJRT_Gpu_Custom_Call*>(
      Find(api_, PJRT_Extension_Type_Gpu_Custom_Call));
  const auto* theirs = reinterpret_cast<const PJRT_Gpu_Custom_Call*>(
      Find(inner_, PJRT_Extension_Type_Gpu_Custom_Call));
  if (ext == nullptr) GTEST_SKIP() << "the inner plugin has no Gpu_Custom_Call extension";
  EXPECT_EQ(ext->custom_call_handles_traits, theirs->custom_call_handles_traits);
  PJRT_Gpu_Register_Custom_Call_Args args{};
  args.struct_size = PJRT_Gpu_Register_Custom_Call_Args_STRUCT_SIZE;
  args.function_name = "pjrtkit_forwarded_custom_call_test";
  args.function_name_size = std::strlen(args.function_name);
  args.api_version = 0;
  args.handler_execute = reinterpret_cast<void*>(&NoopLegacyCustomCall);
  Status registered = TakeError(api_, ext->custom_call(&args));
  EXPECT_TRUE(registered.ok()) << registered;
  // The inner plugin itself judges a typed handler (its error comes back through pjrtkit).
  args.function_name = "pjrtkit_forwarded_silent_ffi_handler";
  args.function_name_size = std::strlen(args.function_name);
  args.api_version = 1;
  args.handler_execute = reinterpret_cast<void*>(&SilentFfiHandler);
  Status judged = TakeError(api_, ext->custom_call(&args));
  EXPECT_EQ(judged.code, PJRT_Error_Code_INVALID_ARGUMENT) << judged;
  EXPECT_NE(judged.message.find("pjrtkit_forwarded_silent_ffi_handler"), std::string::npos)
      << judged;
  args.function_name = nullptr;
  Status refused = TakeError(api_, ext->custom_call(&args));
  EXPECT_EQ(refused.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(refused.message, "PJRT_Gpu_Register_Custom_Call: args->function_name is null");
}

// The platform id of `api`'s client runtime ABI version, through `ext` (0 on failure).
uint64_t RuntimePlatformId(const PJRT_Api* api, const PJRT_AbiVersion_Extension* ext,
                           PJRT_Client* client) {
  PJRT_Client_RuntimeAbiVersion_Args version{};
  version.struct_size = PJRT_Client_RuntimeAbiVersion_Args_STRUCT_SIZE;
  version.client = client;
  Status got = TakeError(api, ext->client_runtime_abi_version(&version));
  EXPECT_TRUE(got.ok()) << got;
  if (!got.ok()) return 0;
  PJRT_RuntimeAbiVersion_PlatformId_Args id{};
  id.struct_size = PJRT_RuntimeAbiVersion_PlatformId_Args_STRUCT_SIZE;
  id.abi_version = version.abi_version;
  EXPECT_TRUE(TakeError(api, ext->runtime_abi_version_platform_id(&id)).ok());
  PJRT_RuntimeAbiVersion_Destroy_Args destroy{};
  destroy.struct_size = PJRT_RuntimeAbiVersion_Destroy_Args_STRUCT_SIZE;
  destroy.abi_version = version.abi_version;
  EXPECT_TRUE(TakeError(api, ext->runtime_abi_version_destroy(&destroy)).ok());
  return id.platform_id;
}

TEST_F(ForwardedExtensionsTest, TheRuntimeAbiVersionIsTheInnerPluginsOwn) {
  const auto* ours = reinterpret_cast<const PJRT_AbiVersion_Extension*>(
      Find(api_, PJRT_Extension_Type_AbiVersion));
  const auto* theirs = reinterpret_cast<const PJRT_AbiVersion_Extension*>(
      Find(inner_, PJRT_Extension_Type_AbiVersion));
  if (ours == nullptr) GTEST_SKIP() << "the inner plugin has no AbiVersion extension";
  PJRT_Client* inner_client = NewClient(inner_);
  ASSERT_NE(inner_client, nullptr);
  const uint64_t through_pjrtkit = RuntimePlatformId(api_, ours, client_);
  EXPECT_NE(through_pjrtkit, 0u);
  EXPECT_EQ(through_pjrtkit, RuntimePlatformId(inner_, theirs, inner_client));
  DestroyClientOf(inner_, inner_client);
}

TEST_F(ForwardedExtensionsTest, TheProfilerIsTheInnerPluginsOwn) {
  const auto* ours = reinterpret_cast<const PJRT_Profiler_Extension*>(
      Find(api_, PJRT_Extension_Type_Profiler));
  const auto* theirs = reinterpret_cast<const PJRT_Profiler_Extension*>(
      Find(inner_, PJRT_Extension_Type_Profiler));
  if (ours == nullptr) GTEST_SKIP() << "the inner plugin has no Profiler extension";
  EXPECT_EQ(ours->profiler_api, theirs->profiler_api);
  EXPECT_EQ(ours->traceme_context_id, theirs->traceme_context_id);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <pjrtkit_plugin.so> <inner_plugin.so>\n", argv[0]);
    return 2;
  }
  g_plugin = argv[1];
  g_inner = argv[2];
  // The process device finds its inner plugin here when the plugin is loaded.
  setenv(OnGpu() ? "PJRTKIT_XLA_GPU_PLUGIN" : "PJRTKIT_XLA_CPU_PLUGIN", g_inner, 0);
  return RUN_ALL_TESTS();
}
