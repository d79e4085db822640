// The PJRT C API 0.82-0.117 slots of clients, devices, executables and topologies against the
// fake device: PJRT_Client_Load, PJRT_TopologyDescription_Fingerprint, PJRT_Device_GetAttributes,
// tracking events (PJRT_Device_CreateAsyncTrackingEvent / PJRT_AsyncTrackingEvent_Destroy), and
// the C-API layer's side of what it forwards to a device: memory statistics (the grown
// PJRT_Device_MemoryStats_Args, ClearMemoryStats), PoisonExecution, compiled memory statistics,
// compile options, parameter memory kinds and layouts (the Layouts extension at version 4),
// logical device ids and the topology's memory-space queries. Older callers' shorter structs are
// accepted and nothing past their end is read or written.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// The text of the struct_size refusal of `fn` for `got` bytes when `want` are needed.
std::string ShortStruct(const std::string& fn, size_t got, size_t want) {
  return fn + ": " + fn + "_Args struct_size is " + std::to_string(got) + ", expected at least " +
         std::to_string(want) + " (the caller was built against an incompatible pjrt_c_api.h)";
}

// An Args struct filled with the byte 0xAB, then given `struct_size`: the bytes past an older
// caller's struct must still be 0xAB after the call.
template <typename Args>
Args Sentinel(size_t struct_size) {
  Args args;
  std::memset(&args, 0xAB, sizeof(args));
  args.struct_size = struct_size;
  args.extension_start = nullptr;
  return args;
}

// True when every byte of `args` from `from` to its end is still 0xAB.
template <typename Args>
bool UntouchedFrom(const Args& args, size_t from) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&args);
  for (size_t i = from; i < sizeof(Args); ++i) {
    if (bytes[i] != 0xAB) return false;
  }
  return true;
}

// A string out of a (pointer, size) pair.
std::string Str(const char* data, size_t size) { return std::string(data, size); }

// A PJRT_Program for `code` in format "mlir" (the strings must outlive it).
PJRT_Program MlirProgram(const std::string& code) {
  auto program = MakeArgs<PJRT_Program>();
  program.code = const_cast<char*>(code.data());
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  return program;
}

class NewClientSlotsTest : public ClientTest {
 protected:
  // PJRT_TopologyDescription_Create with device_count `count` (caller destroys).
  PJRT_TopologyDescription* CreateTopology(int64_t count) {
    PJRT_NamedValue option = IntOption("device_count", count);
    auto args = MakeArgs<PJRT_TopologyDescription_Create_Args>();
    args.create_options = &option;
    args.num_options = 1;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Create(&args));
    return args.topology;
  }
  void DestroyTopology(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Destroy(&args));
  }
  // The client's own topology.
  PJRT_TopologyDescription* ClientTopology() {
    auto args = MakeArgs<PJRT_Client_TopologyDescription_Args>();
    args.client = client_;
    EXPECT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&args));
    return args.topology;
  }
  std::string SerializeTopology(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Serialize_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Serialize(&args));
    std::string bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_topology_deleter(args.serialized_topology);
    return bytes;
  }
  uint64_t Fingerprint(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Fingerprint_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Fingerprint(&args));
    return args.fingerprint;
  }
  // PJRT_Compile of `code` with `options` for `topology`; nullptr on error.
  PJRT_Executable* CompileFor(PJRT_TopologyDescription* topology, const std::string& code,
                              const std::string& options = "") {
    PJRT_Program program = MlirProgram(code);
    auto args = MakeArgs<PJRT_Compile_Args>();
    args.topology = topology;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    ErrorInfo info = Consume(api_->PJRT_Compile(&args));
    EXPECT_TRUE(info.ok) << info.message;
    return info.ok ? args.executable : nullptr;
  }
  // PJRT_Client_Load of `executable` on `client` with `options` (nullptr and `info` on error).
  PJRT_LoadedExecutable* Load(PJRT_Client* client, PJRT_Executable* executable,
                              const std::string& options = "", ErrorInfo* info = nullptr) {
    auto args = MakeArgs<PJRT_Client_Load_Args>();
    args.client = client;
    args.executable = executable;
    args.compile_options = options.empty() ? nullptr : options.data();
    args.compile_options_size = options.size();
    ErrorInfo result = Consume(api_->PJRT_Client_Load(&args));
    if (info != nullptr) *info = result;
    EXPECT_EQ(result.ok, args.loaded_executable != nullptr);
    return result.ok ? args.loaded_executable : nullptr;
  }
  std::string ExecutableName(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_Name_Args>();
    args.executable = executable;
    EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&args));
    return Str(args.executable_name, args.executable_name_size);
  }
  // PJRT_Executable_GetCompileOptions of `executable` (or "error: <message>").
  std::string CompileOptions(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
    args.executable = executable;
    ErrorInfo info = Consume(api_->PJRT_Executable_GetCompileOptions(&args));
    if (!info.ok) return "error: " + info.message;
    EXPECT_NE(args.serialized_compile_options, nullptr);
    EXPECT_NE(args.serialized_compile_options_deleter, nullptr);
    std::string bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_compile_options_deleter(args.serialized_compile_options);
    return bytes;
  }
  // Runs `loaded` on `device` with one f32 argument of `values` and `dims`; returns the output.
  std::vector<float> RunIdentity(PJRT_LoadedExecutable* loaded, PJRT_Device* device,
                                 const std::vector<float>& values,
                                 const std::vector<int64_t>& dims, int launch_id = 0) {
    PJRT_Buffer* input = MakeF32Buffer(client_, device, values, dims);
    PJRT_Buffer* list[] = {input};
    PJRT_Buffer* const* lists[] = {list};
    PJRT_Buffer* out[1] = {nullptr};
    PJRT_Buffer** outputs[] = {out};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    options.launch_id = launch_id;
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = outputs;
    args.execute_device = nullptr;
    EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
    std::vector<float> result;
    if (out[0] != nullptr) {
      result = ToHostF32(out[0]);
      DestroyBuffer(out[0]);
    }
    DestroyBuffer(input);
    return result;
  }
  testing::FakeDevice* FakeDevice(int i) {
    return static_cast<testing::FakeDevice*>(devices_[i]->device);
  }
};

// ---- PJRT_Client_Load -------------------------------------------------------------------------

TEST_F(NewClientSlotsTest, AnAheadOfTimeExecutableLoadsAndRuns) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* compiled = CompileFor(topology, "f32[3]", "name=aot");
  ASSERT_NE(compiled, nullptr);
  PJRT_LoadedExecutable* loaded = Load(client_, compiled);
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(ExecutableName(executable), "aot");
  auto devices = MakeArgs<PJRT_LoadedExecutable_AddressableDevices_Args>();
  devices.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDevices(&devices));
  ASSERT_EQ(devices.num_addressable_devices, 1u);
  EXPECT_EQ(devices.addressable_devices[0], devices_[0]);
  EXPECT_EQ(RunIdentity(loaded, devices_[0], {1, 2, 3}, {3}), (std::vector<float>{1, 2, 3}));
  // The compiled executable is not consumed: it loads again, and outlives its topology.
  DestroyTopology(topology);
  PJRT_LoadedExecutable* again = Load(client_, compiled);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(RunIdentity(again, devices_[0], {4, 5, 6}, {3}), (std::vector<float>{4, 5, 6}));
  DestroyLoaded(again);
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
  DestroyExecutable(compiled);
}

TEST_F(NewClientSlotsTest, LoadedCompileOptionsReplaceTheExecutables) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* compiled = CompileFor(topology, "f32[2]", "name=aot");
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(CompileOptions(compiled), "name=aot;topology_devices=2");
  PJRT_LoadedExecutable* loaded = Load(client_, compiled, "name=renamed;replicas=2");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(ExecutableName(executable), "renamed");
  EXPECT_EQ(CompileOptions(executable), "name=renamed;replicas=2");
  auto replicas = MakeArgs<PJRT_Executable_NumReplicas_Args>();
  replicas.executable = executable;
  EXPECT_PJRT_OK(api_->PJRT_Executable_NumReplicas(&replicas));
  EXPECT_EQ(replicas.num_replicas, 2u);
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
  DestroyExecutable(compiled);
  DestroyTopology(topology);
}

TEST_F(NewClientSlotsTest, AClientExecutableLoadsOnAnotherClient) {
  PJRT_LoadedExecutable* compiled = Compile(client_, "f32[2]", "name=moved");
  ASSERT_NE(compiled, nullptr);
  PJRT_Executable* executable = GetExecutable(compiled);
  PJRT_Client* other = CreateClient();
  ASSERT_NE(other, nullptr);
  PJRT_LoadedExecutable* loaded = Load(other, executable);
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* loaded_executable = GetExecutable(loaded);
  EXPECT_EQ(ExecutableName(loaded_executable), "moved");
  DestroyExecutable(loaded_executable);
  DestroyLoaded(loaded);
  DestroyClient(other);
  DestroyExecutable(executable);
  DestroyLoaded(compiled);
}

TEST_F(NewClientSlotsTest, AnExecutableOfAnotherTopologyIsRefused) {
  PJRT_TopologyDescription* topology = CreateTopology(3);
  PJRT_Executable* compiled = CompileFor(topology, "f32[2]");
  ASSERT_NE(compiled, nullptr);
  ErrorInfo info;
  EXPECT_EQ(Load(client_, compiled, "", &info), nullptr);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "fake: the executable was compiled for a topology of 3 devices; this client has 2");
  DestroyExecutable(compiled);
  DestroyTopology(topology);
}

TEST_F(NewClientSlotsTest, LoadChecksItsArguments) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* compiled = CompileFor(topology, "f32[2]");
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Consume(api_->PJRT_Client_Load(nullptr)).message, "PJRT_Client_Load: args is null");
  auto args = MakeArgs<PJRT_Client_Load_Args>();
  args.client = client_;
  args.executable = compiled;
  EXPECT_EQ(sizeof(args), 56u);
  args.struct_size = 48;
  ErrorInfo info = Consume(api_->PJRT_Client_Load(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Client_Load", 48, 56));
  args.struct_size = sizeof(args);
  args.client = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_Load(&args)).message,
            "PJRT_Client_Load: args->client is null");
  args.client = client_;
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_Load(&args)).message,
            "PJRT_Client_Load: args->executable is null");
  args.executable = compiled;
  args.compile_options = nullptr;
  args.compile_options_size = 3;
  EXPECT_EQ(Consume(api_->PJRT_Client_Load(&args)).message,
            "PJRT_Client_Load: compile_options is null but its size is 3");
  args.compile_options = "bad";
  info = Consume(api_->PJRT_Client_Load(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "fake: bad compile option 'bad'");  // The device's own check.
  EXPECT_EQ(args.loaded_executable, nullptr);
  DestroyExecutable(compiled);
  DestroyTopology(topology);
}

// ---- PJRT_TopologyDescription_Fingerprint -----------------------------------------------------

// FNV-1a (64 bits) of `bytes`.
uint64_t Fnv1a(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

TEST_F(NewClientSlotsTest, TheFingerprintIsTheFnv1aOfTheSerializedTopology) {
  PJRT_TopologyDescription* a = CreateTopology(2);
  PJRT_TopologyDescription* b = CreateTopology(2);
  PJRT_TopologyDescription* c = CreateTopology(3);
  const uint64_t fa = Fingerprint(a);
  EXPECT_EQ(fa, Fnv1a(SerializeTopology(a)));
  EXPECT_NE(fa, 0u);
  EXPECT_EQ(Fingerprint(b), fa);  // Equal topologies.
  EXPECT_EQ(Fingerprint(a), fa);  // Stable.
  EXPECT_NE(Fingerprint(c), fa);  // Another device count.
  EXPECT_EQ(Fingerprint(c), Fnv1a(SerializeTopology(c)));
  // A deserialized copy describes the same devices.
  const std::string bytes = SerializeTopology(c);
  auto deserialize = MakeArgs<PJRT_TopologyDescription_Deserialize_Args>();
  deserialize.serialized_topology = bytes.data();
  deserialize.serialized_topology_size = bytes.size();
  ASSERT_PJRT_OK(api_->PJRT_TopologyDescription_Deserialize(&deserialize));
  EXPECT_EQ(Fingerprint(deserialize.topology), Fingerprint(c));
  // The client's topology has one too (its devices carry the client's attributes).
  PJRT_TopologyDescription* own = ClientTopology();
  EXPECT_EQ(Fingerprint(own), Fnv1a(SerializeTopology(own)));
  DestroyTopology(deserialize.topology);
  DestroyTopology(a);
  DestroyTopology(b);
  DestroyTopology(c);
}

TEST_F(NewClientSlotsTest, FingerprintChecksItsArguments) {
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_Fingerprint(nullptr)).message,
            "PJRT_TopologyDescription_Fingerprint: args is null");
  auto args = MakeArgs<PJRT_TopologyDescription_Fingerprint_Args>();
  EXPECT_EQ(sizeof(args), 32u);
  args.struct_size = 24;
  args.topology = ClientTopology();
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_Fingerprint(&args)).message,
            ShortStruct("PJRT_TopologyDescription_Fingerprint", 24, 32));
  args.struct_size = sizeof(args);
  args.topology = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_Fingerprint(&args)).message,
            "PJRT_TopologyDescription_Fingerprint: args->topology is null");
}

// ---- PJRT_Device_GetAttributes ----------------------------------------------------------------

TEST_F(NewClientSlotsTest, DeviceAttributesAreTheDescriptionsAndOutliveTheClient) {
  const std::string version = "fake 2.5";
  std::vector<PJRT_NamedValue> options = {StringOption("platform_version", version),
                                          IntOption("device_count", 2)};
  PJRT_Client* client = CreateClient(options);
  ASSERT_NE(client, nullptr);
  PJRT_Device* device = AddressableDevices(client)[1];
  auto args = MakeArgs<PJRT_Device_GetAttributes_Args>();
  args.device = device;
  ASSERT_PJRT_OK(api_->PJRT_Device_GetAttributes(&args));
  ASSERT_NE(args.device_attributes, nullptr);
  ASSERT_NE(args.attributes_deleter, nullptr);
  // The description's attributes, as PJRT_DeviceDescription_Attributes gives them.
  auto description = MakeArgs<PJRT_Device_GetDescription_Args>();
  description.device = device;
  EXPECT_PJRT_OK(api_->PJRT_Device_GetDescription(&description));
  auto described = MakeArgs<PJRT_DeviceDescription_Attributes_Args>();
  described.device_description = description.device_description;
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Attributes(&described));
  ASSERT_EQ(args.num_attributes, described.num_attributes);
  ASSERT_EQ(args.num_attributes, 3u);  // The echoed options and "index", in name order.
  EXPECT_NE(args.attributes, described.attributes);  // A copy the caller frees.
  DestroyClient(client);  // The copy outlives the client.
  EXPECT_EQ(Str(args.attributes[0].name, args.attributes[0].name_size), "device_count");
  EXPECT_EQ(args.attributes[0].type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(args.attributes[0].int64_value, 2);
  EXPECT_EQ(Str(args.attributes[1].name, args.attributes[1].name_size), "index");
  EXPECT_EQ(args.attributes[1].int64_value, 1);
  EXPECT_EQ(Str(args.attributes[2].name, args.attributes[2].name_size), "platform_version");
  EXPECT_EQ(args.attributes[2].type, PJRT_NamedValue_kString);
  EXPECT_EQ(Str(args.attributes[2].string_value, args.attributes[2].value_size), "fake 2.5");
  args.attributes_deleter(args.device_attributes);
}

TEST_F(NewClientSlotsTest, GetAttributesChecksItsArguments) {
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(nullptr)).message,
            "PJRT_Device_GetAttributes: args is null");
  auto args = MakeArgs<PJRT_Device_GetAttributes_Args>();
  EXPECT_EQ(sizeof(args), 56u);
  args.struct_size = 48;
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(&args)).message,
            ShortStruct("PJRT_Device_GetAttributes", 48, 56));
  EXPECT_EQ(args.device_attributes, nullptr);
  args.struct_size = sizeof(args);
  args.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_GetAttributes(&args)).message,
            "PJRT_Device_GetAttributes: args->device is null");
}

// ---- Tracking events --------------------------------------------------------------------------

TEST_F(NewClientSlotsTest, ATrackingEventLivesUntilDestroyed) {
  const std::string description = "all-reduce #3";
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  args.device = devices_[1];
  args.description = description.data();
  args.description_size = description.size();
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  ASSERT_NE(args.event, nullptr);
  EXPECT_EQ(FakeDevice(1)->live_tracking_events(), 1);
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
  EXPECT_EQ(FakeDevice(1)->tracking_descriptions(), std::vector<std::string>{"all-reduce #3"});
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
  EXPECT_EQ(FakeDevice(1)->live_tracking_events(), 0);
  // An event may outlive the client.
  args.event = nullptr;
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  ASSERT_NE(args.event, nullptr);
  DestroyClient(client_);
  client_ = nullptr;
  destroy.event = args.event;
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
}

TEST_F(NewClientSlotsTest, ADeviceMayTrackNothing) {
  const std::string description = "untracked";  // The fake's hook: no event.
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  args.device = devices_[0];
  args.description = description.data();
  args.description_size = description.size();
  args.event = reinterpret_cast<PJRT_AsyncTrackingEvent*>(static_cast<uintptr_t>(0x10));
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  EXPECT_EQ(args.event, nullptr);
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
  // Destroying no event is fine.
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
}

TEST_F(NewClientSlotsTest, TrackingEventSlotsCheckTheirArguments) {
  const std::string fn = "PJRT_Device_CreateAsyncTrackingEvent";
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(nullptr)).message,
            fn + ": args is null");
  auto args = MakeArgs<PJRT_Device_CreateAsyncTrackingEvent_Args>();
  EXPECT_EQ(sizeof(args), 48u);
  args.struct_size = 40;
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            ShortStruct(fn, 40, 48));
  args.struct_size = sizeof(args);
  args.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            fn + ": args->device is null");
  args.device = devices_[0];
  args.description_size = 4;
  EXPECT_EQ(Consume(api_->PJRT_Device_CreateAsyncTrackingEvent(&args)).message,
            fn + ": description is null but its size is 4");
  EXPECT_EQ(args.event, nullptr);
  EXPECT_TRUE(FakeDevice(0)->tracking_descriptions().empty());  // The device was not asked.
  // An empty description is fine.
  args.description_size = 0;
  ASSERT_PJRT_OK(api_->PJRT_Device_CreateAsyncTrackingEvent(&args));
  EXPECT_EQ(FakeDevice(0)->tracking_descriptions(), std::vector<std::string>{""});
  auto destroy = MakeArgs<PJRT_AsyncTrackingEvent_Destroy_Args>();
  destroy.event = args.event;
  EXPECT_EQ(sizeof(destroy), 24u);
  destroy.struct_size = 16;
  EXPECT_EQ(Consume(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy)).message,
            ShortStruct("PJRT_AsyncTrackingEvent_Destroy", 16, 24));
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 1);  // Not destroyed by the refusal.
  EXPECT_EQ(Consume(api_->PJRT_AsyncTrackingEvent_Destroy(nullptr)).message,
            "PJRT_AsyncTrackingEvent_Destroy: args is null");
  destroy.struct_size = sizeof(destroy);
  EXPECT_PJRT_OK(api_->PJRT_AsyncTrackingEvent_Destroy(&destroy));
  EXPECT_EQ(FakeDevice(0)->live_tracking_events(), 0);
}

// ---- Memory statistics ------------------------------------------------------------------------

TEST_F(NewClientSlotsTest, MemoryStatsWritePeakAllocatedBytesForANewCaller) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});  // 16 bytes.
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});        // 8 bytes.
  DestroyBuffer(a);
  EXPECT_EQ(sizeof(PJRT_Device_MemoryStats_Args), 208u);
  auto args = Sentinel<PJRT_Device_MemoryStats_Args>(sizeof(PJRT_Device_MemoryStats_Args));
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 8);
  EXPECT_EQ(args.peak_bytes_in_use, 24);
  EXPECT_TRUE(args.peak_bytes_in_use_is_set);
  EXPECT_EQ(args.num_allocs, 2);
  EXPECT_EQ(args.pool_bytes, 8 + 4096);
  EXPECT_TRUE(args.pool_bytes_is_set);
  EXPECT_FALSE(args.peak_pool_bytes_is_set);  // Unset fields are written too.
  EXPECT_EQ(args.peak_pool_bytes, 0);
  EXPECT_EQ(args.peak_allocated_bytes, 24);
  EXPECT_TRUE(args.peak_allocated_bytes_is_set);
  DestroyBuffer(b);
}

TEST_F(NewClientSlotsTest, MemoryStatsLeaveWhatAnOlderCallerLacks) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  // PJRT C API 0.81's struct ends at peak_pool_bytes_is_set.
  const size_t v081 = offsetof(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set) + 1;
  EXPECT_EQ(v081, 185u);
  auto args = Sentinel<PJRT_Device_MemoryStats_Args>(v081);
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 16);
  EXPECT_EQ(args.pool_bytes, 16 + 4096);
  EXPECT_TRUE(UntouchedFrom(args, v081));
  // Older still: without the pool fields.
  const size_t no_pool =
      offsetof(PJRT_Device_MemoryStats_Args, largest_free_block_bytes_is_set) + 1;
  EXPECT_EQ(no_pool, 153u);
  args = Sentinel<PJRT_Device_MemoryStats_Args>(no_pool);
  args.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(args.bytes_in_use, 16);
  EXPECT_EQ(args.bytes_limit, int64_t{1} << 30);
  EXPECT_TRUE(UntouchedFrom(args, no_pool));
  // Shorter than that is refused, and writes nothing.
  args = Sentinel<PJRT_Device_MemoryStats_Args>(no_pool - 1);
  args.device = devices_[0];
  ErrorInfo info = Consume(api_->PJRT_Device_MemoryStats(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Device_MemoryStats", 152, 153));
  EXPECT_TRUE(UntouchedFrom(args, offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use)));
  DestroyBuffer(a);
}

TEST_F(NewClientSlotsTest, ClearMemoryStatsStartsThePeakOver) {
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2, 3, 4}, {4});
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  DestroyBuffer(a);
  auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
  stats.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.peak_bytes_in_use, 24);
  auto clear = MakeArgs<PJRT_Device_ClearMemoryStats_Args>();
  clear.device = devices_[0];
  ASSERT_PJRT_OK(api_->PJRT_Device_ClearMemoryStats(&clear));
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.bytes_in_use, 8);
  EXPECT_EQ(stats.peak_bytes_in_use, 8);
  EXPECT_EQ(stats.peak_allocated_bytes, 8);
  EXPECT_EQ(stats.num_allocs, 2);  // Counts of allocations are not peaks.
  // Only that device's.
  PJRT_Buffer* c = MakeF32Buffer(client_, devices_[1], {1}, {1});
  DestroyBuffer(c);
  stats.device = devices_[1];
  ASSERT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
  EXPECT_EQ(stats.peak_bytes_in_use, 4);
  // The checks.
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(nullptr)).message,
            "PJRT_Device_ClearMemoryStats: args is null");
  EXPECT_EQ(sizeof(clear), 24u);
  clear.struct_size = 16;
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(&clear)).message,
            ShortStruct("PJRT_Device_ClearMemoryStats", 16, 24));
  clear.struct_size = sizeof(clear);
  clear.device = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Device_ClearMemoryStats(&clear)).message,
            "PJRT_Device_ClearMemoryStats: args->device is null");
  DestroyBuffer(b);
}

// ---- PJRT_Device_PoisonExecution --------------------------------------------------------------

TEST_F(NewClientSlotsTest, PoisoningReachesTheDeviceWithTheError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[1]");
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(RunIdentity(loaded, devices_[0], {7}, {1}, /*launch_id=*/5), std::vector<float>{7});
  const std::string message = "peer lost";
  auto payload = MakeArgs<PJRT_NamedValue>(PJRT_NamedValue_STRUCT_SIZE);
  payload.name = "host";
  payload.name_size = 4;
  payload.type = PJRT_NamedValue_kString;
  payload.string_value = "n17";
  payload.value_size = 3;
  auto args = MakeArgs<PJRT_Device_PoisonExecution_Args>();
  args.device = devices_[0];
  args.launch_id = 5;
  args.error_code = PJRT_Error_Code_ABORTED;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.payload = &payload;
  args.num_payload = 1;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_TRUE(args.poisoned);
  std::optional<testing::FakePoison> poison = FakeDevice(0)->last_poison();
  ASSERT_TRUE(poison.has_value());
  EXPECT_EQ(poison->launch_id, 5);
  EXPECT_EQ(poison->error.code(), StatusCode::kAborted);
  EXPECT_EQ(poison->error.message(), "peer lost");
  EXPECT_EQ(poison->error.payloads(),
            (std::vector<std::pair<std::string, std::string>>{{"host", "n17"}}));
  // No execution of that launch id on the device.
  args.launch_id = 6;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_FALSE(args.poisoned);
  args.launch_id = 5;
  args.device = devices_[1];
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_FALSE(args.poisoned);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, AnOlderPoisonCallerHasNoPayloads) {
  const size_t old_size = offsetof(PJRT_Device_PoisonExecution_Args, poisoned) + sizeof(bool);
  EXPECT_EQ(old_size, 49u);
  EXPECT_EQ(sizeof(PJRT_Device_PoisonExecution_Args), 72u);
  const std::string message = "old caller";
  auto args = Sentinel<PJRT_Device_PoisonExecution_Args>(old_size);
  args.device = devices_[0];
  args.launch_id = 1;
  args.error_code = PJRT_Error_Code_INTERNAL;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.poisoned = true;
  ASSERT_PJRT_OK(api_->PJRT_Device_PoisonExecution(&args));  // payload (0xAB...) is not read.
  EXPECT_FALSE(args.poisoned);
  EXPECT_TRUE(UntouchedFrom(args, old_size));
  std::optional<testing::FakePoison> poison = FakeDevice(0)->last_poison();
  ASSERT_TRUE(poison.has_value());
  EXPECT_EQ(poison->error.code(), StatusCode::kInternal);
  EXPECT_EQ(poison->error.message(), "old caller");
  EXPECT_TRUE(poison->error.payloads().empty());
  // One byte shorter is refused.
  args = Sentinel<PJRT_Device_PoisonExecution_Args>(old_size - 1);
  args.device = devices_[0];
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            ShortStruct("PJRT_Device_PoisonExecution", 48, 49));
}

TEST_F(NewClientSlotsTest, PoisonExecutionChecksItsArguments) {
  const std::string fn = "PJRT_Device_PoisonExecution";
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(nullptr)).message, fn + ": args is null");
  auto args = MakeArgs<PJRT_Device_PoisonExecution_Args>();
  args.error_code = PJRT_Error_Code_INTERNAL;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": args->device is null");
  args.device = devices_[0];
  args.error_code = PJRT_Error_Code_OK;
  ErrorInfo info = Consume(api_->PJRT_Device_PoisonExecution(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, fn + ": error_code must be an error (1..16), got 0");
  for (int unknown : {17, 40, -2}) {  // Read as an int, never loaded as the enum.
    std::memcpy(&args.error_code, &unknown, sizeof(unknown));
    EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
              fn + ": error_code must be an error (1..16), got " + std::to_string(unknown));
  }
  args.error_code = PJRT_Error_Code_INTERNAL;
  args.error_message_size = 2;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": error_message is null but its size is 2");
  args.error_message_size = 0;
  PJRT_NamedValue number = IntOption("attempt", 2);
  args.payload = &number;
  args.num_payload = 1;
  EXPECT_EQ(Consume(api_->PJRT_Device_PoisonExecution(&args)).message,
            fn + ": payload 'attempt' must be a string");
  EXPECT_FALSE(FakeDevice(0)->last_poison().has_value());  // The device was never asked.
}

// ---- Executables: compiled memory statistics, compile options, parameters, logical ids ---------

TEST_F(NewClientSlotsTest, CompiledMemoryStatsOfANewAndOfAnOlderCaller) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s8[3]");  // 11 bytes of arguments.
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(sizeof(PJRT_Executable_GetCompiledMemoryStats_Args), 144u);
  auto args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(
      sizeof(PJRT_Executable_GetCompiledMemoryStats_Args));
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_EQ(args.generated_code_size_in_bytes, 12);  // The program text "f32[2] s8[3]".
  EXPECT_EQ(args.argument_size_in_bytes, 11);
  EXPECT_EQ(args.output_size_in_bytes, 11);
  EXPECT_EQ(args.alias_size_in_bytes, 0);
  EXPECT_EQ(args.temp_size_in_bytes, 7);
  EXPECT_EQ(args.host_temp_size_in_bytes, 11);
  EXPECT_EQ(args.peak_memory_in_bytes, 29);
  EXPECT_EQ(args.total_size_in_bytes, 12 + 22 + 7);
  EXPECT_EQ(args.total_allocation_bytes, 22);
  EXPECT_EQ(args.indefinite_allocations, 3);
  EXPECT_EQ(args.peak_unpadded_heap_bytes, 5);
  // PJRT C API 0.81's struct ends at peak_memory_in_bytes.
  const size_t v081 = offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, total_size_in_bytes);
  EXPECT_EQ(v081, 112u);
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(v081);
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_EQ(args.peak_memory_in_bytes, 29);
  EXPECT_TRUE(UntouchedFrom(args, v081));
  // A struct that ends in the middle of the new fields gets nothing past its end.
  const size_t middle =
      offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, indefinite_allocations);
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(middle);
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_TRUE(UntouchedFrom(args, middle));
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(v081 - 8);
  args.executable = executable;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompiledMemoryStats(&args)).message,
            ShortStruct("PJRT_Executable_GetCompiledMemoryStats", 104, 112));
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, CompileOptionsAreThoseCompiledWith) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "name=opts;replicas=2");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(CompileOptions(executable), "name=opts;replicas=2");
  // Each call hands out its own copy.
  auto first = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
  first.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompileOptions(&first));
  auto second = first;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompileOptions(&second));
  EXPECT_NE(first.serialized_compile_options, second.serialized_compile_options);
  first.serialized_compile_options_deleter(first.serialized_compile_options);
  EXPECT_EQ(Str(second.serialized_bytes, second.serialized_bytes_size), "name=opts;replicas=2");
  second.serialized_compile_options_deleter(second.serialized_compile_options);
  // Empty options are empty bytes, not an error.
  PJRT_LoadedExecutable* plain = Compile(client_, "f32[2]");
  PJRT_Executable* plain_executable = GetExecutable(plain);
  EXPECT_EQ(CompileOptions(plain_executable), "");
  // The checks.
  const std::string fn = "PJRT_Executable_GetCompileOptions";
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(nullptr)).message,
            fn + ": args is null");
  auto args = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
  EXPECT_EQ(sizeof(args), 56u);
  args.struct_size = 48;
  args.executable = executable;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(&args)).message,
            ShortStruct(fn, 48, 56));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(&args)).message,
            fn + ": args->executable is null");
  DestroyExecutable(plain_executable);
  DestroyLoaded(plain);
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, ParameterMemoryKindsHaveOneEntryPerParameter) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s32[] pred[3]");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto args = MakeArgs<PJRT_Executable_ParameterMemoryKinds_Args>();
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_ParameterMemoryKinds(&args));
  ASSERT_EQ(args.num_parameters, 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Str(args.memory_kinds[i], args.memory_kind_sizes[i]), "device");
  }
  // The arrays live with the executable: a second call returns the same ones.
  auto again = MakeArgs<PJRT_Executable_ParameterMemoryKinds_Args>();
  again.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_ParameterMemoryKinds(&again));
  EXPECT_EQ(again.memory_kinds, args.memory_kinds);
  EXPECT_EQ(again.memory_kind_sizes, args.memory_kind_sizes);
  const std::string fn = "PJRT_Executable_ParameterMemoryKinds";
  EXPECT_EQ(sizeof(args), 48u);
  args.struct_size = 40;
  EXPECT_EQ(Consume(api_->PJRT_Executable_ParameterMemoryKinds(&args)).message,
            ShortStruct(fn, 40, 48));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Executable_ParameterMemoryKinds(&args)).message,
            fn + ": args->executable is null");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, LogicalIdsNameEachAddressableDevicesReplica) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "replicas=2");
  ASSERT_NE(loaded, nullptr);
  auto args = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  args.executable = loaded;
  ASSERT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args));
  ASSERT_EQ(args.num_addressable_device_logical_ids, 2u);
  EXPECT_EQ(args.addressable_device_logical_ids[0].replica, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[0].partition, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[1].replica, 1);
  EXPECT_EQ(args.addressable_device_logical_ids[1].partition, 0);
  auto again = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  again.executable = loaded;
  ASSERT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&again));
  EXPECT_EQ(again.addressable_device_logical_ids, args.addressable_device_logical_ids);
  const std::string fn = "PJRT_LoadedExecutable_AddressableDeviceLogicalIds";
  EXPECT_EQ(sizeof(args), 40u);
  args.struct_size = 32;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args)).message,
            ShortStruct(fn, 32, 40));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args)).message,
            fn + ": args->executable is null");
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, LogicalIdsThatDoNotMatchTheDevicesAreAnInternalError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "replicas=2;logical_ids=short");
  ASSERT_NE(loaded, nullptr);
  auto args = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  args.executable = loaded;
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_AddressableDeviceLogicalIds: the device gave 1 logical ids for "
            "2 addressable devices");
  EXPECT_EQ(args.addressable_device_logical_ids, nullptr);
  DestroyLoaded(loaded);
}

// ---- The Layouts extension at version 4: parameter layouts ------------------------------------

class ParameterLayoutsTest : public NewClientSlotsTest {
 protected:
  void SetUp() override {
    NewClientSlotsTest::SetUp();
    // Read as an int: pjrtkit's own extension type is outside the enum (UBSan).
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
      if (RawEnumValue(e->type) == PJRT_Extension_Type_Layouts) {
        ext_ = reinterpret_cast<const abi::LayoutsExtension*>(e);
      }
    }
    ASSERT_NE(ext_, nullptr);
  }
  // The serialized text of `layout` (which stays the executable's).
  std::string Text(PJRT_Layouts_MemoryLayout* layout) {
    abi::LayoutsMemoryLayoutSerializeArgs args{};
    args.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    args.layout = layout;
    EXPECT_PJRT_OK(ext_->memory_layout_serialize(&args));
    std::string text = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_layout_deleter(args.serialized_layout);
    return text;
  }
  // The parameter layouts of the executable compiled from `code` with `options`, as text (or
  // "error: <message>").
  std::vector<std::string> ParameterLayouts(const std::string& code, const std::string& options) {
    PJRT_LoadedExecutable* loaded = Compile(client_, code, options);
    if (loaded == nullptr) return {"<no executable>"};
    PJRT_Executable* executable = GetExecutable(loaded);
    abi::LayoutsExecutableGetParameterLayoutsArgs args{};
    args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
    args.executable = executable;
    ErrorInfo info = Consume(ext_->executable_get_parameter_layouts(&args));
    std::vector<std::string> out;
    if (!info.ok) {
      out.push_back("error: " + info.message);
    } else {
      for (size_t i = 0; i < args.num_parameters; ++i) out.push_back(Text(args.layouts[i]));
    }
    DestroyExecutable(executable);
    DestroyLoaded(loaded);
    return out;
  }

  const abi::LayoutsExtension* ext_ = nullptr;  // Under test.
};

TEST_F(ParameterLayoutsTest, TheExtensionIsVersion4) {
  EXPECT_EQ(ext_->base.struct_size, 80u);
  EXPECT_EQ(abi::kLayoutsExtensionSize, 80u);
  EXPECT_NE(ext_->executable_get_parameter_layouts, nullptr);
  EXPECT_EQ(abi::kLayoutsExecutableGetParameterLayoutsArgsSize, 40u);
}

TEST_F(ParameterLayoutsTest, ParameterLayoutsAreTheDevicesAsText) {
  EXPECT_EQ(ParameterLayouts("f32[2,3] s32[4] f32[]", ""),
            (std::vector<std::string>{"{1,0}", "{0}", "{}"}));
  EXPECT_EQ(ParameterLayouts("f32[2,3] s32[4]", "output_layout=column"),
            (std::vector<std::string>{"{0,1}", "{0}"}));
}

TEST_F(ParameterLayoutsTest, AnInvalidDeviceLayoutIsAnInternalError) {
  EXPECT_EQ(ParameterLayouts("f32[2,3]", "output_layout=invalid"),
            std::vector<std::string>{
                "error: PJRT_Layouts_PJRT_Executable_GetParameterLayouts: the device returned an "
                "invalid layout for parameter 0: layout minor_to_major {0,0,0} is not a "
                "permutation of 3 dimensions"});
}

TEST_F(ParameterLayoutsTest, TheLayoutsAreTheExecutablesAndCheckedForArguments) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2,3]");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  abi::LayoutsExecutableGetParameterLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  args.executable = executable;
  ASSERT_PJRT_OK(ext_->executable_get_parameter_layouts(&args));
  ASSERT_EQ(args.num_parameters, 1u);
  PJRT_Layouts_MemoryLayout* layout = args.layouts[0];
  ASSERT_PJRT_OK(ext_->executable_get_parameter_layouts(&args));
  EXPECT_EQ(args.layouts[0], layout);  // Cached with the executable.
  abi::LayoutsMemoryLayoutDestroyArgs destroy{};
  destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
  destroy.layout = layout;
  ErrorInfo info = Consume(ext_->memory_layout_destroy(&destroy));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Layouts_MemoryLayout_Destroy: args->layout is an output or parameter layout of "
            "an executable, which the PJRT_Executable owns and frees (do not destroy it)");
  EXPECT_EQ(Text(layout), "{1,0}");  // Still there.
  const std::string fn = "PJRT_Layouts_PJRT_Executable_GetParameterLayouts";
  args.struct_size = 32;
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(&args)).message,
            fn + ": " + fn + "_Args struct_size is 32, expected at least 40 (the caller was built "
                 "against an incompatible pjrt_c_api.h)");
  args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  args.executable = nullptr;
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(&args)).message,
            fn + ": args->executable is null");
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(nullptr)).message,
            fn + ": args is null");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

// ---- Topology memory-space queries (the device's; the fake has none) --------------------------

TEST_F(NewClientSlotsTest, MemorySpaceKindIdsAreTheDevicesAnswer) {
  const std::string fn = "PJRT_TopologyDescription_GetMemorySpaceKindIds";
  auto args = MakeArgs<PJRT_TopologyDescription_GetMemorySpaceKindIds_Args>();
  args.topology = ClientTopology();
  ErrorInfo info = Consume(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message, "Topology::MemorySpaceKindIds is not implemented for platform 'fake'");
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(nullptr)).message,
            fn + ": args is null");
  EXPECT_EQ(sizeof(args), 40u);
  args.struct_size = 32;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args)).message,
            ShortStruct(fn, 32, 40));
  args.struct_size = sizeof(args);
  args.topology = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args)).message,
            fn + ": args->topology is null");
}

TEST_F(NewClientSlotsTest, CanonicalShapesAreTheDevicesAnswerAfterTheChecks) {
  const std::string fn = "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace";
  std::vector<int64_t> dims = {2, 3};
  auto args = MakeArgs<PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args>();
  args.topology = ClientTopology();
  args.element_type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 2;
  ErrorInfo info =
      Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "Topology::CanonicalShapeForMemorySpace is not implemented for platform 'fake'");
  EXPECT_EQ(args.serialized_shape, nullptr);
  EXPECT_EQ(args.serialized_shape_deleter, nullptr);
  EXPECT_EQ(sizeof(args), 88u);
  args.struct_size = 80;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            ShortStruct(fn, 80, 88));
  args.struct_size = sizeof(args);
  args.element_type = PJRT_Buffer_Type_INVALID;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            fn + ": invalid PJRT_Buffer_Type 0");
  args.element_type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> negative = {2, -1};
  args.dims = negative.data();
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            fn + ": dimensions must be >= 0, got -1");
  args.dims = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            fn + ": args->dims is null");
  args.dims = dims.data();
  std::vector<int64_t> m2m = {0};
  auto layout = MakeArgs<PJRT_Buffer_MemoryLayout>();
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = m2m.data();
  layout.tiled.minor_to_major_size = 1;
  args.layout = &layout;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            fn + ": layout minor_to_major has 1 entries but the array has 2 dimensions");
  args.layout = nullptr;
  args.topology = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args))
                .message,
            fn + ": args->topology is null");
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
