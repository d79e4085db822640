// PJRT C API 0.82-0.117 slots of clients and topologies against the fake device:
// PJRT_Client_Load, PJRT_TopologyDescription_Fingerprint, and the C-API layer's side of the
// topology's memory-space queries (the device answers).

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
#include "xla_plugin/c_api/new_slots_client_fixture.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

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
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args)).message,
            fn + ": args->dims[1] is -1; dimensions must be >= 0");
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
