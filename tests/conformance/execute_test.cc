// PJRT_LoadedExecutable_Execute: values, devices, replication, donation, bad arguments.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class ExecuteTest : public ClientTestBase {
 protected:
  void SetUp() override {
    ClientTestBase::SetUp();
    if (HasFatalFailure()) return;
    PJRT_REQUIRE_COMPILER();
    PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &add_one_));
    PJRT_ASSERT_OK(Upload(input_, FirstDevice(), &arg_));
  }

  Status Upload(const std::vector<float>& values, PJRT_Device* device, BufferPtr* out) {
    return FromVector(values, PJRT_Buffer_Type_F32, {static_cast<int64_t>(values.size())},
                      device, out);
  }

  // Expects `buffer` to hold input_ + `offset`.
  void ExpectInputPlus(PJRT_Buffer* buffer, float offset) {
    std::vector<float> result;
    PJRT_ASSERT_OK(ReadVector(buffer, &result));
    std::vector<float> expected = input_;
    for (float& value : expected) value += offset;
    EXPECT_EQ(result, expected);
  }

  const std::vector<float> input_ = {0.5f, -1.0f, 2.0f, 41.0f};  // f32[4].
  LoadedExecutablePtr add_one_;                                 // kAddOneF32.
  BufferPtr arg_;                                               // input_ on device 0.
};

TEST_F(ExecuteTest, AddOneOnOneDevice) {
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &outputs));
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), 1u);
  ExpectInputPlus(outputs[0][0].get(), 1.0f);
  PJRT_Device* device = nullptr;
  PJRT_ASSERT_OK(BufferDevice(outputs[0][0].get(), &device));
  EXPECT_EQ(device, FirstDevice());
}

TEST_F(ExecuteTest, OutputHasTheProgramsTypeAndShape) {
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &outputs));
  PJRT_ARGS(PJRT_Buffer_ElementType_Args, type);
  type.buffer = outputs[0][0].get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ElementType(&type)));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_F32);
  PJRT_ARGS(PJRT_Buffer_Dimensions_Args, dims);
  dims.buffer = outputs[0][0].get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_Dimensions(&dims)));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims),
            (std::vector<int64_t>{4}));
}

TEST_F(ExecuteTest, ExecuteDeviceMayNameTheCompiledDevice) {
  PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, devices);
  devices.executable = add_one_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_AddressableDevices(&devices)));
  ASSERT_EQ(devices.num_addressable_devices, 1u);
  PJRT_Device* device = devices.addressable_devices[0];
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &outputs, nullptr, device));
  ExpectInputPlus(outputs[0][0].get(), 1.0f);
}

TEST_F(ExecuteTest, PortableExecutableRunsOnEachDevice) {
  LoadedExecutablePtr portable;
  PJRT_SKIP_IF_UNIMPLEMENTED(CompileMlir(kAddOneF32, &portable, CompileOptionsPortable()),
                             "compile_portable_executable");
  for (PJRT_Device* device : AddressableDevices()) {
    BufferPtr arg;
    PJRT_ASSERT_OK(Upload(input_, device, &arg));
    std::vector<std::vector<BufferPtr>> outputs;
    PJRT_ASSERT_OK(Execute(portable.get(), {{arg.get()}}, &outputs, nullptr, device));
    ExpectInputPlus(outputs[0][0].get(), 1.0f);
    PJRT_Device* placed = nullptr;
    PJRT_ASSERT_OK(BufferDevice(outputs[0][0].get(), &placed));
    EXPECT_EQ(placed, device) << "device " << DeviceId(device);
  }
}

TEST_F(ExecuteTest, ReplicatedOnTwoDevicesSeesReplicaIds) {
  if (AddressableDevices().size() < 2) GTEST_SKIP() << "needs 2 addressable devices";
  LoadedExecutablePtr replicated;
  PJRT_ASSERT_OK(CompileMlir(kAddReplicaId, &replicated, CompileOptions2x1()));
  PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, devices);
  devices.executable = replicated.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_AddressableDevices(&devices)));
  ASSERT_EQ(devices.num_addressable_devices, 2u);
  std::vector<BufferPtr> args(2);
  for (int r = 0; r < 2; ++r) {
    PJRT_ASSERT_OK(Upload(input_, devices.addressable_devices[r], &args[r]));
  }
  std::vector<std::vector<BufferPtr>> outputs;
  std::vector<EventPtr> events;
  PJRT_ASSERT_OK(Execute(replicated.get(), {{args[0].get()}, {args[1].get()}}, &outputs, &events));
  ASSERT_EQ(outputs.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(outputs[r].size(), 1u);
    ExpectInputPlus(outputs[r][0].get(), static_cast<float>(r));
    PJRT_Device* placed = nullptr;
    PJRT_ASSERT_OK(BufferDevice(outputs[r][0].get(), &placed));
    EXPECT_EQ(placed, devices.addressable_devices[r]) << "replica " << r;
    if (events[r]) PJRT_EXPECT_OK(Await(events[r].get()));
  }
}

TEST_F(ExecuteTest, SeveralArgumentsAndOutputs) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(CompileMlir(kThreeOutputs, &executable));
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  const std::vector<int32_t> n = {2147483, -5, 0};
  BufferPtr x_buffer;
  BufferPtr n_buffer;
  PJRT_ASSERT_OK(FromVector(x, PJRT_Buffer_Type_F32, {2, 3}, FirstDevice(), &x_buffer));
  PJRT_ASSERT_OK(FromVector(n, PJRT_Buffer_Type_S32, {3}, FirstDevice(), &n_buffer));
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_OK(Execute(executable.get(), {{x_buffer.get(), n_buffer.get()}}, &outputs));
  ASSERT_EQ(outputs[0].size(), 3u);
  std::vector<float> squares;
  std::vector<int32_t> doubled;
  std::vector<float> transposed;
  PJRT_ASSERT_OK(ReadVector(outputs[0][0].get(), &squares));
  PJRT_ASSERT_OK(ReadVector(outputs[0][1].get(), &doubled));
  PJRT_ASSERT_OK(ReadVector(outputs[0][2].get(), &transposed));
  EXPECT_EQ(squares, (std::vector<float>{1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(doubled, (std::vector<int32_t>{4294966, -10, 0}));
  EXPECT_EQ(transposed, (std::vector<float>{1, -4, -2, 5, 3, -6}));
}

TEST_F(ExecuteTest, DonatedInputIsDeletedAfterExecute) {
  LoadedExecutablePtr donating;
  PJRT_ASSERT_OK(CompileMlir(kAddOneDonated, &donating));
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_OK(Execute(donating.get(), {{arg_.get()}}, &outputs));
  ExpectInputPlus(outputs[0][0].get(), 1.0f);
  bool deleted = false;
  PJRT_ASSERT_OK(IsDeleted(arg_.get(), &deleted));
  EXPECT_TRUE(deleted) << "a donated argument must be consumed";
  std::vector<char> bytes;
  PJRT_ASSERT_ERROR(ToHost(arg_.get(), &bytes));
}

TEST_F(ExecuteTest, NonDonatableIndicesKeepTheInput) {
  LoadedExecutablePtr donating;
  PJRT_ASSERT_OK(CompileMlir(kAddOneDonated, &donating));
  const int64_t keep[] = {0};
  PJRT_Buffer* const args[] = {arg_.get()};
  PJRT_Buffer* const* arg_lists[] = {args};
  PJRT_Buffer* out[1] = {nullptr};
  PJRT_Buffer** out_lists[] = {out};
  PJRT_ARGS(PJRT_ExecuteOptions, options);
  options.non_donatable_input_indices = keep;
  options.num_non_donatable_input_indices = 1;
  PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args, exec);
  exec.executable = donating.get();
  exec.options = &options;
  exec.argument_lists = arg_lists;
  exec.num_devices = 1;
  exec.num_args = 1;
  exec.output_lists = out_lists;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_Execute(&exec)));
  BufferPtr output(api(), out[0]);
  ExpectInputPlus(output.get(), 1.0f);
  bool deleted = true;
  PJRT_ASSERT_OK(IsDeleted(arg_.get(), &deleted));
  EXPECT_FALSE(deleted);
  ExpectInputPlus(arg_.get(), 0.0f);
}

TEST_F(ExecuteTest, TooFewArgumentsIsAnError) {
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_ERROR(Execute(add_one_.get(), {{}}, &outputs));
}

TEST_F(ExecuteTest, TooManyArgumentsIsAnError) {
  BufferPtr extra;
  PJRT_ASSERT_OK(Upload(input_, FirstDevice(), &extra));
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_ERROR(Execute(add_one_.get(), {{arg_.get(), extra.get()}}, &outputs));
}

TEST_F(ExecuteTest, WrongElementTypeIsAnError) {
  const std::vector<int32_t> ints = {1, 2, 3, 4};
  BufferPtr wrong;
  PJRT_ASSERT_OK(FromVector(ints, PJRT_Buffer_Type_S32, {4}, FirstDevice(), &wrong));
  std::vector<std::vector<BufferPtr>> outputs;
  const Status status = Execute(add_one_.get(), {{wrong.get()}}, &outputs);
  PJRT_SKIP_IF_KNOWN_DEVIATION("execute_checks_only_byte_size", status.ok(),
                               "s32[4] was accepted for an f32[4] parameter");
  PJRT_ASSERT_ERROR(status);
}

TEST_F(ExecuteTest, WrongDimensionsWithTheSameSizeIsAnError) {
  BufferPtr wrong;
  const std::vector<float> values = {1, 2, 3, 4};
  PJRT_ASSERT_OK(FromVector(values, PJRT_Buffer_Type_F32, {2, 2}, FirstDevice(), &wrong));
  std::vector<std::vector<BufferPtr>> outputs;
  const Status status = Execute(add_one_.get(), {{wrong.get()}}, &outputs);
  PJRT_SKIP_IF_KNOWN_DEVIATION("execute_checks_only_byte_size", status.ok(),
                               "f32[2,2] was accepted for an f32[4] parameter");
  PJRT_ASSERT_ERROR(status);
}

TEST_F(ExecuteTest, WrongShapeIsAnError) {
  BufferPtr wrong;
  PJRT_ASSERT_OK(Upload({1, 2, 3, 4, 5}, FirstDevice(), &wrong));
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_ERROR(Execute(add_one_.get(), {{wrong.get()}}, &outputs));
}

TEST_F(ExecuteTest, DeletedArgumentIsAnError) {
  PJRT_ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = arg_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_Delete(&del)));
  std::vector<std::vector<BufferPtr>> outputs;
  const Status status = Execute(add_one_.get(), {{arg_.get()}}, &outputs);
  if (status.ok()) {
    // Reported asynchronously instead: the output must carry the error.
    ASSERT_EQ(outputs[0].size(), 1u);
    PJRT_ASSERT_ERROR(AwaitReady(outputs[0][0].get()));
  } else {
    EXPECT_FALSE(status.message.empty());
  }
}

TEST_F(ExecuteTest, CompletionEventsBecomeReady) {
  std::vector<std::vector<BufferPtr>> outputs;
  std::vector<EventPtr> events;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &outputs, &events));
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(events[0]) << "device_complete_events was requested but not filled";
  PJRT_ASSERT_OK(Await(events[0].get()));
  EXPECT_TRUE(IsReady(events[0].get()));
  ExpectInputPlus(outputs[0][0].get(), 1.0f);
}

TEST_F(ExecuteTest, RepeatedExecutionGivesTheSameResult) {
  for (int i = 0; i < 3; ++i) {
    std::vector<std::vector<BufferPtr>> outputs;
    PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &outputs));
    ExpectInputPlus(outputs[0][0].get(), 1.0f);
  }
  ExpectInputPlus(arg_.get(), 0.0f);  // Not donated: the input is unchanged.
}

TEST_F(ExecuteTest, OutputFeedsTheNextExecution) {
  std::vector<std::vector<BufferPtr>> first;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{arg_.get()}}, &first));
  std::vector<std::vector<BufferPtr>> second;
  PJRT_ASSERT_OK(Execute(add_one_.get(), {{first[0][0].get()}}, &second));
  first.clear();  // The first output may die before the second result is read.
  ExpectInputPlus(second[0][0].get(), 2.0f);
}

TEST_F(ExecuteTest, ExecuteContextOrUnimplemented) {
  PJRT_REQUIRE_SLOT(PJRT_ExecuteContext_Create);
  PJRT_ARGS(PJRT_ExecuteContext_Create_Args, create);
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_ExecuteContext_Create(&create)),
                             "PJRT_ExecuteContext_Create");
  ExecuteContextPtr context(api(), create.context);
  ASSERT_TRUE(context);
  PJRT_Buffer* const args[] = {arg_.get()};
  PJRT_Buffer* const* arg_lists[] = {args};
  PJRT_Buffer* out[1] = {nullptr};
  PJRT_Buffer** out_lists[] = {out};
  PJRT_ARGS(PJRT_ExecuteOptions, options);
  options.context = context.get();
  PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args, exec);
  exec.executable = add_one_.get();
  exec.options = &options;
  exec.argument_lists = arg_lists;
  exec.num_devices = 1;
  exec.num_args = 1;
  exec.output_lists = out_lists;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_Execute(&exec)));
  BufferPtr output(api(), out[0]);
  ExpectInputPlus(output.get(), 1.0f);
}

TEST_F(ExecuteTest, ExecutingADeletedExecutableIsAnError) {
  PJRT_ARGS(PJRT_LoadedExecutable_Delete_Args, del);
  del.executable = add_one_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_Delete(&del)));
  PJRT_ARGS(PJRT_LoadedExecutable_IsDeleted_Args, deleted);
  deleted.executable = add_one_.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_LoadedExecutable_IsDeleted(&deleted)));
  // Only a plugin that tracks deletion can be expected to refuse; Execute on a deleted
  // executable is otherwise outside the contract, so it is not attempted.
  PJRT_SKIP_IF_KNOWN_DEVIATION("executable_delete_is_noop", !deleted.is_deleted,
                               "PJRT_LoadedExecutable_Delete leaves IsDeleted false");
  ASSERT_TRUE(deleted.is_deleted) << "the header: IsDeleted is true iff Delete was called";
  std::vector<std::vector<BufferPtr>> outputs;
  PJRT_ASSERT_ERROR(Execute(add_one_.get(), {{arg_.get()}}, &outputs));
}

}  // namespace
}  // namespace pjrt_conformance
