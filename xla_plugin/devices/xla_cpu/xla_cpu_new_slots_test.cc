// The slots of PJRT C API 0.82-0.117 that pjrtkit forwards to its inner plugin, on the reference
// device against the real XLA:CPU plugin (PJRT C API 0.81, which has none of them): logical
// device ids read from the device assignment, parameter layouts and memory kinds, compile
// options, memory-stat clearing, and the UNIMPLEMENTED answers (naming the slot and the inner
// plugin's version) or fallbacks of the rest; element types newer than 0.81 refused by name.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::ClientOptions;
using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::Upload;
using ::pjrtkit::xla_cpu::testing::XlaCpuPluginPath;

constexpr char kAllReduce[] = R"(
module @all_reduce attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})";

// One computation per partition (no SPMD partitioning): each partition doubles its argument.
constexpr char kTwoPartitions[] = R"(
module @two_partitions attributes {mhlo.num_replicas = 1 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %a, %a : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})";

constexpr char kTwoByTwo[] = R"(
module @two_by_two attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %a, %a : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})";

// Parameters of three shapes, the first column-major (as JAX lowers a Format on an argument).
constexpr char kParameters[] = R"(
module @parameters {
  func.func @main(%a: tensor<3x4xi32> {mhlo.layout_mode = "{0,1}"}, %b: tensor<4xi4>,
                  %c: tensor<2x2xf32>) -> (tensor<3x4xi32>, tensor<4xi4>, tensor<2x2xf32>) {
    return %a, %b, %c : tensor<3x4xi32>, tensor<4xi4>, tensor<2x2xf32>
  }
})";

// A parameter in host memory (XLA:CPU puts it in memory space 5).
constexpr char kHostParameter[] = R"(
module @host_parameter {
  func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32> {mhlo.memory_kind = "pinned_host"})
      -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
})";

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";

// `MinimalCompileOptions(replicas, partitions, false)` with
// executable_build_options.use_spmd_partitioning (ExecutableBuildOptionsProto field 6) set, merged
// in as a second CompileOptionsProto.executable_build_options (field 3) fragment: XLA:CPU refuses
// num_partitions > 1 without it.
std::string SpmdOptions(int64_t replicas, int64_t partitions) {
  return MinimalCompileOptions(replicas, partitions, false) + std::string("\x1a\x02\x30\x01", 4);
}

// One client of 4 devices for the suite.
class XlaCpuNewSlotsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(4).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  Device* device(int id) { return client_->devices()[id]; }

  // Compiles MLIR `code` with `options`; fails the test on error.
  std::unique_ptr<LoadedExecutable> Compile(const std::string& code, const std::string& options) {
    StatusOr<std::unique_ptr<LoadedExecutable>> executable =
        client_->Compile(Program{"mlir", code}, options);
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(executable).value() : nullptr;
  }

  // "<slot> is not provided by the XLA:CPU plugin at <path> (PJRT C API 0.81)".
  static std::string NotProvided(const std::string& slot) {
    return slot + " is not provided by the XLA:CPU plugin at " + XlaCpuPluginPath() +
           " (PJRT C API 0.81)";
  }

  // "replica/partition" of each id, for compact comparisons.
  static std::vector<std::string> Ids(const std::vector<LogicalDeviceId>& ids) {
    std::vector<std::string> out;
    for (const LogicalDeviceId& id : ids) {
      out.push_back(std::to_string(id.replica) + "/" + std::to_string(id.partition));
    }
    return out;
  }

  static Client* client_;
};

Client* XlaCpuNewSlotsTest::client_ = nullptr;

TEST_F(XlaCpuNewSlotsTest, TheInnerPluginIsTheOneOfPjrtCApi081) {
  // What every UNIMPLEMENTED message below names.
  const plugin_wrapper::InnerApi& api = static_cast<WrappedClient*>(client_)->inner();
  EXPECT_EQ(api.path(), XlaCpuPluginPath());
  EXPECT_EQ(api.ApiVersionString(), "0.81");
  EXPECT_EQ(api.name(), "XLA:CPU");
}

// ---- Logical device ids (from the device assignment: XLA:CPU 0.81 has no slot) ----------------

TEST_F(XlaCpuNewSlotsTest, LogicalIdsOfTwoReplicas) {
  std::unique_ptr<LoadedExecutable> loaded =
      Compile(kAllReduce, MinimalCompileOptions(2, 1, false));
  ASSERT_NE(loaded, nullptr);
  ASSERT_EQ(loaded->addressable_devices(), (std::vector<Device*>{device(0), device(1)}));
  StatusOr<std::vector<LogicalDeviceId>> ids = loaded->addressable_device_logical_ids();
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(Ids(*ids), (std::vector<std::string>{"0/0", "1/0"}));
}

TEST_F(XlaCpuNewSlotsTest, LogicalIdsOfTwoPartitions) {
  std::unique_ptr<LoadedExecutable> loaded =
      Compile(kTwoPartitions, SpmdOptions(1, 2));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->executable()->num_partitions(), 2);
  ASSERT_EQ(loaded->addressable_devices(), (std::vector<Device*>{device(0), device(1)}));
  StatusOr<std::vector<LogicalDeviceId>> ids = loaded->addressable_device_logical_ids();
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(Ids(*ids), (std::vector<std::string>{"0/0", "0/1"}));
  // DeviceAssignmentProto{replica_count: 1, computation_count: 2, {0}, {1}}.
  EXPECT_EQ(*loaded->SerializedDeviceAssignment(),
            std::string("\x08\x01\x10\x02\x1a\x03\x0a\x01\x00\x1a\x03\x0a\x01\x01", 14));
}

TEST_F(XlaCpuNewSlotsTest, LogicalIdsOfTwoReplicasOfTwoPartitions) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kTwoByTwo, SpmdOptions(2, 2));
  ASSERT_NE(loaded, nullptr);
  const std::vector<Device*>& devices = loaded->addressable_devices();
  ASSERT_EQ(devices.size(), 4u);
  StatusOr<std::vector<LogicalDeviceId>> ids = loaded->addressable_device_logical_ids();
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  std::vector<std::string> by_device(4);
  for (size_t i = 0; i < devices.size(); ++i) {
    by_device[devices[i]->description().id()] = Ids({(*ids)[i]})[0];
  }
  // XLA's default assignment puts (replica r, partition p) on device 2r + p:
  // DeviceAssignmentProto{replica_count: 2, computation_count: 2, {0, 2}, {1, 3}}.
  EXPECT_EQ(*loaded->SerializedDeviceAssignment(),
            std::string("\x08\x02\x10\x02\x1a\x04\x0a\x02\x00\x02\x1a\x04\x0a\x02\x01\x03", 16));
  EXPECT_EQ(by_device, (std::vector<std::string>{"0/0", "0/1", "1/0", "1/1"}));
}

TEST_F(XlaCpuNewSlotsTest, APortableExecutableHasNoLogicalIds) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd, MinimalCompileOptions(1, 1, true));
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::vector<LogicalDeviceId>> ids = loaded->addressable_device_logical_ids();
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_TRUE(ids->empty());
}

// ---- Parameters: layouts and memory kinds (from the optimized HLO) ----------------------------

TEST_F(XlaCpuNewSlotsTest, ParameterLayoutsComeFromTheOptimizedProgram) {
  std::unique_ptr<LoadedExecutable> loaded =
      Compile(kParameters, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::vector<MemoryLayout>> layouts = loaded->executable()->parameter_layouts();
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  ASSERT_EQ(layouts->size(), 3u);
  EXPECT_EQ(EncodeXlaLayout((*layouts)[0]), "{0,1}");
  EXPECT_EQ(EncodeXlaLayout((*layouts)[1]), "{0:E(4)}");
  EXPECT_EQ(EncodeXlaLayout((*layouts)[2]), "{1,0}");
}

TEST_F(XlaCpuNewSlotsTest, EveryParameterIsInDeviceMemory) {
  std::unique_ptr<LoadedExecutable> loaded =
      Compile(kParameters, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::vector<std::string>> kinds = loaded->executable()->parameter_memory_kinds();
  ASSERT_TRUE(kinds.ok()) << kinds.status().ToString();
  EXPECT_EQ(*kinds, (std::vector<std::string>(3, "device")));
  std::unique_ptr<LoadedExecutable> add = Compile(kAdd, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(*add->executable()->parameter_memory_kinds(),
            (std::vector<std::string>{"device", "device"}));
}

TEST_F(XlaCpuNewSlotsTest, AParameterOutsideDeviceMemoryHasNoKindPjrtkitCanName) {
  // XLA:CPU 0.81 cannot say; "device" would be wrong for parameter 1.
  std::unique_ptr<LoadedExecutable> loaded =
      Compile(kHostParameter, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  Status status = loaded->executable()->parameter_memory_kinds().status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            NotProvided("PJRT_Executable_ParameterMemoryKinds") +
                "; parameter 1 of 'host_parameter' is in memory space 5, which pjrtkit cannot "
                "name without it");
}

// ---- Compile options --------------------------------------------------------------------------

TEST_F(XlaCpuNewSlotsTest, CompileOptionsAreTheBytesCompiledWith) {
  const std::string options = MinimalCompileOptions(2, 1, false);
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAllReduce, options);
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::string> bytes = loaded->executable()->compile_options();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, options);
  // Loaded with options: those.
  StatusOr<std::string> serialized = loaded->executable()->Serialize();
  ASSERT_TRUE(serialized.ok()) << serialized.status().ToString();
  const std::string other = MinimalCompileOptions(2, 1, false) + std::string("\x20\x00", 2);
  StatusOr<std::unique_ptr<LoadedExecutable>> restored =
      client_->DeserializeAndLoad(*serialized, other);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(*(*restored)->executable()->compile_options(), other);
  // Loaded without: XLA:CPU 0.81 cannot say.
  restored = client_->DeserializeAndLoad(*serialized, std::nullopt);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  Status unknown = (*restored)->executable()->compile_options().status();
  EXPECT_EQ(unknown.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(unknown.message(), NotProvided("PJRT_Executable_GetCompileOptions"));
}

TEST_F(XlaCpuNewSlotsTest, AheadOfTimeCompileOptionsSurviveLoading) {
  StatusOr<const Topology*> topology = client_->topology();
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  const std::string options = MinimalCompileOptions(1, 1, false);
  StatusOr<std::shared_ptr<Executable>> compiled =
      (*topology)->Compile(Program{"mlir", kAdd}, options, client_);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(*(*compiled)->compile_options(), options);
  // PJRT_Client_Load: the same executable, loaded, compiled with the same options.
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded = client_->Load(**compiled, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  StatusOr<std::string> bytes = (*loaded)->executable()->compile_options();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, options);
  std::unique_ptr<Buffer> a = Upload(client_, ElementType::kF32, std::vector<float>{1, 2}, {2},
                                     device(0));
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{a.get(), a.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{2, 4}));
  // With options given to Load: those.
  const std::string given = options + std::string("\x20\x00", 2);
  loaded = client_->Load(**compiled, given);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*(*loaded)->executable()->compile_options(), given);
}

// ---- Devices ----------------------------------------------------------------------------------

TEST(XlaCpuDeviceSlotsTest, ClearMemoryStatsStartsTheCountedPeakOver) {
  std::unique_ptr<Client> client = CreateTestClient(1);
  ASSERT_NE(client, nullptr);
  Device* d = client->devices()[0];
  std::unique_ptr<Buffer> big =
      Upload(client.get(), ElementType::kF32, std::vector<float>(256, 1.0f), {256}, d);
  std::unique_ptr<Buffer> small =
      Upload(client.get(), ElementType::kF32, std::vector<float>{1, 2}, {2}, d);
  big.reset();
  StatusOr<MemoryStats> before = d->GetMemoryStats();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->bytes_in_use, 8);
  EXPECT_EQ(before->peak_bytes_in_use, 1032);
  ASSERT_TRUE(d->ClearMemoryStats().ok());
  StatusOr<MemoryStats> after = d->GetMemoryStats();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->bytes_in_use, 8);
  EXPECT_EQ(after->peak_bytes_in_use, 8);
  EXPECT_EQ(after->num_allocs, before->num_allocs);  // Not a peak.
  EXPECT_EQ(after->largest_alloc_size, before->largest_alloc_size);
  // The peak grows again from there.
  std::unique_ptr<Buffer> more =
      Upload(client.get(), ElementType::kF32, std::vector<float>{1, 2, 3, 4}, {4}, d);
  EXPECT_EQ(*d->GetMemoryStats()->peak_bytes_in_use, 24);
}

TEST_F(XlaCpuNewSlotsTest, PoisonExecutionIsNotInXlaCpu081) {
  Status status =
      device(0)->PoisonExecution(3, Status(StatusCode::kAborted, "peer lost")).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), NotProvided("PJRT_Device_PoisonExecution"));
}

TEST_F(XlaCpuNewSlotsTest, TrackingEventsAreNullOnXlaCpu081) {
  StatusOr<std::unique_ptr<AsyncTrackingEvent>> event =
      device(1)->CreateAsyncTrackingEvent("collective");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(*event, nullptr);
}

TEST_F(XlaCpuNewSlotsTest, DeviceAttributesAreTheDescriptions) {
  StatusOr<AttributeMap> attributes = device(2)->GetAttributes();
  ASSERT_TRUE(attributes.ok()) << attributes.status().ToString();
  EXPECT_EQ(*attributes, device(2)->description().attributes());
}

// ---- Buffers ----------------------------------------------------------------------------------

TEST_F(XlaCpuNewSlotsTest, BitcastIsNotInXlaCpu081AndLeavesTheBuffer) {
  std::unique_ptr<Buffer> buffer =
      Upload(client_, ElementType::kF32, std::vector<float>{1, 2}, {2}, device(0));
  ASSERT_NE(buffer, nullptr);
  Status status = buffer->Bitcast(ElementType::kS32, {2}, std::nullopt).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), NotProvided("PJRT_Buffer_Bitcast"));
  EXPECT_FALSE(buffer->IsDeleted());
  EXPECT_EQ(Download<float>(buffer.get(), 2), (std::vector<float>{1, 2}));
}

TEST_F(XlaCpuNewSlotsTest, ControlDependentDonationIsNotInXlaCpu081AndLeavesTheBuffer) {
  Device* d = device(3);
  std::unique_ptr<Buffer> buffer =
      Upload(client_, ElementType::kF32, std::vector<float>{3, 4}, {2}, d);
  ASSERT_NE(buffer, nullptr);
  const int64_t in_use = d->GetMemoryStats()->bytes_in_use;
  Status status = buffer->DonateWithControlDependency().status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), NotProvided("PJRT_Buffer_DonateWithControlDependency"));
  EXPECT_FALSE(buffer->IsDeleted());
  EXPECT_EQ(d->GetMemoryStats()->bytes_in_use, in_use);
  EXPECT_EQ(Download<float>(buffer.get(), 2), (std::vector<float>{3, 4}));
}

// "element type <name> (<n>) is not supported by the XLA:CPU plugin at <path>: its PJRT C API
// 0.81 knows element types up to f4e2m1fn".
std::string Refused(const std::string& name, int number) {
  return "element type " + name + " (" + std::to_string(number) +
         ") is not supported by the XLA:CPU plugin at " + XlaCpuPluginPath() +
         ": its PJRT C API 0.81 knows element types up to f4e2m1fn";
}

TEST_F(XlaCpuNewSlotsTest, ElementTypesNewerThanXlaCpuAreRefusedByName) {
  const std::vector<uint8_t> bytes(16, 0);
  const struct {
    ElementType type;
    const char* name;
  } cases[] = {{ElementType::kS1, "s1"},
               {ElementType::kU1, "u1"},
               {ElementType::kF6E2M3FN, "f6e2m3fn"},
               {ElementType::kF6E3M2FN, "f6e3m2fn"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HostBufferArgs args;
    args.data = bytes.data();
    args.type = c.type;
    args.dims = {4};
    args.device = device(0);
    Status status = client_->BufferFromHostBuffer(args).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), Refused(c.name, static_cast<int>(c.type)));
  }
  // The same for every other way in.
  Status status =
      client_->CreateUninitializedBuffer(ElementType::kF6E2M3FN, {4}, device(0)->default_memory())
          .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), Refused("f6e2m3fn", 32));
  status = client_->CreateBuffersForAsyncHostToDevice({{ElementType::kF6E2M3FN, {4}}}, {},
                                                      device(0)->default_memory())
               .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), Refused("f6e2m3fn", 32));
  // f4e2m1fn, the last type 0.81 knows, is accepted.
  HostBufferArgs ok;
  ok.data = bytes.data();
  ok.type = ElementType::kF4E2M1FN;
  ok.dims = {4};
  ok.device = device(0);
  EXPECT_TRUE(client_->BufferFromHostBuffer(ok).ok());
}

// ---- Topology memory spaces -------------------------------------------------------------------

TEST_F(XlaCpuNewSlotsTest, MemorySpaceQueriesAreNotInXlaCpu081) {
  StatusOr<const Topology*> topology = client_->topology();
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  Status status = (*topology)->MemorySpaceKindIds().status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), NotProvided("PJRT_TopologyDescription_GetMemorySpaceKindIds"));
  status = (*topology)
               ->CanonicalShapeForMemorySpace(0, ElementType::kF32, {2, 3}, std::nullopt)
               .status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            NotProvided("PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace"));
  // A type XLA:CPU does not know is refused before it is asked.
  status = (*topology)
               ->CanonicalShapeForMemorySpace(0, ElementType::kU1, {2}, std::nullopt)
               .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), Refused("u1", 31));
}

TEST(XlaCpuTopologySlotsTest, ATopologyWithoutAClientHasNoInnerPluginToAsk) {
  AttributeMap options = ClientOptions(2);
  StatusOr<std::unique_ptr<Topology>> topology = XlaCpuFactory::CreateTopology("", options);
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  Status status = (*topology)->MemorySpaceKindIds().status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "PJRT_TopologyDescription_GetMemorySpaceKindIds: pjrtkit asks the inner plugin "
            "through a client; this topology has none yet (a client's topology has, and so has "
            "one that compiled)");
  // Once it has compiled, it has one, and XLA:CPU 0.81 answers for itself.
  ASSERT_TRUE((*topology)
                  ->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(1, 1, false), nullptr)
                  .ok());
  status = (*topology)->MemorySpaceKindIds().status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "PJRT_TopologyDescription_GetMemorySpaceKindIds is not provided by the XLA:CPU plugin "
            "at " + XlaCpuPluginPath() + " (PJRT C API 0.81)");
}

// ---- Compiled memory statistics: XLA:CPU 0.81 has none of the new fields -----------------------

TEST_F(XlaCpuNewSlotsTest, CompiledMemoryStatsTotalIsComputedForXlaCpu081) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd, MinimalCompileOptions(1, 1, false));
  ASSERT_NE(loaded, nullptr);
  StatusOr<CompiledMemoryStats> stats = loaded->executable()->GetCompiledMemoryStats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->total_allocation_bytes, 0);
  EXPECT_EQ(stats->indefinite_allocations, 0);
  EXPECT_EQ(stats->peak_unpadded_heap_bytes, 0);
  EXPECT_EQ(stats->total_size_in_bytes,
            stats->generated_code_size_in_bytes + stats->argument_size_in_bytes +
                stats->output_size_in_bytes - stats->alias_size_in_bytes +
                stats->temp_size_in_bytes);
  EXPECT_EQ(stats->argument_size_in_bytes, 16);
  EXPECT_EQ(stats->output_size_in_bytes, 8);
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
