// pjrtkit's own PJRT extension: executables loaded under a thread's binding pass its FFI user
// data to every execution (xla_plugin/c_api/executable_binding.h).

// C++ standard library.
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/ffi_extension.h"
#include "xla_plugin/abi/pjrtkit_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

constexpr int64_t kType = (int64_t{1} << 44) + 11;  // Any nonzero FFI type id.

class ExecutableBindingTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    const PJRT_Extension_Base* ext = api_->extension_start;
    // pjrtkit's type is outside PJRT_Extension_Type: read it as an int (UBSan).
    while (ext != nullptr && RawEnumValue(ext->type) != abi::kPjrtkitExtensionType) ext = ext->next;
    ASSERT_NE(ext, nullptr);
    extension_ = reinterpret_cast<const abi::PjrtkitExtension*>(ext);
  }

  // Sets this thread's binding; returns the replaced one (fails the test on error).
  abi::BindExecutablesArgs Bind(int64_t type_id, void* data) {
    abi::BindExecutablesArgs args{};
    args.struct_size = abi::kBindExecutablesArgsSize;
    args.type_id = type_id;
    args.data = data;
    EXPECT_PJRT_OK(extension_->bind_executables(&args));
    return args;
  }

  // Runs identity program "f32[2]" `loaded` on device 0 with `context` (may be null).
  ErrorInfo Run(PJRT_LoadedExecutable* loaded, PJRT_ExecuteContext* context = nullptr) {
    PJRT_Buffer* arg = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
    PJRT_Buffer* const list[] = {arg};
    PJRT_Buffer* const* lists[] = {list};
    PJRT_Buffer* out[1] = {nullptr};
    PJRT_Buffer** out_lists[] = {out};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    options.context = context;
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = out_lists;
    ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_Execute(&args));
    if (info.ok) {
      EXPECT_EQ(ToHostF32(out[0]), (std::vector<float>{1, 2}));
      DestroyBuffer(out[0]);
    }
    DestroyBuffer(arg);
    return info;
  }

  // The entries of the last execution's context.
  std::map<int64_t, void*> LastUserData() { return Fake(client_)->last_user_data(); }

  const abi::PjrtkitExtension* extension_ = nullptr;
};

TEST_F(ExecutableBindingTest, IsChainedAfterFfiAndLayoutsBeforeShardings) {
  const PJRT_Extension_Base* ffi = api_->extension_start;
  ASSERT_NE(ffi, nullptr);
  EXPECT_EQ(ffi->type, PJRT_Extension_Type_FFI);
  const PJRT_Extension_Base* layouts = ffi->next;
  ASSERT_NE(layouts, nullptr);
  EXPECT_EQ(layouts->type, PJRT_Extension_Type_Layouts);
  ASSERT_EQ(layouts->next, &extension_->base);
  EXPECT_EQ(extension_->base.struct_size, abi::kPjrtkitExtensionSize);
  // Then Shardings, from the client layer (the fake device has no inner plugin), last.
  ASSERT_NE(extension_->base.next, nullptr);
  EXPECT_EQ(extension_->base.next->type, PJRT_Extension_Type_Shardings);
  EXPECT_EQ(extension_->base.next->next, nullptr);
}

TEST_F(ExecutableBindingTest, ChecksItsArguments) {
  ErrorInfo null_args = Consume(extension_->bind_executables(nullptr));
  EXPECT_EQ(null_args.code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::BindExecutablesArgs args{};
  args.struct_size = abi::kBindExecutablesArgsSize - 1;
  ErrorInfo small = Consume(extension_->bind_executables(&args));
  EXPECT_EQ(small.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(small.message.find("PJRT_Pjrtkit_BindExecutables"), std::string::npos);
  args.struct_size = abi::kBindExecutablesArgsSize;
  args.type_id = -3;
  ErrorInfo negative = Consume(extension_->bind_executables(&args));
  EXPECT_EQ(negative.message,
            "PJRT_Pjrtkit_BindExecutables: args->type_id is -3 (not an FFI type id)");
}

TEST_F(ExecutableBindingTest, ExecutablesLoadedUnderABindingPassItsEntry) {
  int tag = 0;
  abi::BindExecutablesArgs first = Bind(kType, &tag);
  EXPECT_EQ(first.previous_type_id, 0);
  EXPECT_EQ(first.previous_bound, 0u);
  PJRT_LoadedExecutable* bound = Compile(client_, "f32[2]");
  PJRT_LoadedExecutable* also_bound = Compile(client_, "f32[2]");
  abi::BindExecutablesArgs ended = Bind(0, nullptr);
  EXPECT_EQ(ended.previous_type_id, kType);
  EXPECT_EQ(ended.previous_data, &tag);
  EXPECT_EQ(ended.previous_bound, 2u);
  PJRT_LoadedExecutable* unbound = Compile(client_, "f32[2]");
  EXPECT_EQ(Bind(0, nullptr).previous_bound, 0u);  // Nothing counts without a binding.

  ASSERT_TRUE(Run(bound).ok);
  EXPECT_EQ(LastUserData(), (std::map<int64_t, void*>{{kType, &tag}}));
  ASSERT_TRUE(Run(also_bound).ok);
  EXPECT_EQ(LastUserData(), (std::map<int64_t, void*>{{kType, &tag}}));
  ASSERT_TRUE(Run(unbound).ok);
  EXPECT_EQ(Fake(client_)->last_context(), nullptr);  // Unbound: no context, as before.
  for (PJRT_LoadedExecutable* e : {bound, also_bound, unbound}) DestroyLoaded(e);
}

TEST_F(ExecutableBindingTest, TheEntryIsMergedWithTheCallersContext) {
  int tag = 0;
  int theirs = 0;
  Bind(kType, &tag);
  PJRT_LoadedExecutable* bound = Compile(client_, "f32[2]");
  Bind(0, nullptr);
  auto create = MakeArgs<PJRT_ExecuteContext_Create_Args>();
  ASSERT_PJRT_OK(api_->PJRT_ExecuteContext_Create(&create));
  PJRT_ExecuteContext* context = create.context;
  ASSERT_TRUE(Run(bound, context).ok);  // An empty context: the bound one is used.
  EXPECT_EQ(LastUserData(), (std::map<int64_t, void*>{{kType, &tag}}));
  ASSERT_TRUE(context->context->AddUserData(7, &theirs).ok());
  ASSERT_TRUE(Run(bound, context).ok);
  EXPECT_EQ(LastUserData(), (std::map<int64_t, void*>{{7, &theirs}, {kType, &tag}}));
  EXPECT_EQ(context->context->user_data().size(), 1u);  // The caller's context is unchanged.

  auto clash = MakeArgs<PJRT_ExecuteContext_Create_Args>();
  ASSERT_PJRT_OK(api_->PJRT_ExecuteContext_Create(&clash));
  ASSERT_TRUE(clash.context->context->AddUserData(kType, &theirs).ok());
  ErrorInfo info = Run(bound, clash.context);
  EXPECT_EQ(info.code, PJRT_Error_Code_ALREADY_EXISTS);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: the execute context has user data of FFI type id " +
                std::to_string(kType) + ", which this executable already passes (bound at load)");
  for (PJRT_ExecuteContext* c : {context, clash.context}) {
    auto destroy = MakeArgs<PJRT_ExecuteContext_Destroy_Args>();
    destroy.context = c;
    EXPECT_PJRT_OK(api_->PJRT_ExecuteContext_Destroy(&destroy));
  }
  DestroyLoaded(bound);
}

TEST_F(ExecutableBindingTest, DeserializedExecutablesAreBoundToo) {
  PJRT_LoadedExecutable* compiled = Compile(client_, "f32[2]");
  PJRT_Executable* exe = GetExecutable(compiled);
  auto ser = MakeArgs<PJRT_Executable_Serialize_Args>();
  ser.executable = exe;
  ASSERT_PJRT_OK(api_->PJRT_Executable_Serialize(&ser));
  const std::string bytes(ser.serialized_bytes, ser.serialized_bytes_size);
  ser.serialized_executable_deleter(ser.serialized_executable);
  int tag = 0;
  Bind(kType, &tag);
  auto args = MakeArgs<PJRT_Executable_DeserializeAndLoad_Args>();
  args.client = client_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  ASSERT_PJRT_OK(api_->PJRT_Executable_DeserializeAndLoad(&args));
  EXPECT_EQ(Bind(0, nullptr).previous_bound, 1u);
  ASSERT_TRUE(Run(args.loaded_executable).ok);
  EXPECT_EQ(LastUserData(), (std::map<int64_t, void*>{{kType, &tag}}));
  ASSERT_TRUE(Run(compiled).ok);  // Compiled before the binding: unbound.
  EXPECT_EQ(Fake(client_)->last_context(), nullptr);
  DestroyExecutable(exe);
  DestroyLoaded(args.loaded_executable);
  DestroyLoaded(compiled);
}

TEST_F(ExecutableBindingTest, TheBindingBelongsToItsThread) {
  int tag = 0;
  Bind(kType, &tag);
  PJRT_LoadedExecutable* other = nullptr;
  size_t other_thread_bound = 99;
  std::thread thread([&] {
    other = Compile(client_, "f32[2]");
    abi::BindExecutablesArgs args{};
    args.struct_size = abi::kBindExecutablesArgsSize;
    EXPECT_PJRT_OK(extension_->bind_executables(&args));
    EXPECT_EQ(args.previous_type_id, 0);
    other_thread_bound = args.previous_bound;
  });
  thread.join();
  EXPECT_EQ(other_thread_bound, 0u);
  EXPECT_EQ(Bind(0, nullptr).previous_bound, 0u);  // This thread loaded nothing.
  ASSERT_TRUE(Run(other).ok);
  EXPECT_EQ(Fake(client_)->last_context(), nullptr);
  DestroyLoaded(other);
}

// host_buffer_pool, the extension's second entry: the fake device has no pool, so every count is
// zero; what a real pool reports is checked end to end by //tests/jax:host_buffer_pool_test.
TEST_F(ExecutableBindingTest, HostBufferPoolChecksItsArgumentsAndCountsClients) {
  ASSERT_NE(extension_->host_buffer_pool, nullptr);
  ErrorInfo null_args = Consume(extension_->host_buffer_pool(nullptr));
  EXPECT_EQ(null_args.code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::HostBufferPoolArgs args{};
  args.struct_size = abi::kHostBufferPoolArgsSize - 1;
  ErrorInfo small = Consume(extension_->host_buffer_pool(&args));
  EXPECT_EQ(small.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(small.message.find("PJRT_Pjrtkit_HostBufferPool"), std::string::npos);

  args.struct_size = abi::kHostBufferPoolArgsSize;
  args.client = client_;
  args.trim = 1;
  args.held_bytes = 99;  // Outputs are overwritten.
  ASSERT_TRUE(Consume(extension_->host_buffer_pool(&args)).ok);
  EXPECT_EQ(args.clients, 1u);
  EXPECT_EQ(args.trimmed_bytes, 0u);
  EXPECT_EQ(args.held_bytes, 0u);
  EXPECT_EQ(args.limit_bytes, 0u);

  args.client = nullptr;  // Every live client of the process: this test's one.
  ASSERT_TRUE(Consume(extension_->host_buffer_pool(&args)).ok);
  EXPECT_EQ(args.clients, 1u);
  EXPECT_EQ(args.in_use_bytes, 0u);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
