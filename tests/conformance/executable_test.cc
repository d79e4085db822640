// PJRT_Executable_* and PJRT_LoadedExecutable_* queries, serialization, deletion.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class ExecutableTest : public ClientTestBase {
 protected:
  void SetUp() override {
    ClientTestBase::SetUp();
    if (HasFatalFailure()) return;
    PJRT_REQUIRE_COMPILER();
    PJRT_ASSERT_OK(CompileMlir(kThreeOutputs, &loaded_));
    PJRT_ASSERT_OK(GetExecutable(loaded_.get(), &executable_));
  }

  // The fingerprint of `loaded`'s executable, or the error status.
  Status Fingerprint(PJRT_LoadedExecutable* loaded, std::string* fingerprint) {
    ExecutablePtr executable;
    Status status = GetExecutable(loaded, &executable);
    if (!status.ok()) return status;
    PJRT_ARGS(PJRT_Executable_Fingerprint_Args, args);
    args.executable = executable.get();
    status = PJRT_CALL(api()->PJRT_Executable_Fingerprint(&args));
    *fingerprint = Str(args.executable_fingerprint, args.executable_fingerprint_size);
    return status;
  }

  // Serializes `executable` into `bytes`.
  Status Serialize(PJRT_Executable* executable, std::string* bytes) {
    PJRT_ARGS(PJRT_Executable_Serialize_Args, args);
    args.executable = executable;
    const Status status = PJRT_CALL(api()->PJRT_Executable_Serialize(&args));
    if (!status.ok()) return status;
    *bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    EXPECT_NE(args.serialized_executable_deleter, nullptr);
    if (args.serialized_executable_deleter != nullptr) {
      args.serialized_executable_deleter(args.serialized_executable);
    }
    return status;
  }

  Status Deserialize(const std::string& bytes, LoadedExecutablePtr* out) {
    PJRT_ARGS(PJRT_Executable_DeserializeAndLoad_Args, args);
    args.client = client();
    args.serialized_executable = bytes.data();
    args.serialized_executable_size = bytes.size();
    const Status status = PJRT_CALL(api()->PJRT_Executable_DeserializeAndLoad(&args));
    if (status.ok()) *out = LoadedExecutablePtr(api(), args.loaded_executable);
    return status;
  }

  LoadedExecutablePtr loaded_;  // kThreeOutputs.
  ExecutablePtr executable_;    // Its PJRT_Executable.
};

TEST_F(ExecutableTest, NameIsNonEmpty) {
  PJRT_ARGS(PJRT_Executable_Name_Args, args);
  args.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_Name(&args)));
  const std::string name = Str(args.executable_name, args.executable_name_size);
  EXPECT_FALSE(name.empty());
  Report("executable_name", name);
}

TEST_F(ExecutableTest, OneReplicaOnePartition) {
  PJRT_ARGS(PJRT_Executable_NumReplicas_Args, replicas);
  replicas.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumReplicas(&replicas)));
  EXPECT_EQ(replicas.num_replicas, 1u);
  PJRT_ARGS(PJRT_Executable_NumPartitions_Args, partitions);
  partitions.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumPartitions(&partitions)));
  EXPECT_EQ(partitions.num_partitions, 1u);
}

TEST_F(ExecutableTest, ReplicatedProgramHasTwoReplicasOnTwoDevices) {
  if (AddressableDevices().size() < 2) GTEST_SKIP() << "needs 2 addressable devices";
  LoadedExecutablePtr replicated;
  PJRT_ASSERT_OK(CompileMlir(kAddReplicaId, &replicated, CompileOptions2x1()));
  ExecutablePtr executable;
  PJRT_ASSERT_OK(GetExecutable(replicated.get(), &executable));
  PJRT_ARGS(PJRT_Executable_NumReplicas_Args, replicas);
  replicas.executable = executable.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumReplicas(&replicas)));
  EXPECT_EQ(replicas.num_replicas, 2u);
  PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, devices);
  devices.executable = replicated.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_AddressableDevices(&devices)));
  ASSERT_EQ(devices.num_addressable_devices, 2u);
  EXPECT_NE(devices.addressable_devices[0], devices.addressable_devices[1]);
}

TEST_F(ExecutableTest, SingleDeviceProgramHasOneAddressableDevice) {
  PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, args);
  args.executable = loaded_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_AddressableDevices(&args)));
  ASSERT_EQ(args.num_addressable_devices, 1u);
  const std::vector<PJRT_Device*> all = AddressableDevices();
  EXPECT_NE(std::find(all.begin(), all.end(), args.addressable_devices[0]), all.end());
}

TEST_F(ExecutableTest, NumOutputsCountsEveryResult) {
  PJRT_ARGS(PJRT_Executable_NumOutputs_Args, args);
  args.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumOutputs(&args)));
  EXPECT_EQ(args.num_outputs, 3u);
}

TEST_F(ExecutableTest, OutputElementTypes) {
  PJRT_ARGS(PJRT_Executable_OutputElementTypes_Args, args);
  args.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_OutputElementTypes(&args)));
  EXPECT_EQ(std::vector<PJRT_Buffer_Type>(args.output_types,
                                          args.output_types + args.num_output_types),
            (std::vector<PJRT_Buffer_Type>{PJRT_Buffer_Type_F32, PJRT_Buffer_Type_S32,
                                           PJRT_Buffer_Type_F32}));
}

TEST_F(ExecutableTest, OutputDimensions) {
  PJRT_ARGS(PJRT_Executable_OutputDimensions_Args, args);
  args.executable = executable_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_OutputDimensions(&args)));
  ASSERT_EQ(args.num_outputs, 3u);
  std::vector<std::vector<int64_t>> dims;
  const int64_t* next = args.dims;
  for (size_t i = 0; i < args.num_outputs; ++i) {
    dims.emplace_back(next, next + args.dim_sizes[i]);
    next += args.dim_sizes[i];
  }
  EXPECT_EQ(dims, (std::vector<std::vector<int64_t>>{{2, 3}, {3}, {3, 2}}));
}

TEST_F(ExecutableTest, OutputMemoryKindsOrUnimplemented) {
  PJRT_ARGS(PJRT_Executable_OutputMemoryKinds_Args, args);
  args.executable = executable_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Executable_OutputMemoryKinds(&args)),
                             "PJRT_Executable_OutputMemoryKinds");
  ASSERT_EQ(args.num_outputs, 3u);
  for (size_t i = 0; i < args.num_outputs; ++i) {
    EXPECT_FALSE(Str(args.memory_kinds[i], args.memory_kind_sizes[i]).empty()) << i;
  }
}

TEST_F(ExecutableTest, FingerprintIsStableAndDistinguishesPrograms) {
  std::string first;
  PJRT_SKIP_IF_UNIMPLEMENTED(Fingerprint(loaded_.get(), &first), "PJRT_Executable_Fingerprint");
  EXPECT_FALSE(first.empty());
  LoadedExecutablePtr same;
  LoadedExecutablePtr other;
  PJRT_ASSERT_OK(CompileMlir(kThreeOutputs, &same));
  PJRT_ASSERT_OK(CompileMlir(kTimesTwoF32, &other));
  std::string same_fingerprint;
  std::string other_fingerprint;
  PJRT_ASSERT_OK(Fingerprint(same.get(), &same_fingerprint));
  PJRT_ASSERT_OK(Fingerprint(other.get(), &other_fingerprint));
  EXPECT_EQ(first, same_fingerprint) << "same program, same options, different fingerprint";
  EXPECT_NE(first, other_fingerprint) << "different programs share a fingerprint";
}

TEST_F(ExecutableTest, OptimizedProgramTwoCallProtocol) {
  PJRT_ARGS(PJRT_Program, program);
  PJRT_ARGS(PJRT_Executable_OptimizedProgram_Args, args);
  args.executable = executable_.get();
  args.program = &program;
  program.code = nullptr;  // First call: size query.
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Executable_OptimizedProgram(&args)),
                             "PJRT_Executable_OptimizedProgram");
  ASSERT_GT(program.code_size, 0u);
  const size_t size = program.code_size;
  std::string code(size, '\0');
  program.code = &code[0];  // Second call: fill.
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_OptimizedProgram(&args)));
  EXPECT_EQ(program.code_size, size);
  const std::string format = Str(program.format, program.format_size);
  EXPECT_FALSE(format.empty());
  EXPECT_NE(code.find_first_not_of('\0'), std::string::npos) << "nothing was written";
  Report("optimized_program_format", format);
}

TEST_F(ExecutableTest, SerializeDeserializeRunsTheSame) {
  std::string bytes;
  PJRT_SKIP_IF_UNIMPLEMENTED(Serialize(executable_.get(), &bytes), "PJRT_Executable_Serialize");
  ASSERT_FALSE(bytes.empty());
  LoadedExecutablePtr reloaded;
  PJRT_ASSERT_OK(Deserialize(bytes, &reloaded));

  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> n = {-1, 0, 7};
  BufferPtr x_buffer;
  BufferPtr n_buffer;
  PJRT_ASSERT_OK(FromVector(x, PJRT_Buffer_Type_F32, {2, 3}, FirstDevice(), &x_buffer));
  PJRT_ASSERT_OK(FromVector(n, PJRT_Buffer_Type_S32, {3}, FirstDevice(), &n_buffer));
  std::vector<std::vector<float>> results(2);
  std::vector<std::vector<int32_t>> int_results(2);
  PJRT_LoadedExecutable* both[] = {loaded_.get(), reloaded.get()};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::vector<BufferPtr>> outputs;
    PJRT_ASSERT_OK(Execute(both[i], {{x_buffer.get(), n_buffer.get()}}, &outputs));
    ASSERT_EQ(outputs[0].size(), 3u);
    PJRT_ASSERT_OK(ReadVector(outputs[0][0].get(), &results[i]));
    PJRT_ASSERT_OK(ReadVector(outputs[0][1].get(), &int_results[i]));
  }
  EXPECT_EQ(results[0], (std::vector<float>{1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(int_results[0], (std::vector<int32_t>{-2, 0, 14}));
  EXPECT_EQ(int_results[1], int_results[0]);
}

TEST_F(ExecutableTest, DeserializingGarbageIsAnError) {
  LoadedExecutablePtr reloaded;
  PJRT_ASSERT_ERROR(Deserialize("\x01\x02 definitely not an executable", &reloaded));
}

TEST_F(ExecutableTest, CostAnalysisOrUnimplemented) {
  PJRT_ARGS(PJRT_Executable_GetCostAnalysis_Args, args);
  args.executable = executable_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Executable_GetCostAnalysis(&args)),
                             "PJRT_Executable_GetCostAnalysis");
  ExpectWellFormedNamedValues(args.properties, args.num_properties, "cost analysis");
  const PJRT_NamedValue* flops = FindNamedValue(args.properties, args.num_properties, "flops");
  if (flops != nullptr && flops->type == PJRT_NamedValue_kFloat) {
    EXPECT_GE(flops->float_value, 0.0f);
  }
  Report("cost_analysis_properties", std::to_string(args.num_properties));
}

TEST_F(ExecutableTest, GeneratedCodeSizeOrUnimplemented) {
  PJRT_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, args);
  args.executable = executable_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(
      PJRT_CALL(api()->PJRT_Executable_SizeOfGeneratedCodeInBytes(&args)),
      "PJRT_Executable_SizeOfGeneratedCodeInBytes");
  EXPECT_GE(args.size_in_bytes, 0);
}

TEST_F(ExecutableTest, CompiledMemoryStatsOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_Executable_GetCompiledMemoryStats);
  PJRT_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args, args);
  args.executable = executable_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Executable_GetCompiledMemoryStats(&args)),
                             "PJRT_Executable_GetCompiledMemoryStats");
  // Outputs are f32[2,3] + s32[3] + f32[3,2] = 60 bytes; arguments 36 bytes.
  EXPECT_GE(args.output_size_in_bytes + args.host_output_size_in_bytes, 60);
  EXPECT_GE(args.argument_size_in_bytes + args.host_argument_size_in_bytes, 36);
  EXPECT_GE(args.temp_size_in_bytes, 0);
}

TEST_F(ExecutableTest, DeviceAssignmentOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_LoadedExecutable_GetDeviceAssignment);
  PJRT_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args, args);
  args.executable = loaded_.get();
  PJRT_SKIP_IF_UNIMPLEMENTED(
      PJRT_CALL(api()->PJRT_LoadedExecutable_GetDeviceAssignment(&args)),
      "PJRT_LoadedExecutable_GetDeviceAssignment");
  EXPECT_GT(args.serialized_bytes_size, 0u) << "a DeviceAssignmentProto for 1 device";
  ASSERT_NE(args.serialized_device_assignment_deleter, nullptr);
  args.serialized_device_assignment_deleter(args.serialized_device_assignment);
}

TEST_F(ExecutableTest, GetExecutableHandlesAreIndependent) {
  ExecutablePtr second;
  PJRT_ASSERT_OK(GetExecutable(loaded_.get(), &second));
  executable_.reset();  // Destroying one handle leaves the other usable.
  PJRT_ARGS(PJRT_Executable_NumOutputs_Args, args);
  args.executable = second.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumOutputs(&args)));
  EXPECT_EQ(args.num_outputs, 3u);
}

TEST_F(ExecutableTest, DeleteMarksTheExecutableDeleted) {
  PJRT_ARGS(PJRT_LoadedExecutable_IsDeleted_Args, before);
  before.executable = loaded_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_IsDeleted(&before)));
  EXPECT_FALSE(before.is_deleted);
  PJRT_ARGS(PJRT_LoadedExecutable_Delete_Args, del);
  del.executable = loaded_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_Delete(&del)));
  PJRT_ARGS(PJRT_LoadedExecutable_IsDeleted_Args, after);
  after.executable = loaded_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_IsDeleted(&after)));
  PJRT_SKIP_IF_KNOWN_DEVIATION("executable_delete_is_noop", !after.is_deleted,
                               "PJRT_LoadedExecutable_Delete leaves IsDeleted false");
  EXPECT_TRUE(after.is_deleted) << "the header: IsDeleted is true iff Delete was called";
}

}  // namespace
}  // namespace pjrt_conformance
