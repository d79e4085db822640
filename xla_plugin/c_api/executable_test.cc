// PJRT_Client_Compile, PJRT_Executable_*, PJRT_LoadedExecutable_* (incl. Execute).

// C++ standard library.
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

constexpr char kProgram[] = "f32[2] f32[3]";  // Two outputs: f32[2] and f32[3].

// Fixture with an Execute helper.
class ExecutableTest : public ClientTest {
 protected:
  // Execute args for `loaded` on `lists` (one argument list per device) with `outputs` storage.
  PJRT_LoadedExecutable_Execute_Args ExecuteArgs(PJRT_LoadedExecutable* loaded,
                                                 std::vector<PJRT_Buffer* const*>& lists,
                                                 size_t num_args,
                                                 std::vector<PJRT_Buffer**>& outputs) {
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options_;
    args.argument_lists = lists.data();
    args.num_devices = lists.size();
    args.num_args = num_args;
    args.output_lists = outputs.data();
    return args;
  }

  PJRT_ExecuteOptions options_ = MakeArgs<PJRT_ExecuteOptions>();  // Default options.
};

TEST_F(ExecutableTest, ExecutableProperties) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram, "name=props");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* exe = GetExecutable(loaded);
  auto name = MakeArgs<PJRT_Executable_Name_Args>();
  name.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(Str(name.executable_name, name.executable_name_size), "props");
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
  auto code = MakeArgs<PJRT_Executable_SizeOfGeneratedCodeInBytes_Args>();
  code.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_SizeOfGeneratedCodeInBytes(&code));
  EXPECT_EQ(code.size_in_bytes, 13);

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
  EXPECT_EQ(dims.dim_sizes[0], 1u);
  EXPECT_EQ(dims.dim_sizes[1], 1u);
  EXPECT_EQ(dims.dims[0], 2);
  EXPECT_EQ(dims.dims[1], 3);
  const int64_t* first_dims = dims.dims;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OutputDimensions(&dims));
  EXPECT_EQ(dims.dims, first_dims);  // Owned by the handle; stable.
  auto kinds = MakeArgs<PJRT_Executable_OutputMemoryKinds_Args>();
  kinds.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OutputMemoryKinds(&kinds));
  ASSERT_EQ(kinds.num_outputs, 2u);
  EXPECT_EQ(Str(kinds.memory_kinds[1], kinds.memory_kind_sizes[1]), "device");

  auto cost = MakeArgs<PJRT_Executable_GetCostAnalysis_Args>();
  cost.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_GetCostAnalysis(&cost));
  ASSERT_EQ(cost.num_properties, 2u);
  EXPECT_EQ(Str(cost.properties[0].name, cost.properties[0].name_size), "bytes accessed");
  EXPECT_EQ(cost.properties[0].type, PJRT_NamedValue_kFloat);
  EXPECT_EQ(cost.properties[0].float_value, 40.0f);
  auto stats = MakeArgs<PJRT_Executable_GetCompiledMemoryStats_Args>();
  stats.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&stats));
  EXPECT_EQ(stats.generated_code_size_in_bytes, 13);
  EXPECT_EQ(stats.argument_size_in_bytes, 20);
  EXPECT_EQ(stats.output_size_in_bytes, 20);
  EXPECT_EQ(stats.temp_size_in_bytes, 7);
  EXPECT_EQ(stats.host_temp_size_in_bytes, 11);
  EXPECT_EQ(stats.peak_memory_in_bytes, 47);

  auto fp = MakeArgs<PJRT_Executable_Fingerprint_Args>();
  fp.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Fingerprint(&fp));
  auto lfp = MakeArgs<PJRT_LoadedExecutable_Fingerprint_Args>();
  lfp.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Fingerprint(&lfp));
  EXPECT_EQ(Str(fp.executable_fingerprint, fp.executable_fingerprint_size).rfind("fake-", 0), 0u);
  EXPECT_EQ(Str(fp.executable_fingerprint, fp.executable_fingerprint_size),
            Str(lfp.executable_fingerprint, lfp.executable_fingerprint_size));
  DestroyExecutable(exe);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, OptimizedProgramTwoCallProtocol) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram);
  PJRT_Executable* exe = GetExecutable(loaded);
  auto program = MakeArgs<PJRT_Program>();
  auto args = MakeArgs<PJRT_Executable_OptimizedProgram_Args>();
  args.executable = exe;
  args.program = &program;
  EXPECT_PJRT_OK(api_->PJRT_Executable_OptimizedProgram(&args));
  const std::string expected = "optimized(f32[2] f32[3])";
  EXPECT_EQ(program.code_size, expected.size());
  EXPECT_EQ(Str(program.format, program.format_size), "fake");

  std::string code(program.code_size - 1, '\0');
  program.code = code.data();
  program.code_size = code.size();
  ErrorInfo info = Consume(api_->PJRT_Executable_OptimizedProgram(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  code.assign(expected.size(), '\0');
  program.code = code.data();
  program.code_size = code.size();
  EXPECT_PJRT_OK(api_->PJRT_Executable_OptimizedProgram(&args));
  EXPECT_EQ(code, expected);
  DestroyExecutable(exe);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, CompileErrors) {
  auto program = MakeArgs<PJRT_Program>();
  std::string code = "this is not a signature";
  program.code = code.data();
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  auto args = MakeArgs<PJRT_Client_Compile_Args>();
  args.client = client_;
  args.program = &program;
  ErrorInfo info = Consume(api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "fake: cannot parse 'this' (want e.g. f32[2,3])");
  program.struct_size = 8;
  info = Consume(api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(info.message.rfind("PJRT_Client_Compile: PJRT_Program struct_size is 8", 0), 0u);
  args.program = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Client_Compile(&args)).message,
            "PJRT_Client_Compile: args->program is null");
}

TEST_F(ExecutableTest, ExecuteReturnsCopiesAndCompletionEvents) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram);
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {3, 4, 5}, {3});
  PJRT_Buffer* args0[] = {a, b};
  std::vector<PJRT_Buffer* const*> lists = {args0};
  PJRT_Buffer* out0[2] = {nullptr, nullptr};
  std::vector<PJRT_Buffer**> outputs = {out0};
  PJRT_Event* events[1] = {nullptr};
  options_.launch_id = 17;
  auto args = ExecuteArgs(loaded, lists, 2, outputs);
  args.device_complete_events = events;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_NE(events[0], nullptr);
  EXPECT_TRUE(AwaitAndDestroy(events[0]).ok);
  EXPECT_EQ(ToHostF32(out0[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(ToHostF32(out0[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_NE(out0[0], a);
  EXPECT_EQ(Fake(client_)->last_launch_id(), 17);
  EXPECT_FALSE(IsDeleted(a));  // Not compiled with donate=1.
  for (PJRT_Buffer* buffer : {a, b, out0[0], out0[1]}) DestroyBuffer(buffer);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, ExecuteOnTwoReplicasAndOnAChosenDevice) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[1]", "replicas=2");
  auto devices = MakeArgs<PJRT_LoadedExecutable_AddressableDevices_Args>();
  devices.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDevices(&devices));
  ASSERT_EQ(devices.num_addressable_devices, 2u);
  EXPECT_EQ(devices.addressable_devices[1], devices_[1]);

  PJRT_Buffer* x0 = MakeF32Buffer(client_, devices_[0], {10}, {1});
  PJRT_Buffer* x1 = MakeF32Buffer(client_, devices_[1], {11}, {1});
  PJRT_Buffer* l0[] = {x0};
  PJRT_Buffer* l1[] = {x1};
  std::vector<PJRT_Buffer* const*> lists = {l0, l1};
  PJRT_Buffer* o0[1] = {nullptr};
  PJRT_Buffer* o1[1] = {nullptr};
  std::vector<PJRT_Buffer**> outputs = {o0, o1};
  auto args = ExecuteArgs(loaded, lists, 1, outputs);
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(ToHostF32(o1[0]), (std::vector<float>{11}));
  auto device = MakeArgs<PJRT_Buffer_Device_Args>();
  device.buffer = o1[0];
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);

  // Two lists for two devices are required ...
  args.num_devices = 1;
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: num_devices is 1, but the executable runs on 2 "
            "device(s); only 2 is accepted");
  // ... unless execute_device picks one.
  std::vector<PJRT_Buffer* const*> one = {l1};
  PJRT_Buffer* o2[1] = {nullptr};
  std::vector<PJRT_Buffer**> single = {o2};
  auto chosen = ExecuteArgs(loaded, one, 1, single);
  chosen.execute_device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&chosen));
  device.buffer = o2[0];
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, devices_[1]);

  auto assignment = MakeArgs<PJRT_LoadedExecutable_GetDeviceAssignment_Args>();
  assignment.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_GetDeviceAssignment(&assignment));
  EXPECT_EQ(Str(assignment.serialized_bytes, assignment.serialized_bytes_size),
            "replicas=2 partitions=1 devices=0,1");
  assignment.serialized_device_assignment_deleter(assignment.serialized_device_assignment);
  for (PJRT_Buffer* buffer : {x0, x1, o0[0], o1[0], o2[0]}) DestroyBuffer(buffer);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, ExecuteValidatesItsArguments) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram);
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  PJRT_Buffer* args0[] = {a, nullptr};
  std::vector<PJRT_Buffer* const*> lists = {args0};
  PJRT_Buffer* out0[2] = {nullptr, nullptr};
  std::vector<PJRT_Buffer**> outputs = {out0};
  auto args = ExecuteArgs(loaded, lists, 2, outputs);
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_Execute(&args)).message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][1] is null");

  args0[1] = a;  // Wrong shape for argument 1: the device's error comes through.
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "fake: argument 1 is f32[2], expected f32[3]");

  PJRT_ExecuteOptions old_options = MakeArgs<PJRT_ExecuteOptions>(16);
  args.options = &old_options;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.message.rfind("PJRT_LoadedExecutable_Execute: PJRT_ExecuteOptions struct_size "
                               "is 16, expected at least",
                               0),
            0u);
  PJRT_ExecuteOptions sends = MakeArgs<PJRT_ExecuteOptions>();
  sends.num_send_ops = 1;
  args.options = &sends;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_Execute(&args)).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  // Requests of PJRT C API 0.97-0.117 pjrtkit cannot honour are refused, naming the field.
  PJRT_ExecuteOptions newer = MakeArgs<PJRT_ExecuteOptions>();
  PJRT_HloOutputCallbackInfo output_callback{};
  newer.hlo_output_callbacks = &output_callback;
  newer.num_hlo_output_callbacks = 1;
  args.options = &newer;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: options->hlo_output_callbacks (1 given) are not "
            "supported by pjrtkit (0 accepted)");
  newer = MakeArgs<PJRT_ExecuteOptions>();
  PJRT_NamedValue custom{};
  newer.custom_options = &custom;
  newer.num_custom_options = 1;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: options->custom_options (1 given) are not "
            "supported by pjrtkit (0 accepted)");
  newer = MakeArgs<PJRT_ExecuteOptions>();
  newer.multi_slice_config = reinterpret_cast<PJRT_MultiSlice_Config*>(&custom);
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: options->multi_slice_config is not supported by "
            "pjrtkit (null runs on this process's devices)");
  // A caller whose struct ends before those fields is not read there: junk past its end, and
  // the execution reaches the device (whose error for argument 1 comes back).
  PJRT_ExecuteOptions older;
  std::memset(&older, 0xa5, sizeof(older));
  std::memset(&older, 0, PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, context));
  older.struct_size = PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, context);
  args.options = &older;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_Execute(&args)).message,
            "fake: argument 1 is f32[2], expected f32[3]");
  args.options = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_Execute(&args)).message,
            "PJRT_LoadedExecutable_Execute: args->options is null");

  args.options = &options_;
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = a;
  EXPECT_PJRT_OK(api_->PJRT_Buffer_Delete(&del));
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][0] has been deleted or donated; "
            "only a live buffer is accepted");
  EXPECT_EQ(out0[0], nullptr);  // Nothing is written on error.
  DestroyBuffer(a);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, DonationHonoursNonDonatableIndices) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram, "donate=1");
  PJRT_Buffer* a = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  PJRT_Buffer* b = MakeF32Buffer(client_, devices_[0], {3, 4, 5}, {3});
  PJRT_Buffer* args0[] = {a, b};
  std::vector<PJRT_Buffer* const*> lists = {args0};
  PJRT_Buffer* out0[2] = {nullptr, nullptr};
  std::vector<PJRT_Buffer**> outputs = {out0};
  const int64_t keep[] = {1};
  options_.non_donatable_input_indices = keep;
  options_.num_non_donatable_input_indices = 1;
  auto args = ExecuteArgs(loaded, lists, 2, outputs);
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(Fake(client_)->last_non_donatable(), (std::vector<int64_t>{1}));
  EXPECT_TRUE(IsDeleted(a));
  EXPECT_FALSE(IsDeleted(b));
  EXPECT_EQ(ToHostF32(out0[0]), (std::vector<float>{1, 2}));
  for (PJRT_Buffer* buffer : {a, b, out0[0], out0[1]}) DestroyBuffer(buffer);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, ExecutableOutlivesItsLoadedExecutable) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram, "name=survivor");
  PJRT_Executable* exe = GetExecutable(loaded);
  DestroyLoaded(loaded);
  auto name = MakeArgs<PJRT_Executable_Name_Args>();
  name.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(Str(name.executable_name, name.executable_name_size), "survivor");
  auto fp = MakeArgs<PJRT_Executable_Fingerprint_Args>();
  fp.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Fingerprint(&fp));
  EXPECT_GT(fp.executable_fingerprint_size, 0u);
  DestroyExecutable(exe);
}

TEST_F(ExecutableTest, DeletedLoadedExecutableCannotRun) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[1]");
  auto del = MakeArgs<PJRT_LoadedExecutable_Delete_Args>();
  del.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Delete(&del));
  auto is = MakeArgs<PJRT_LoadedExecutable_IsDeleted_Args>();
  is.executable = loaded;
  EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_IsDeleted(&is));
  EXPECT_TRUE(is.is_deleted);
  PJRT_Buffer* x = MakeF32Buffer(client_, devices_[0], {1}, {1});
  PJRT_Buffer* l0[] = {x};
  std::vector<PJRT_Buffer* const*> lists = {l0};
  PJRT_Buffer* o0[1] = {nullptr};
  std::vector<PJRT_Buffer**> outputs = {o0};
  auto args = ExecuteArgs(loaded, lists, 1, outputs);
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: executable has been deleted; only an executable that "
            "was not deleted is accepted");
  DestroyBuffer(x);
  DestroyLoaded(loaded);
}

TEST_F(ExecutableTest, SerializeAndDeserializeAndLoad) {
  PJRT_LoadedExecutable* loaded = Compile(client_, kProgram, "name=orig");
  PJRT_Executable* exe = GetExecutable(loaded);
  auto ser = MakeArgs<PJRT_Executable_Serialize_Args>();
  ser.executable = exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Serialize(&ser));
  const std::string bytes = Str(ser.serialized_bytes, ser.serialized_bytes_size);
  EXPECT_EQ(bytes, "FAKEEXE1\nmlir\nname=orig\nf32[2] f32[3]");
  ser.serialized_executable_deleter(ser.serialized_executable);

  // An older caller without the override fields.
  auto old = MakeArgs<PJRT_Executable_DeserializeAndLoad_Args>(
      PJRTKIT_ARGS_SIZE(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable));
  old.client = client_;
  old.serialized_executable = bytes.data();
  old.serialized_executable_size = bytes.size();
  EXPECT_PJRT_OK(api_->PJRT_Executable_DeserializeAndLoad(&old));
  PJRT_Executable* old_exe = GetExecutable(old.loaded_executable);
  auto name = MakeArgs<PJRT_Executable_Name_Args>();
  name.executable = old_exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(Str(name.executable_name, name.executable_name_size), "orig");

  const std::string override_options = "name=renamed";
  auto args = MakeArgs<PJRT_Executable_DeserializeAndLoad_Args>();
  args.client = client_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  args.overridden_serialized_compile_options = override_options.data();
  args.overridden_serialized_compile_options_size = override_options.size();
  EXPECT_PJRT_OK(api_->PJRT_Executable_DeserializeAndLoad(&args));
  PJRT_Executable* new_exe = GetExecutable(args.loaded_executable);
  name.executable = new_exe;
  EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(Str(name.executable_name, name.executable_name_size), "renamed");

  const std::string garbage = "nope";
  args.serialized_executable = garbage.data();
  args.serialized_executable_size = garbage.size();
  EXPECT_EQ(Consume(api_->PJRT_Executable_DeserializeAndLoad(&args)).message,
            "fake: not a serialized FakeExecutable");
  for (PJRT_Executable* e : {exe, old_exe, new_exe}) DestroyExecutable(e);
  DestroyLoaded(loaded);
  DestroyLoaded(old.loaded_executable);
  DestroyLoaded(args.loaded_executable);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
