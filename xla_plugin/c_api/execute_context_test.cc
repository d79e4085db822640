// PJRT_ExecuteContext_Create / _Destroy and the context passed in PJRT_ExecuteOptions.

// C++ standard library.
#include <cstddef>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

class ExecuteContextTest : public ClientTest {
 protected:
  // Runs the identity program "f32[2]" on device 0 with `options`; returns the Execute error.
  ErrorInfo Run(PJRT_ExecuteOptions* options) {
    PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]");
    PJRT_Buffer* arg = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
    PJRT_Buffer* const list[] = {arg};
    PJRT_Buffer* const* lists[] = {list};
    PJRT_Buffer* out[1] = {nullptr};
    PJRT_Buffer** out_lists[] = {out};
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = options;
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
    DestroyLoaded(loaded);
    return info;
  }

  // A new context; fails the test on error.
  PJRT_ExecuteContext* NewContext() {
    auto create = MakeArgs<PJRT_ExecuteContext_Create_Args>();
    EXPECT_PJRT_OK(api_->PJRT_ExecuteContext_Create(&create));
    EXPECT_NE(create.context, nullptr);
    return create.context;
  }

  void Destroy(PJRT_ExecuteContext* context) {
    auto destroy = MakeArgs<PJRT_ExecuteContext_Destroy_Args>();
    destroy.context = context;
    EXPECT_PJRT_OK(api_->PJRT_ExecuteContext_Destroy(&destroy));
  }
};

TEST_F(ExecuteContextTest, TheContextReachesTheDevice) {
  PJRT_ExecuteContext* context = NewContext();
  ASSERT_NE(context, nullptr);
  const ExecuteContext* cpp_context = context->context.get();
  ASSERT_NE(cpp_context, nullptr);
  EXPECT_TRUE(cpp_context->empty());
  auto options = MakeArgs<PJRT_ExecuteOptions>();
  options.context = context;
  ASSERT_TRUE(Run(&options).ok);
  EXPECT_EQ(Fake(client_)->last_context(), cpp_context);
  // Without a context the device gets none.
  options.context = nullptr;
  ASSERT_TRUE(Run(&options).ok);
  EXPECT_EQ(Fake(client_)->last_context(), nullptr);
  // An older caller whose options end before `context`: the field is not read.
  options.context = context;
  options.struct_size = offsetof(PJRT_ExecuteOptions, context);
  ASSERT_TRUE(Run(&options).ok);
  EXPECT_EQ(Fake(client_)->last_context(), nullptr);
  Destroy(context);
}

TEST_F(ExecuteContextTest, UserDataIsKeptByTypeId) {
  PJRT_ExecuteContext* context = NewContext();
  ASSERT_NE(context, nullptr);
  int value = 7;
  ExecuteContext& cpp_context = *context->context;
  EXPECT_TRUE(cpp_context.AddUserData(3, &value).ok());
  EXPECT_EQ(cpp_context.GetUserData(3), &value);
  EXPECT_EQ(cpp_context.GetUserData(4), nullptr);
  const Status again = cpp_context.AddUserData(3, nullptr);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "ExecuteContext: user data of type id 3 was already added");
  EXPECT_EQ(cpp_context.user_data().size(), 1u);
  Destroy(context);
}

TEST_F(ExecuteContextTest, DestroyNullIsFineAndSmallStructsAreRejected) {
  Destroy(nullptr);
  auto create = MakeArgs<PJRT_ExecuteContext_Create_Args>(8);
  ErrorInfo info = Consume(api_->PJRT_ExecuteContext_Create(&create));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(create.context, nullptr);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
