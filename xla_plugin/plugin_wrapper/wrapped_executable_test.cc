// Compile and Execute through WrappedClient, WrappedExecutable and WrappedLoadedExecutable against
// the real XLA:CPU plugin.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_loaded_executable.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::ParameterShapes;
using ::pjrtkit::plugin_wrapper::WrappedClient;
using ::pjrtkit::plugin_wrapper::WrappedExecutable;
using ::pjrtkit::plugin_wrapper::WrappedLoadedExecutable;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::Upload;

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";

constexpr char kDonatingAdd[] =
    "module @donating_add { func.func @main(%a: tensor<2xf32> {tf.aliasing_output = 0 : i32}, "
    "%b: tensor<2xf32>) -> tensor<2xf32> { %0 = stablehlo.add %a, %b : tensor<2xf32> "
    "return %0 : tensor<2xf32> } }";

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

constexpr char kMulti[] = R"(
module @multi {
  func.func @main(%x: tensor<3xi32>, %y: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi1>, tensor<bf16>) {
    %0 = stablehlo.multiply %x, %y : tensor<3xi32>
    %1 = stablehlo.compare GT, %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %2 = stablehlo.constant dense<1.5> : tensor<bf16>
    return %0, %1, %2 : tensor<3xi32>, tensor<3xi1>, tensor<bf16>
  }
})";

// One client of 4 devices for the suite.
class XlaCpuExecutableTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { client_ = CreateTestClient(4).release(); }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  Device* device(int id) { return client_->devices()[id]; }

  // Compiles MLIR `code` with `options`; fails the test on error.
  std::unique_ptr<LoadedExecutable> Compile(const std::string& code,
                                            const std::string& options = MinimalCompileOptions(
                                                1, 1, false)) {
    StatusOr<std::unique_ptr<LoadedExecutable>> executable =
        client_->Compile(Program{"mlir", code}, options);
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(executable).value() : nullptr;
  }

  // f32[2] buffer on `device`.
  std::unique_ptr<Buffer> F32(std::vector<float> values, int device_id) {
    return Upload(client_, ElementType::kF32, values, {static_cast<int64_t>(values.size())},
                  device(device_id));
  }

  static Client* client_;
};

Client* XlaCpuExecutableTest::client_ = nullptr;

TEST_F(XlaCpuExecutableTest, CompileAndExecuteAdd) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->addressable_devices(), std::vector<Device*>{device(0)});
  EXPECT_FALSE(loaded->IsDeleted());
  std::unique_ptr<Buffer> a = F32({1, 2}, 0), b = F32({10, 20}, 0);
  ExecuteOptions options;
  options.want_completion_events = true;
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get(), b.get()}}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_EQ(result->outputs[0].size(), 1u);
  ASSERT_EQ(result->completion.size(), 1u);
  EXPECT_TRUE(result->completion[0]->Await().ok());
  Buffer* out = result->outputs[0][0].get();
  EXPECT_EQ(out->device(), device(0));
  EXPECT_EQ(out->memory()->kind(), "device");
  EXPECT_EQ(out->element_type(), ElementType::kF32);
  EXPECT_EQ(out->dimensions(), (std::vector<int64_t>{2}));
  EXPECT_EQ(Download<float>(out, 2), (std::vector<float>{11, 22}));
  // Inputs are not donated by a program without aliasing.
  EXPECT_FALSE(a->IsDeleted());
  EXPECT_FALSE(b->IsDeleted());
  // Without completion events.
  result = loaded->Execute({{b.get(), b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->completion.empty());
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{20, 40}));
}

TEST_F(XlaCpuExecutableTest, ExecutableMetadata) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  std::shared_ptr<Executable> executable = loaded->executable();
  EXPECT_EQ(executable->name(), "add");
  EXPECT_EQ(executable->num_replicas(), 1);
  EXPECT_EQ(executable->num_partitions(), 1);
  EXPECT_EQ(executable->num_outputs(), 1u);
  EXPECT_EQ(*executable->output_element_types(), std::vector<ElementType>{ElementType::kF32});
  EXPECT_EQ(*executable->output_dimensions(), (std::vector<std::vector<int64_t>>{{2}}));
  // XLA:CPU does not implement output memory kinds; the inner answer passes through.
  Status kinds = executable->output_memory_kinds().status();
  EXPECT_EQ(kinds.code(), StatusCode::kUnimplemented);
  EXPECT_NE(kinds.message().find("XLA:CPU PJRT_Executable_OutputMemoryKinds"), std::string::npos);
  StatusOr<std::string> fingerprint = executable->fingerprint();
  ASSERT_TRUE(fingerprint.ok()) << fingerprint.status().ToString();
  EXPECT_FALSE(fingerprint->empty());
  std::unique_ptr<LoadedExecutable> again = Compile(kAdd);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(*again->executable()->fingerprint(), *fingerprint);
  StatusOr<Program> optimized = executable->optimized_program();
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(optimized->format, "hlo_with_config");
  EXPECT_GT(optimized->code.size(), 100u);
  StatusOr<CompiledMemoryStats> stats = executable->GetCompiledMemoryStats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->argument_size_in_bytes, 16);
  EXPECT_EQ(stats->output_size_in_bytes, 8);
  EXPECT_EQ(stats->alias_size_in_bytes, 0);
  StatusOr<AttributeMap> cost = executable->GetCostAnalysis();
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_EQ(std::get<float>(cost->at("flops")), 2.0f);
  EXPECT_EQ(std::get<float>(cost->at("bytes accessed")), 24.0f);
  EXPECT_GE(executable->SizeOfGeneratedCodeInBytes(), 0);
  StatusOr<std::string> assignment = loaded->SerializedDeviceAssignment();
  ASSERT_TRUE(assignment.ok()) << assignment.status().ToString();
  // DeviceAssignmentProto{replica_count: 1, computation_count: 1, computation_devices {0}}.
  EXPECT_EQ(*assignment, std::string("\x08\x01\x10\x01\x1a\x03\x0a\x01\x00", 9));
  // The Executable outlives its LoadedExecutable.
  loaded.reset();
  EXPECT_EQ(executable->name(), "add");
  EXPECT_EQ(*executable->fingerprint(), *fingerprint);
}

TEST_F(XlaCpuExecutableTest, SeveralOutputTypes) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kMulti);
  ASSERT_NE(loaded, nullptr);
  std::shared_ptr<Executable> executable = loaded->executable();
  EXPECT_EQ(*executable->output_element_types(),
            (std::vector<ElementType>{ElementType::kS32, ElementType::kPred, ElementType::kBF16}));
  EXPECT_EQ(*executable->output_dimensions(), (std::vector<std::vector<int64_t>>{{3}, {3}, {}}));
  std::vector<int32_t> x = {1, 5, -3}, y = {2, 4, -3};
  std::unique_ptr<Buffer> bx = Upload(client_, ElementType::kS32, x, {3}, device(0));
  std::unique_ptr<Buffer> by = Upload(client_, ElementType::kS32, y, {3}, device(0));
  StatusOr<ExecuteResult> result = loaded->Execute({{bx.get(), by.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->outputs[0].size(), 3u);
  EXPECT_EQ(Download<int32_t>(result->outputs[0][0].get(), 3), (std::vector<int32_t>{2, 20, 9}));
  EXPECT_EQ(Download<uint8_t>(result->outputs[0][1].get(), 3), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(Download<uint16_t>(result->outputs[0][2].get(), 1), std::vector<uint16_t>{0x3FC0});
}

TEST_F(XlaCpuExecutableTest, EmptyCompileOptionsMeanOneReplica) {
  // XLA:CPU itself aborts on empty options (num_replicas 0); pjrtkit fills in 1 x 1.
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd, "");
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->executable()->num_replicas(), 1);
  std::unique_ptr<Buffer> a = F32({1, 2}, 0), b = F32({3, 4}, 0);
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get(), b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{4, 6}));
}

TEST_F(XlaCpuExecutableTest, CompileErrors) {
  Status status = client_->Compile(Program{"mlir", "module {"}, MinimalCompileOptions(1, 1, false))
                      .status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("XLA:CPU PJRT_Client_Compile: "), std::string::npos)
      << status.message();
  status = client_->Compile(Program{"", kAdd}, "").status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  status = client_->Compile(Program{"mlir", kAdd}, std::string("\xff\xff\xff", 3)).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("not a serialized xla.CompileOptionsProto"), std::string::npos);
  status = client_->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(-1, 1, false)).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  status = client_->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(5, 1, false)).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "compile options ask for 5 replicas x 1 partitions; this client has 4 devices "
            "(create option 'device_count')");
}

TEST_F(XlaCpuExecutableTest, TwoReplicaAllReduce) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAllReduce, MinimalCompileOptions(2, 1, false));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->executable()->num_replicas(), 2);
  EXPECT_EQ(loaded->addressable_devices(), (std::vector<Device*>{device(0), device(1)}));
  StatusOr<std::string> assignment = loaded->SerializedDeviceAssignment();
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(*assignment, std::string("\x08\x02\x10\x01\x1a\x04\x0a\x02\x00\x01", 10));
  std::unique_ptr<Buffer> a = F32({1, 2}, 0), b = F32({10, 20}, 1);
  ExecuteOptions options;
  options.want_completion_events = true;
  options.launch_id = 7;
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get()}, {b.get()}}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->outputs.size(), 2u);
  ASSERT_EQ(result->completion.size(), 2u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_TRUE(result->completion[d]->Await().ok());
    EXPECT_EQ(result->outputs[d][0]->device(), device(d));
    EXPECT_EQ(Download<float>(result->outputs[d][0].get(), 2), (std::vector<float>{11, 22}));
  }
  // Arguments on the wrong device are caught before XLA:CPU sees them.
  std::unique_ptr<Buffer> c = F32({0, 0}, 0);
  Status status = loaded->Execute({{a.get()}, {c.get()}}, ExecuteOptions()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "Execute argument 0 for device list 1 is on PJRTKIT_0, but that list runs on "
            "PJRTKIT_1");
  // The number of lists is the client layer's check (call_checks.h), which the C layer runs.
  status = CheckExecuteDevices("Execute", *loaded, 1, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "Execute: num_devices is 1, but the executable runs on 2 device(s); only 2 is "
            "accepted");
  EXPECT_TRUE(CheckExecuteDevices("Execute", *loaded, 2, nullptr).ok());
}

TEST_F(XlaCpuExecutableTest, PortableExecutableRunsOnExecuteDevice) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd, MinimalCompileOptions(1, 1, true));
  ASSERT_NE(loaded, nullptr);
  EXPECT_TRUE(loaded->addressable_devices().empty());
  std::unique_ptr<Buffer> a = F32({1, 2}, 2), b = F32({5, 5}, 2);
  ExecuteOptions options;
  options.execute_device = device(2);
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get(), b.get()}}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->outputs[0][0]->device(), device(2));
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{6, 7}));
  Status status = CheckExecuteDevices("Execute", *loaded, 1, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "Execute: the executable is portable (compiled for no device); only a call with "
            "execute_device set is accepted");
  EXPECT_TRUE(CheckExecuteDevices("Execute", *loaded, 1, device(2)).ok());
  EXPECT_EQ(*loaded->SerializedDeviceAssignment(), "");
}

TEST_F(XlaCpuExecutableTest, DonationDeletesTheInputAndMovesTheCount) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kDonatingAdd);
  ASSERT_NE(loaded, nullptr);
  Device* d0 = device(0);
  std::unique_ptr<Buffer> a = F32({1, 2}, 0), b = F32({3, 4}, 0);
  const MemoryStats before = *d0->GetMemoryStats();
  StatusOr<ExecuteResult> result = loaded->Execute({{a.get(), b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{4, 6}));
  EXPECT_TRUE(a->IsDeleted());
  EXPECT_FALSE(b->IsDeleted());
  const MemoryStats after = *d0->GetMemoryStats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);  // -8 donated, +8 output.
  EXPECT_EQ(*after.num_allocs, *before.num_allocs + 1);
  float out[2];
  EXPECT_EQ(a->ToHostBuffer(out, sizeof(out), nullptr).status().code(),
            StatusCode::kFailedPrecondition);
  Status status = CheckBufferNotDeleted("Execute", "argument_lists[0][0]", *a);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "Execute: argument_lists[0][0] has been deleted or donated; only a live buffer is "
            "accepted");
  EXPECT_TRUE(CheckBufferNotDeleted("Execute", "argument_lists[0][1]", *b).ok());

  // non_donatable_input_indices keeps the input.
  std::unique_ptr<Buffer> c = F32({1, 1}, 0);
  ExecuteOptions keep;
  keep.non_donatable_input_indices = {0};
  result = loaded->Execute({{c.get(), b.get()}}, keep);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(c->IsDeleted());
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{4, 5}));
  // So does an external reference (DLPack).
  ASSERT_TRUE(c->IncreaseExternalReferenceCount().ok());
  result = loaded->Execute({{c.get(), b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(c->IsDeleted());
  ASSERT_TRUE(c->DecreaseExternalReferenceCount().ok());
}

TEST_F(XlaCpuExecutableTest, SerializeDeserializeExecute) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  StatusOr<std::string> serialized = loaded->executable()->Serialize();
  ASSERT_TRUE(serialized.ok()) << serialized.status().ToString();
  EXPECT_GT(serialized->size(), 100u);
  for (const std::optional<std::string>& options :
       {std::optional<std::string>(), std::optional<std::string>(MinimalCompileOptions(1, 1, false))}) {
    StatusOr<std::unique_ptr<LoadedExecutable>> restored =
        client_->DeserializeAndLoad(*serialized, options);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ((*restored)->executable()->name(), "add");
    EXPECT_EQ((*restored)->addressable_devices(), std::vector<Device*>{device(0)});
    std::unique_ptr<Buffer> a = F32({1, 2}, 0), b = F32({0.5f, 0.25f}, 0);
    StatusOr<ExecuteResult> result = (*restored)->Execute({{a.get(), b.get()}}, ExecuteOptions());
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{1.5f, 2.25f}));
  }
  EXPECT_FALSE(client_->DeserializeAndLoad("not an executable", std::nullopt).ok());
}

TEST_F(XlaCpuExecutableTest, TheExecutableOutlivesItsLoadedExecutableAndItsClient) {
  // jaxlib may keep a PJRT_Executable after the PJRT_LoadedExecutable and the client are gone.
  // XLA:CPU's inner executable points into its loaded executable and client (Serialize crashed
  // once those were destroyed), so the executable keeps both alive.
  std::unique_ptr<Client> client = CreateTestClient(2);
  ASSERT_NE(client, nullptr);
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::shared_ptr<Executable> executable = (*loaded)->executable();
  StatusOr<std::string> before = executable->Serialize();
  ASSERT_TRUE(before.ok());
  loaded->reset();
  client.reset();
  StatusOr<std::string> after = executable->Serialize();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  // XLA:CPU's bytes are not reproducible bit for bit; the header is ours and must be equal.
  EXPECT_EQ(after->substr(0, 33), before->substr(0, 33));
  StatusOr<std::string> fingerprint = executable->fingerprint();
  ASSERT_TRUE(fingerprint.ok());
  EXPECT_FALSE(fingerprint->empty());
  StatusOr<Program> optimized = executable->optimized_program();
  ASSERT_TRUE(optimized.ok());
  EXPECT_EQ(optimized->format, "hlo_with_config");
  // The bytes name the 2-device topology they were compiled for: the suite's 4-device client
  // refuses them, a new 2-device client runs them.
  EXPECT_EQ(client_->DeserializeAndLoad(*after, std::nullopt).status().code(),
            StatusCode::kInvalidArgument);
  std::unique_ptr<Client> other = CreateTestClient(2);
  ASSERT_NE(other, nullptr);
  StatusOr<std::unique_ptr<LoadedExecutable>> restored =
      other->DeserializeAndLoad(*after, std::nullopt);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  std::unique_ptr<Buffer> a = Upload(other.get(), ElementType::kF32, std::vector<float>{1, 2},
                                     {2}, other->devices()[0]);
  StatusOr<ExecuteResult> result = (*restored)->Execute({{a.get(), a.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{2, 4}));
}

TEST_F(XlaCpuExecutableTest, DeletedExecutableIsRefusedByTheCallChecks) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  EXPECT_TRUE(CheckExecutableNotDeleted("Execute", "executable", *loaded).ok());
  loaded->Delete();
  EXPECT_TRUE(loaded->IsDeleted());
  Status status = CheckExecutableNotDeleted("Execute", "executable", *loaded);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "Execute: executable has been deleted; only an executable that was not deleted is "
            "accepted");
}

TEST_F(XlaCpuExecutableTest, BadArgumentLists) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  std::unique_ptr<Buffer> a = F32({1, 2}, 0);
  Status status = loaded->Execute({{a.get(), nullptr}}, ExecuteOptions()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "Execute argument 1 for device list 0 is null");
  // Too few arguments: checked against the parameter shapes.
  status = loaded->Execute({{a.get()}}, ExecuteOptions()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_EQ(status.message(), "Execute: 'add' takes 2 argument(s), got 1");
}

TEST_F(XlaCpuExecutableTest, ParameterShapesComeFromTheOptimizedProgram) {
  std::unique_ptr<LoadedExecutable> loaded = Compile(kMulti);
  ASSERT_NE(loaded, nullptr);
  auto* executable = dynamic_cast<WrappedExecutable*>(loaded->executable().get());
  ASSERT_NE(executable, nullptr);
  StatusOr<Program> program = executable->optimized_program();
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->format, "hlo_with_config");
  const ParameterShapes* shapes = executable->parameter_shapes();
  ASSERT_NE(shapes, nullptr);
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ(shapes->shapes()[0].ToString(), "s32[3]");
  EXPECT_EQ(shapes->shapes()[1].ToString(), "s32[3]");
}

TEST_F(XlaCpuExecutableTest, WrongElementTypeOrDimensionsAreRejected) {
  // XLA:CPU itself accepts any argument of the right byte size; pjrtkit checks the shape.
  std::unique_ptr<LoadedExecutable> loaded = Compile(kAdd);
  ASSERT_NE(loaded, nullptr);
  std::unique_ptr<Buffer> good = F32({1, 2}, 0);
  std::unique_ptr<Buffer> ints =
      Upload(client_, ElementType::kS32, std::vector<int32_t>{1, 2}, {2}, device(0));
  std::unique_ptr<Buffer> matrix =
      Upload(client_, ElementType::kF32, std::vector<float>{1, 2}, {1, 2}, device(0));
  ASSERT_NE(ints, nullptr);
  ASSERT_NE(matrix, nullptr);
  Status status = loaded->Execute({{ints.get(), good.get()}}, ExecuteOptions()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "Execute: argument 0 of 'add' must be f32[2], got s32[2]");
  status = loaded->Execute({{good.get(), matrix.get()}}, ExecuteOptions()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "Execute: argument 1 of 'add' must be f32[2], got f32[1,2]");
  // A deserialized executable knows its shapes too.
  StatusOr<std::string> bytes = loaded->executable()->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<std::unique_ptr<LoadedExecutable>> again =
      client_->DeserializeAndLoad(*bytes, std::nullopt);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  status = (*again)->Execute({{ints.get(), good.get()}}, ExecuteOptions()).status();
  EXPECT_EQ(status.message(), "Execute: argument 0 of 'add' must be f32[2], got s32[2]");
  StatusOr<ExecuteResult> result =
      (*again)->Execute({{good.get(), good.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{2, 4}));
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
