// Ahead-of-time compilation for a topology (WrappedTopology::Compile) against the real XLA:CPU
// plugin: the executable's queries, its bytes loading and running on a client of the topology
// with the results of a normal compile, refusal by a client of another device count, which inner
// client compiles, and lifetimes.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"
#include "xla_plugin/plugin_wrapper/wrapped_topology.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::InnerApi;
using ::pjrtkit::plugin_wrapper::InnerClient;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::SerializedExecutable;
using ::pjrtkit::plugin_wrapper::WrappedClient;
using ::pjrtkit::plugin_wrapper::WrappedExecutable;
using ::pjrtkit::plugin_wrapper::WrappedTopology;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::Upload;
using ::pjrtkit::xla_cpu::testing::XlaCpuPluginPath;

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";

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

// The options of a 1x1 program.
std::string OneByOne() { return MinimalCompileOptions(1, 1, false); }

// A topology of `device_count` devices as PJRT_TopologyDescription_Create makes it, with the
// XLA:CPU plugin path unless `with_path` is false.
std::unique_ptr<WrappedTopology> MakeTopology(int64_t device_count, bool with_path = true) {
  AttributeMap options;
  options[kDeviceCountOption] = device_count;
  if (with_path) options[kPluginPathOption] = XlaCpuPluginPath();
  StatusOr<std::unique_ptr<Topology>> topology = XlaCpuFactory::CreateTopology("", options);
  EXPECT_TRUE(topology.ok()) << topology.status().ToString();
  if (!topology.ok()) return nullptr;
  return std::unique_ptr<WrappedTopology>(static_cast<WrappedTopology*>(topology->release()));
}

// Compile of `code` on `topology`, offering `client`; fails the test on error.
std::shared_ptr<Executable> CompileFor(const Topology& topology, const std::string& code,
                                       Client* client = nullptr,
                                       const std::string& options = OneByOne()) {
  StatusOr<std::shared_ptr<Executable>> executable =
      topology.Compile(Program{"mlir", code}, options, client);
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  return executable.ok() ? std::move(executable).value() : nullptr;
}

// Serialize() of `executable`; empty (and a test failure) on error.
std::string Serialize(const Executable& executable) {
  StatusOr<std::string> bytes = executable.Serialize();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::string();
}

// Runs the 1x1 add program `loaded` on device 0 of `client` with {1, 2} + {0.5, 0.25}.
std::vector<float> RunAdd(Client* client, LoadedExecutable* loaded) {
  Device* device = client->devices()[0];
  std::unique_ptr<Buffer> a = Upload(client, ElementType::kF32, std::vector<float>{1, 2}, {2},
                                     device);
  std::unique_ptr<Buffer> b = Upload(client, ElementType::kF32, std::vector<float>{0.5f, 0.25f},
                                     {2}, device);
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get(), b.get()}}, ExecuteOptions());
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {};
  return Download<float>(result->outputs[0][0].get(), 2);
}

// One 2-device and one 4-device client for the suite.
class XlaCpuTopologyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    two_ = CreateTestClient(2).release();
    four_ = CreateTestClient(4).release();
  }
  static void TearDownTestSuite() {
    delete two_;
    delete four_;
    two_ = four_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(two_, nullptr);
    ASSERT_NE(four_, nullptr);
  }

  static Client* two_;   // 2 devices.
  static Client* four_;  // 4 devices.
};

Client* XlaCpuTopologyTest::two_ = nullptr;
Client* XlaCpuTopologyTest::four_ = nullptr;

TEST_F(XlaCpuTopologyTest, TheExecutableAnswersEveryQueryLikeANormalCompile) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->plugin_path(), XlaCpuPluginPath());
  EXPECT_EQ(topology->compiler(), nullptr);  // Nothing loaded before the first compile.
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd);
  ASSERT_NE(aot, nullptr);
  ASSERT_NE(topology->compiler(), nullptr);
  EXPECT_EQ(topology->compiler()->device_count(), 2);

  StatusOr<std::unique_ptr<LoadedExecutable>> normal =
      two_->Compile(Program{"mlir", kAdd}, OneByOne());
  ASSERT_TRUE(normal.ok()) << normal.status().ToString();
  std::shared_ptr<Executable> reference = (*normal)->executable();

  EXPECT_EQ(aot->name(), "add");
  EXPECT_EQ(aot->num_replicas(), 1);
  EXPECT_EQ(aot->num_partitions(), 1);
  EXPECT_EQ(aot->num_outputs(), 1u);
  StatusOr<std::vector<ElementType>> types = aot->output_element_types();
  ASSERT_TRUE(types.ok());
  EXPECT_EQ(*types, std::vector<ElementType>{ElementType::kF32});
  StatusOr<std::vector<std::vector<int64_t>>> dims = aot->output_dimensions();
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(*dims, (std::vector<std::vector<int64_t>>{{2}}));
  StatusOr<std::string> fingerprint = aot->fingerprint();
  StatusOr<std::string> reference_fingerprint = reference->fingerprint();
  ASSERT_TRUE(fingerprint.ok());
  ASSERT_TRUE(reference_fingerprint.ok());
  EXPECT_FALSE(fingerprint->empty());
  EXPECT_EQ(*fingerprint, *reference_fingerprint);
  // XLA:CPU's optimized program and serialized bytes are not byte-for-byte reproducible (map
  // order in the debug options, instruction ids), so compare what they say, not their bytes.
  StatusOr<Program> optimized = aot->optimized_program();
  ASSERT_TRUE(optimized.ok());
  EXPECT_EQ(optimized->format, "hlo_with_config");
  EXPECT_NE(optimized->code.find("wrapped_add"), std::string::npos);
  StatusOr<AttributeMap> cost = aot->GetCostAnalysis();
  StatusOr<AttributeMap> reference_cost = reference->GetCostAnalysis();
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  ASSERT_TRUE(reference_cost.ok());
  EXPECT_EQ(*cost, *reference_cost);
  EXPECT_EQ(std::get<float>(cost->at("flops")), 2.0f);
  EXPECT_EQ(std::get<float>(cost->at("bytes accessed")), 24.0f);
  StatusOr<CompiledMemoryStats> stats = aot->GetCompiledMemoryStats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->argument_size_in_bytes, 16);
  EXPECT_EQ(stats->output_size_in_bytes, 8);
  EXPECT_EQ(aot->SizeOfGeneratedCodeInBytes(), reference->SizeOfGeneratedCodeInBytes());
  // The parameter shapes are read as for a normal compile, so a loaded copy checks arguments.
  auto* xla_cpu = dynamic_cast<WrappedExecutable*>(aot.get());
  ASSERT_NE(xla_cpu, nullptr);
  ASSERT_NE(xla_cpu->parameter_shapes(), nullptr);
  EXPECT_TRUE(xla_cpu->parameter_shapes()->CheckCount(2, "add").ok());
  EXPECT_TRUE(
      xla_cpu->parameter_shapes()->CheckArgument(1, ElementType::kF32, {2}, "add").ok());
  EXPECT_FALSE(
      xla_cpu->parameter_shapes()->CheckArgument(1, ElementType::kS32, {2}, "add").ok());
}

TEST_F(XlaCpuTopologyTest, BytesLoadAndRunOnAClientOfTheTopology) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd);
  ASSERT_NE(aot, nullptr);
  const std::string bytes = Serialize(*aot);
  // The header: magic, version 2, device count 2 (little-endian), a checksum, then XLA:CPU's
  // bytes.
  ASSERT_GT(bytes.size(), SerializedExecutable::HeaderSize("xla_cpu"));
  EXPECT_EQ(bytes.substr(0, 28), std::string("\0pjrtkit-xla-cpu-executable\0", 28));
  EXPECT_EQ(bytes.substr(28, 5), std::string("\x02\x02\x00\x00\x00", 5));
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(bytes, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->executable()->name(), "add");
  EXPECT_EQ((*loaded)->addressable_devices(), std::vector<Device*>{two_->devices()[0]});
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));
  // A normal compile gives the same values.
  StatusOr<std::unique_ptr<LoadedExecutable>> normal =
      two_->Compile(Program{"mlir", kAdd}, OneByOne());
  ASSERT_TRUE(normal.ok());
  EXPECT_EQ(RunAdd(two_, normal->get()), (std::vector<float>{1.5f, 2.25f}));
  // The loaded copy names the same topology and is the same program (the checksums differ:
  // XLA:CPU's bytes are not reproducible bit for bit).
  EXPECT_EQ(Serialize(*(*loaded)->executable()).substr(0, 33), bytes.substr(0, 33));
  EXPECT_EQ((*loaded)->executable()->fingerprint().value(), aot->fingerprint().value());
}

TEST_F(XlaCpuTopologyTest, AClientOfAnotherDeviceCountRefusesTheBytes) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd);
  ASSERT_NE(aot, nullptr);
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      four_->DeserializeAndLoad(Serialize(*aot), std::nullopt);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            "DeserializeAndLoad: the executable was compiled for a pjrtkit topology of 2 "
            "devices, but this client has 4 (create the client with device_count=2 to load it)");
  // Bytes of a normal compile name the client's topology too.
  StatusOr<std::unique_ptr<LoadedExecutable>> normal =
      four_->Compile(Program{"mlir", kAdd}, OneByOne());
  ASSERT_TRUE(normal.ok());
  loaded = two_->DeserializeAndLoad(Serialize(*(*normal)->executable()), std::nullopt);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "DeserializeAndLoad: the executable was compiled for a pjrtkit topology of 4 "
            "devices, but this client has 2 (create the client with device_count=4 to load it)");
}

TEST_F(XlaCpuTopologyTest, BytesWithoutTheHeaderStillLoad) {
  // What an earlier pjrtkit wrote (e.g. into JAX's persistent cache): XLA:CPU's own bytes.
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd);
  ASSERT_NE(aot, nullptr);
  const std::string bytes = Serialize(*aot);
  StatusOr<SerializedExecutable> parsed = SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "test");
  ASSERT_TRUE(parsed.ok());
  const std::string inner(parsed->inner());
  ASSERT_FALSE(inner.empty());
  EXPECT_NE(inner[0], '\0');
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(inner, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));
}

TEST_F(XlaCpuTopologyTest, AMultiDeviceProgramRunsOnEveryDevice) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  std::shared_ptr<Executable> aot =
      CompileFor(*topology, kAllReduce, nullptr, MinimalCompileOptions(2, 1, false));
  ASSERT_NE(aot, nullptr);
  EXPECT_EQ(aot->num_replicas(), 2);
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(Serialize(*aot), std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ((*loaded)->addressable_devices(), two_->devices());
  std::unique_ptr<Buffer> a = Upload(two_, ElementType::kF32, std::vector<float>{1, 2}, {2},
                                     two_->devices()[0]);
  std::unique_ptr<Buffer> b = Upload(two_, ElementType::kF32, std::vector<float>{10, 20}, {2},
                                     two_->devices()[1]);
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{a.get()}, {b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{11, 22}));
  EXPECT_EQ(Download<float>(result->outputs[1][0].get(), 2), (std::vector<float>{11, 22}));
}

TEST_F(XlaCpuTopologyTest, OneCompilerPerTopologyReused) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(3);
  ASSERT_NE(CompileFor(*topology, kAdd), nullptr);
  std::shared_ptr<InnerClient> first = topology->compiler();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(CompileFor(*topology, kAdd), nullptr);
  EXPECT_EQ(topology->compiler(), first);
  EXPECT_EQ(first->device_count(), 3);
}

TEST_F(XlaCpuTopologyTest, AnOfferedClientOfTheSameDeviceCountCompilesForFree) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2, /*with_path=*/false);
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd, two_);
  ASSERT_NE(aot, nullptr);
  EXPECT_EQ(topology->compiler(), nullptr);  // No inner client of its own was made.
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(Serialize(*aot), std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));
}

TEST_F(XlaCpuTopologyTest, AnOfferedClientOfAnotherDeviceCountLendsOnlyItsLibrary) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2, /*with_path=*/false);
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd, four_);
  ASSERT_NE(aot, nullptr);
  ASSERT_NE(topology->compiler(), nullptr);
  EXPECT_EQ(topology->compiler()->device_count(), 2);
  EXPECT_EQ(topology->compiler()->shared_api(),
            static_cast<WrappedClient*>(four_)->shared_inner());
  EXPECT_FALSE(four_->DeserializeAndLoad(Serialize(*aot), std::nullopt).ok());
  EXPECT_TRUE(two_->DeserializeAndLoad(Serialize(*aot), std::nullopt).ok());
}

TEST_F(XlaCpuTopologyTest, NoPluginPathAndNoClientIsFailedPrecondition) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2, /*with_path=*/false);
  StatusOr<std::shared_ptr<Executable>> aot =
      topology->Compile(Program{"mlir", kAdd}, OneByOne(), nullptr);
  ASSERT_FALSE(aot.ok());
  EXPECT_EQ(aot.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(aot.status().message(),
            "PJRT_Compile: this pjrtkit topology was created without the create option "
            "'xla_cpu_plugin_path' and no pjrtkit client was given: compiling for it needs "
            "OpenXLA's XLA:CPU plugin (pass the absolute path of xla_cpu_pjrt.so as "
            "'xla_cpu_plugin_path' to PJRT_TopologyDescription_Create, or a pjrtkit client to "
            "PJRT_Compile)");
}

TEST_F(XlaCpuTopologyTest, AnUnloadablePluginPathFailsAtCompileNotAtCreate) {
  AttributeMap options;
  options[kPluginPathOption] = std::string("/not/there/xla_cpu_pjrt.so");
  StatusOr<std::unique_ptr<Topology>> topology = XlaCpuFactory::CreateTopology("", options);
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  StatusOr<std::shared_ptr<Executable>> aot =
      (*topology)->Compile(Program{"mlir", kAdd}, OneByOne(), nullptr);
  ASSERT_FALSE(aot.ok());
  EXPECT_EQ(aot.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(aot.status().message().rfind(
                "create option 'xla_cpu_plugin_path' ('/not/there/xla_cpu_pjrt.so'): cannot load "
                "the XLA:CPU plugin: ",
                0),
            0u)
      << aot.status().message();
}

TEST_F(XlaCpuTopologyTest, CompileErrorsAreReported) {
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
  StatusOr<std::shared_ptr<Executable>> aot =
      topology->Compile(Program{"", kAdd}, OneByOne(), nullptr);
  ASSERT_FALSE(aot.ok());
  EXPECT_EQ(aot.status().message(),
            "PJRT_Compile: the program has no format (\"mlir\" or \"hlo\")");
  aot = topology->Compile(Program{"mlir", "module @broken {"}, OneByOne(), nullptr);
  ASSERT_FALSE(aot.ok());
  EXPECT_EQ(aot.status().message().rfind("XLA:CPU PJRT_Client_Compile: ", 0), 0u)
      << aot.status().message();
  // More replicas than the topology has devices.
  aot = topology->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(3, 1, false), nullptr);
  ASSERT_FALSE(aot.ok());
  EXPECT_EQ(aot.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(XlaCpuTopologyTest, TheExecutableOutlivesTheTopologyAndTheClient) {
  std::shared_ptr<Executable> aot;
  {
    std::unique_ptr<WrappedTopology> topology = MakeTopology(2);
    aot = CompileFor(*topology, kAdd);
  }
  ASSERT_NE(aot, nullptr);
  const std::string bytes = Serialize(*aot);
  EXPECT_EQ(aot->name(), "add");
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(bytes, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));

  // Compiled through a client that is then destroyed.
  std::unique_ptr<Client> client = CreateTestClient(2);
  ASSERT_NE(client, nullptr);
  std::unique_ptr<WrappedTopology> topology = MakeTopology(2, /*with_path=*/false);
  aot = CompileFor(*topology, kAdd, client.get());
  ASSERT_NE(aot, nullptr);
  client.reset();
  topology.reset();
  const std::string again = Serialize(*aot);
  EXPECT_EQ(again.substr(0, 33), bytes.substr(0, 33));  // Up to the checksum.
  loaded = two_->DeserializeAndLoad(again, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));
  StatusOr<AttributeMap> cost = aot->GetCostAnalysis();
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_EQ(std::get<float>(cost->at("flops")), 2.0f);
}

TEST_F(XlaCpuTopologyTest, TheClientsTopologyCompilesThroughTheClient) {
  StatusOr<const Topology*> own = two_->topology();
  ASSERT_TRUE(own.ok());
  const auto* topology = dynamic_cast<const WrappedTopology*>(*own);
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->compiler(), static_cast<WrappedClient*>(two_)->shared_inner_client());
  std::shared_ptr<Executable> aot = CompileFor(*topology, kAdd);
  ASSERT_NE(aot, nullptr);
  EXPECT_EQ(topology->compiler(), static_cast<WrappedClient*>(two_)->shared_inner_client());
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      two_->DeserializeAndLoad(Serialize(*aot), std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunAdd(two_, loaded->get()), (std::vector<float>{1.5f, 2.25f}));
}

TEST_F(XlaCpuTopologyTest, CompileTimeIsReported) {
  // Not an assertion on speed (shared machines): prints what a topology's own inner client
  // costs to create, and compiles through a topology's compiler and through a client, for the
  // README.
  using Ms = std::chrono::duration<double, std::milli>;
  std::shared_ptr<InnerApi> api = static_cast<WrappedClient*>(four_)->shared_inner();
  double create_ms = 0;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    StatusOr<std::shared_ptr<InnerClient>> inner = InnerClient::Create(api, std::make_shared<XlaCpuPolicy>(), 4);
    create_ms += Ms(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(inner.ok());
  }
  std::unique_ptr<WrappedTopology> topology = MakeTopology(4);
  auto start = std::chrono::steady_clock::now();
  ASSERT_NE(CompileFor(*topology, kAdd), nullptr);
  auto first = std::chrono::steady_clock::now();
  ASSERT_NE(CompileFor(*topology, kAdd), nullptr);
  auto second = std::chrono::steady_clock::now();
  ASSERT_NE(CompileFor(*four_->topology().value(), kAdd), nullptr);
  auto through_client = std::chrono::steady_clock::now();
  std::printf("[ timing ] inner client of 4 devices: %.2f ms (mean of 5); add compiled for a "
              "topology: first %.2f ms (creates it), second %.2f ms; through the client %.2f ms\n",
              create_ms / 5, Ms(first - start).count(), Ms(second - first).count(),
              Ms(through_client - second).count());
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
