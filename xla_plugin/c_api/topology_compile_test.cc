// PJRT_Compile: ahead-of-time compilation for a topology (Topology::Compile), the executable it
// returns, and loading that executable's bytes on clients of the same and of another topology.

// C++ standard library.
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"
#include "xla_plugin/c_api/testing/fake_topology.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

constexpr char kProgram[] = "f32[2] f32[3]";  // Two outputs: f32[2] and f32[3].

class TopologyCompileTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    format_ = "mlir";
  }

  // The client's own topology (owned by the client).
  PJRT_TopologyDescription* ClientTopology() {
    auto args = MakeArgs<PJRT_Client_TopologyDescription_Args>();
    args.client = client_;
    EXPECT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&args));
    return args.topology;
  }

  // A topology of `device_count` devices from PJRT_TopologyDescription_Create (caller destroys).
  PJRT_TopologyDescription* CreateTopology(int64_t device_count) {
    PJRT_NamedValue option = IntOption("device_count", device_count);
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

  // The fake topology behind `topology` (for its test hooks).
  const testing::FakeTopology* FakeOf(PJRT_TopologyDescription* topology) {
    return dynamic_cast<const testing::FakeTopology*>(topology->topology);
  }

  // PJRT_Compile args for `code` with `options` on `topology`; `client` may be null.
  PJRT_Compile_Args CompileArgs(PJRT_TopologyDescription* topology, const std::string& code,
                                const std::string& options, PJRT_Client* client) {
    code_ = code;
    options_ = options;
    program_ = MakeArgs<PJRT_Program>();
    program_.code = code_.data();
    program_.code_size = code_.size();
    program_.format = format_.data();
    program_.format_size = format_.size();
    auto args = MakeArgs<PJRT_Compile_Args>();
    args.topology = topology;
    args.program = &program_;
    args.compile_options = options_.data();
    args.compile_options_size = options_.size();
    args.client = client;
    return args;
  }

  // PJRT_Compile of `code` on `topology`; nullptr (and a test failure) on error.
  PJRT_Executable* CompileFor(PJRT_TopologyDescription* topology, const std::string& code,
                              const std::string& options = "", PJRT_Client* client = nullptr) {
    PJRT_Compile_Args args = CompileArgs(topology, code, options, client);
    ErrorInfo info = Consume(api_->PJRT_Compile(&args));
    EXPECT_TRUE(info.ok) << info.message;
    return info.ok ? args.executable : nullptr;
  }

  // PJRT_Executable_Serialize of `executable`.
  std::string Serialize(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_Serialize_Args>();
    args.executable = executable;
    EXPECT_PJRT_OK(api_->PJRT_Executable_Serialize(&args));
    std::string bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_executable_deleter(args.serialized_executable);
    return bytes;
  }

  // PJRT_Executable_DeserializeAndLoad of `bytes` on `client` (nullptr with `info` on error).
  PJRT_LoadedExecutable* Load(PJRT_Client* client, const std::string& bytes,
                              ErrorInfo* info = nullptr) {
    auto args = MakeArgs<PJRT_Executable_DeserializeAndLoad_Args>();
    args.client = client;
    args.serialized_executable = bytes.data();
    args.serialized_executable_size = bytes.size();
    ErrorInfo result = Consume(api_->PJRT_Executable_DeserializeAndLoad(&args));
    if (info != nullptr) *info = result;
    return result.ok ? args.loaded_executable : nullptr;
  }

  // Runs `loaded` on device 0 with f32 arguments {1, 2} and {3, 4, 5}; returns the outputs.
  std::vector<std::vector<float>> Run(PJRT_LoadedExecutable* loaded) {
    PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
    PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {3, 4, 5}, {3});
    PJRT_Buffer* list[] = {a, b};
    PJRT_Buffer* const* lists[] = {list};
    PJRT_Buffer* out[2] = {nullptr, nullptr};
    PJRT_Buffer** outputs[] = {out};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 2;
    args.output_lists = outputs;
    EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
    std::vector<std::vector<float>> values;
    for (PJRT_Buffer* buffer : out) {
      if (buffer == nullptr) continue;
      values.push_back(ToHostF32(buffer));
      DestroyBuffer(buffer);
    }
    DestroyBuffer(a);
    DestroyBuffer(b);
    return values;
  }

  std::string code_;       // The program of the last CompileArgs.
  std::string format_;     // Its format.
  std::string options_;    // Its compile options.
  PJRT_Program program_{};  // Points into code_ and format_.
};

TEST_F(TopologyCompileTest, TheExecutableAnswersEveryQuery) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* exe = CompileFor(topology, kProgram, "name=aot");
  ASSERT_NE(exe, nullptr);
  auto name = MakeArgs<PJRT_Executable_Name_Args>();
  name.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(Str(name.executable_name, name.executable_name_size), "aot");
  auto replicas = MakeArgs<PJRT_Executable_NumReplicas_Args>();
  replicas.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_NumReplicas(&replicas));
  EXPECT_EQ(replicas.num_replicas, 1u);
  auto partitions = MakeArgs<PJRT_Executable_NumPartitions_Args>();
  partitions.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_NumPartitions(&partitions));
  EXPECT_EQ(partitions.num_partitions, 1u);
  auto outputs = MakeArgs<PJRT_Executable_NumOutputs_Args>();
  outputs.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 2u);
  auto types = MakeArgs<PJRT_Executable_OutputElementTypes_Args>();
  types.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OutputElementTypes(&types));
  ASSERT_EQ(types.num_output_types, 2u);
  EXPECT_EQ(types.output_types[0], PJRT_Buffer_Type_F32);
  EXPECT_EQ(types.output_types[1], PJRT_Buffer_Type_F32);
  auto dims = MakeArgs<PJRT_Executable_OutputDimensions_Args>();
  dims.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OutputDimensions(&dims));
  ASSERT_EQ(dims.num_outputs, 2u);
  EXPECT_EQ(dims.dims[0], 2);
  EXPECT_EQ(dims.dims[1], 3);
  auto fp = MakeArgs<PJRT_Executable_Fingerprint_Args>();
  fp.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Fingerprint(&fp));
  EXPECT_EQ(Str(fp.executable_fingerprint, fp.executable_fingerprint_size).rfind("fake-", 0), 0u);
  auto cost = MakeArgs<PJRT_Executable_GetCostAnalysis_Args>();
  cost.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_GetCostAnalysis(&cost));
  ASSERT_EQ(cost.num_properties, 2u);
  EXPECT_EQ(Str(cost.properties[0].name, cost.properties[0].name_size), "bytes accessed");
  EXPECT_EQ(cost.properties[0].float_value, 40.0f);
  auto program = MakeArgs<PJRT_Program>();
  auto optimized = MakeArgs<PJRT_Executable_OptimizedProgram_Args>();
  optimized.executable = exe;
  optimized.program = &program;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OptimizedProgram(&optimized));
  std::string code(program.code_size, '\0');
  program.code = code.data();
  EXPECT_PJRT_OK(api_->PJRT_Executable_OptimizedProgram(&optimized));
  EXPECT_EQ(code, "optimized(f32[2] f32[3])");
  EXPECT_EQ(Serialize(exe), "FAKEEXE1\nmlir\nname=aot;topology_devices=2\nf32[2] f32[3]");
  // No client was given, and a created topology has no owner: none was offered.
  EXPECT_EQ(FakeOf(topology)->last_offered_client(), nullptr);
  DestroyExecutable(exe);
  DestroyTopology(topology);
}

TEST_F(TopologyCompileTest, BytesLoadAndRunOnAClientOfTheTopologyLikeANormalCompile) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* exe = CompileFor(topology, kProgram);
  ASSERT_NE(exe, nullptr);
  PJRT_LoadedExecutable* loaded = Load(client_, Serialize(exe));
  ASSERT_NE(loaded, nullptr);
  PJRT_LoadedExecutable* normal = Compile(client_, kProgram);
  const std::vector<std::vector<float>> expected = {{1, 2}, {3, 4, 5}};
  EXPECT_EQ(Run(loaded), expected);
  EXPECT_EQ(Run(normal), expected);
  DestroyLoaded(loaded);
  DestroyLoaded(normal);
  DestroyExecutable(exe);
  DestroyTopology(topology);
}

TEST_F(TopologyCompileTest, AClientOfAnotherTopologyRefusesTheBytes) {
  PJRT_TopologyDescription* topology = CreateTopology(3);
  PJRT_Executable* exe = CompileFor(topology, kProgram);
  ASSERT_NE(exe, nullptr);
  ErrorInfo info;
  EXPECT_EQ(Load(client_, Serialize(exe), &info), nullptr);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "fake: the executable was compiled for a topology of 3 devices; this client has 2");
  PJRT_NamedValue three = IntOption("device_count", 3);
  PJRT_Client* other = CreateClient({three});
  PJRT_LoadedExecutable* loaded = Load(other, Serialize(exe));
  EXPECT_NE(loaded, nullptr);
  DestroyLoaded(loaded);
  DestroyClient(other);
  DestroyExecutable(exe);
  DestroyTopology(topology);
}

TEST_F(TopologyCompileTest, TheClientsTopologyOffersItsOwnerAndAGivenClientWins) {
  PJRT_TopologyDescription* own = ClientTopology();
  PJRT_Executable* exe = CompileFor(own, kProgram);
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(FakeOf(own)->last_offered_client(), Fake(client_));
  DestroyExecutable(exe);

  PJRT_TopologyDescription* created = CreateTopology(2);
  exe = CompileFor(created, kProgram, "", client_);
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(FakeOf(created)->last_offered_client(), Fake(client_));
  EXPECT_EQ(FakeOf(created)->compile_count(), 1);
  DestroyExecutable(exe);
  DestroyTopology(created);
}

TEST_F(TopologyCompileTest, TheExecutableOutlivesItsTopologyAndTheClient) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Executable* exe = CompileFor(topology, kProgram, "", client_);
  ASSERT_NE(exe, nullptr);
  DestroyTopology(topology);
  DestroyClient(client_);
  client_ = nullptr;
  auto outputs = MakeArgs<PJRT_Executable_NumOutputs_Args>();
  outputs.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 2u);
  EXPECT_EQ(Serialize(exe), "FAKEEXE1\nmlir\ntopology_devices=2\nf32[2] f32[3]");
  DestroyExecutable(exe);
}

TEST_F(TopologyCompileTest, DeviceErrorsPassThrough) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  PJRT_Compile_Args args = CompileArgs(topology, "pred[0]", "", nullptr);
  ErrorInfo info = Consume(api_->PJRT_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "fake: the topology compiler refuses pred[0] programs");
  EXPECT_EQ(args.executable, nullptr);
  args = CompileArgs(topology, kProgram, "bogus", nullptr);
  info = Consume(api_->PJRT_Compile(&args));
  EXPECT_EQ(info.message, "fake: bad compile option 'bogus'");
  DestroyTopology(topology);
}

TEST_F(TopologyCompileTest, ATopologyWithoutACompilerIsUnimplemented) {
  // PJRT_TopologyDescription_Deserialize makes a plain Topology: the client layer's default.
  auto ser = MakeArgs<PJRT_TopologyDescription_Serialize_Args>();
  ser.topology = ClientTopology();
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Serialize(&ser));
  const std::string bytes = Str(ser.serialized_bytes, ser.serialized_bytes_size);
  ser.serialized_topology_deleter(ser.serialized_topology);
  auto deser = MakeArgs<PJRT_TopologyDescription_Deserialize_Args>();
  deser.serialized_topology = bytes.data();
  deser.serialized_topology_size = bytes.size();
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Deserialize(&deser));
  PJRT_Compile_Args args = CompileArgs(deser.topology, kProgram, "", nullptr);
  ErrorInfo info = Consume(api_->PJRT_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "Topology::Compile (ahead-of-time compilation for a topology) is not implemented "
            "for platform 'fake'");
  DestroyTopology(deser.topology);
}

TEST_F(TopologyCompileTest, ArgumentsAreChecked) {
  PJRT_TopologyDescription* topology = CreateTopology(2);
  EXPECT_EQ(Consume(api_->PJRT_Compile(nullptr)).message, "PJRT_Compile: args is null");
  PJRT_Compile_Args args = CompileArgs(topology, kProgram, "", nullptr);
  args.struct_size = PJRTKIT_ARGS_SIZE(PJRT_Compile_Args, client);  // Without `executable`.
  ErrorInfo info = Consume(api_->PJRT_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message.rfind("PJRT_Compile: PJRT_Compile_Args struct_size is", 0), 0u)
      << info.message;

  args = CompileArgs(nullptr, kProgram, "", nullptr);
  EXPECT_EQ(Consume(api_->PJRT_Compile(&args)).message, "PJRT_Compile: args->topology is null");
  args = CompileArgs(topology, kProgram, "", nullptr);
  args.program = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Compile(&args)).message, "PJRT_Compile: args->program is null");
  args = CompileArgs(topology, kProgram, "", nullptr);
  program_.struct_size = 8;
  EXPECT_EQ(Consume(api_->PJRT_Compile(&args)).message.rfind(
                "PJRT_Compile: PJRT_Program struct_size is 8, expected at least", 0),
            0u);
  args = CompileArgs(topology, kProgram, "", nullptr);
  program_.code = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Compile(&args)).message,
            "PJRT_Compile: program->code is null but its size is 13");
  args = CompileArgs(topology, kProgram, "", nullptr);
  args.compile_options = nullptr;
  args.compile_options_size = 4;
  EXPECT_EQ(Consume(api_->PJRT_Compile(&args)).message,
            "PJRT_Compile: compile_options is null but its size is 4");
  EXPECT_EQ(FakeOf(topology)->compile_count(), 0);  // None reached the device.
  DestroyTopology(topology);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
