// pjrtkit's PJRT FFI extension through the PJRT_Api of the fake device: where it is, what its
// entry points check, and that registrations made before PJRT_Client_Create reach the client.
// The registry behind it is process-wide, so every test uses its own target and type names.

// C++ standard library.
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/ffi_extension.h"
#include "xla_plugin/c_api/ffi_registry.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

int fake_handler = 0;  // Its address is the "handler" (never called by the fake device).

// The FFI extension in the chain of `api`, or nullptr.
const abi::FfiExtension* FindFfi(const PJRT_Api* api) {
  for (const PJRT_Extension_Base* ext = api->extension_start; ext != nullptr; ext = ext->next) {
    if (ext->type == PJRT_Extension_Type_FFI) {
      return reinterpret_cast<const abi::FfiExtension*>(ext);
    }
  }
  return nullptr;
}

abi::FfiRegisterHandlerArgs HandlerArgs(const char* name, const char* platform = "pjrtkit") {
  abi::FfiRegisterHandlerArgs args{};
  args.struct_size = abi::kFfiRegisterHandlerArgsSize;
  args.target_name = name;
  args.target_name_size = std::strlen(name);
  args.handler = &fake_handler;
  args.platform_name = platform;
  args.platform_name_size = std::strlen(platform);
  return args;
}

abi::FfiTypeRegisterArgs TypeArgs(const char* name, int64_t id = 0) {
  abi::FfiTypeRegisterArgs args{};
  args.struct_size = abi::kFfiTypeRegisterArgsSize;
  args.type_name = name;
  args.type_name_size = std::strlen(name);
  args.type_id = id;
  return args;
}

class FfiExtensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = Api();
    ffi_ = FindFfi(api_);
    ASSERT_NE(ffi_, nullptr);
  }
  const PJRT_Api* api_ = nullptr;
  const abi::FfiExtension* ffi_ = nullptr;
};

TEST_F(FfiExtensionTest, IsInTheChainWithPjrt081Layout) {
  EXPECT_EQ(ffi_->base.type, PJRT_Extension_Type_FFI);
  EXPECT_EQ(ffi_->base.struct_size, 48u);
  EXPECT_NE(ffi_->type_register, nullptr);
  EXPECT_NE(ffi_->user_data_add, nullptr);
  EXPECT_NE(ffi_->register_handler, nullptr);
}

TEST_F(FfiExtensionTest, EntryPointsCheckTheirArgs) {
  ErrorInfo info = Consume(ffi_->register_handler(nullptr), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::FfiRegisterHandlerArgs small = HandlerArgs("ext_small");
  small.struct_size = abi::kFfiRegisterHandlerArgsSize - 1;
  info = Consume(ffi_->register_handler(&small), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("PJRT_FFI_Register_Handler"), std::string::npos) << info.message;
  EXPECT_NE(info.message.find("struct_size is 51, expected at least 52"), std::string::npos)
      << info.message;

  abi::FfiRegisterHandlerArgs no_handler = HandlerArgs("ext_no_handler");
  no_handler.handler = nullptr;
  info = Consume(ffi_->register_handler(&no_handler), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_FFI_Register_Handler: args->handler is null");
  abi::FfiRegisterHandlerArgs no_name = HandlerArgs("");
  info = Consume(ffi_->register_handler(&no_name), api_);
  EXPECT_EQ(info.message, "PJRT_FFI_Register_Handler: args->target_name is empty");
  abi::FfiRegisterHandlerArgs no_platform = HandlerArgs("ext_no_platform", "");
  info = Consume(ffi_->register_handler(&no_platform), api_);
  EXPECT_EQ(info.message, "PJRT_FFI_Register_Handler: args->platform_name is empty");

  EXPECT_EQ(Consume(ffi_->type_register(nullptr), api_).code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::FfiTypeRegisterArgs type = TypeArgs("ext_small_type");
  type.struct_size = 40;
  EXPECT_EQ(Consume(ffi_->type_register(&type), api_).code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::FfiTypeRegisterArgs unnamed = TypeArgs("");
  EXPECT_EQ(Consume(ffi_->type_register(&unnamed), api_).message,
            "PJRT_FFI_Type_Register: args->type_name is empty");

  EXPECT_EQ(Consume(ffi_->user_data_add(nullptr), api_).code, PJRT_Error_Code_INVALID_ARGUMENT);
  abi::FfiUserDataAddArgs data{};
  data.struct_size = abi::kFfiUserDataAddArgsSize;
  info = Consume(ffi_->user_data_add(&data), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_FFI_UserData_Add: args->context is null");
}

TEST_F(FfiExtensionTest, HandlersRegisteredBeforeTheClientAreReplayedAtCreate) {
  abi::FfiRegisterHandlerArgs args = HandlerArgs("ext_before_client");
  args.traits = abi::kFfiTraitCommandBufferCompatible;
  ASSERT_PJRT_OK(ffi_->register_handler(&args));
  abi::FfiTypeRegisterArgs type = TypeArgs("ext_before_client_type");
  ASSERT_PJRT_OK(ffi_->type_register(&type));
  EXPECT_GE(type.type_id, FfiRegistry::kFirstTypeId);

  PJRT_Client* client = CreateClient();
  ASSERT_NE(client, nullptr);
  bool found_handler = false;
  for (const FfiHandlerRegistration& r : Fake(client)->ffi_handlers()) {
    if (r.target_name != "ext_before_client") continue;
    found_handler = true;
    EXPECT_EQ(r.platform_name, "pjrtkit");
    EXPECT_EQ(r.handler, &fake_handler);
    EXPECT_EQ(r.traits, abi::kFfiTraitCommandBufferCompatible);
  }
  EXPECT_TRUE(found_handler);
  bool found_type = false;
  for (const FfiTypeRegistration& r : Fake(client)->ffi_types()) {
    if (r.type_name == "ext_before_client_type") {
      found_type = true;
      EXPECT_EQ(r.type_id, type.type_id);
    }
  }
  EXPECT_TRUE(found_type);

  // After creation: forwarded at once; a conflicting handler is ALREADY_EXISTS.
  abi::FfiRegisterHandlerArgs live = HandlerArgs("ext_after_client");
  ASSERT_PJRT_OK(ffi_->register_handler(&live));
  EXPECT_EQ(Fake(client)->ffi_handlers().back().target_name, "ext_after_client");
  int other = 0;
  live.handler = &other;
  ErrorInfo info = Consume(ffi_->register_handler(&live), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_ALREADY_EXISTS);
  EXPECT_EQ(info.message,
            "PJRT_FFI_Register_Handler: FFI handler 'ext_after_client' (platform 'pjrtkit') is "
            "already registered with a different handler");
  // A refusal of the live client is returned to the caller.
  abi::FfiRegisterHandlerArgs refused = HandlerArgs("refuse_ext");
  info = Consume(ffi_->register_handler(&refused), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("fake: refusing FFI handler 'refuse_ext'"), std::string::npos);
  DestroyClient(client);
}

TEST_F(FfiExtensionTest, TypeRegisterReturnsTheSameIdForTheSameName) {
  abi::FfiTypeRegisterArgs first = TypeArgs("ext_same_type");
  ASSERT_PJRT_OK(ffi_->type_register(&first));
  abi::FfiTypeRegisterArgs again = TypeArgs("ext_same_type");
  ASSERT_PJRT_OK(ffi_->type_register(&again));
  EXPECT_EQ(again.type_id, first.type_id);
  abi::FfiTypeRegisterArgs conflict = TypeArgs("ext_same_type", first.type_id + 1000);
  ErrorInfo info = Consume(ffi_->type_register(&conflict), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("PJRT_FFI_Type_Register: FFI type 'ext_same_type'"),
            std::string::npos)
      << info.message;
}

TEST_F(FfiExtensionTest, UserDataGoesIntoTheExecuteContext) {
  auto create = MakeArgs<PJRT_ExecuteContext_Create_Args>();
  ASSERT_PJRT_OK(api_->PJRT_ExecuteContext_Create(&create));
  int payload = 7;
  abi::FfiUserDataAddArgs args{};
  args.struct_size = abi::kFfiUserDataAddArgsSize;
  args.context = create.context;
  args.user_data.type_id = 1234;
  args.user_data.data = &payload;
  ASSERT_PJRT_OK(ffi_->user_data_add(&args));
  EXPECT_EQ(create.context->context->GetUserData(1234), &payload);
  ErrorInfo info = Consume(ffi_->user_data_add(&args), api_);
  EXPECT_EQ(info.code, PJRT_Error_Code_ALREADY_EXISTS);
  args.user_data.type_id = 0;
  info = Consume(ffi_->user_data_add(&args), api_);
  EXPECT_EQ(info.message, "PJRT_FFI_UserData_Add: args->user_data.type_id is 0 (not a type id)");
  auto destroy = MakeArgs<PJRT_ExecuteContext_Destroy_Args>();
  destroy.context = create.context;
  EXPECT_PJRT_OK(api_->PJRT_ExecuteContext_Destroy(&destroy));
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
