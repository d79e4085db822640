// InnerFfi against the real XLA:CPU plugin: our ABI declarations match its FFI extension, and a
// typed FFI handler registered through WrappedClient runs in a compiled program.
#include "xla_plugin/plugin_wrapper/inner_ffi.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla/ffi/api/ffi.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

namespace ffi = xla::ffi;

// out[i] = value for every element (a typed FFI handler built with jaxlib's XLA FFI headers).
static ffi::Error FillImpl(float value, ffi::ResultBuffer<ffi::F32> out) {
  for (size_t i = 0; i < out->element_count(); ++i) out->typed_data()[i] = value;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitTestFill, FillImpl,
                              ffi::Ffi::Bind().Attr<float>("value").Ret<ffi::Buffer<ffi::F32>>());

// Answers metadata queries with XLA FFI API 9.0 (a major version no XLA implements).
extern "C" XLA_FFI_Error* PjrtkitTestFutureMajor(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version.major_version = 9;
    ext->metadata->api_version.minor_version = 0;
  }
  return nullptr;
}

// The FFI type of the execute-context user data PjrtkitTestReadUserData reads.
static constexpr int64_t kUserDataType = (int64_t{1} << 44) + 321;

// out[0] = the float that the execution's user data of kUserDataType points to (a raw handler on
// the XLA FFI C ABI that answers the metadata query with the framework's own version).
extern "C" XLA_FFI_Error* PjrtkitTestReadUserData(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version = frame->api->api_version;
    ext->metadata->traits = 0;
    return nullptr;
  }
  XLA_FFI_TypeId type_id{kUserDataType};
  XLA_FFI_InvokeContext_Get_Args args{};
  args.struct_size = XLA_FFI_InvokeContext_Get_Args_STRUCT_SIZE;
  args.ctx = frame->ctx;
  args.type_id = &type_id;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_InvokeContext_Get(&args)) return error;
  auto* out = reinterpret_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  *static_cast<float*>(out->data) = *static_cast<const float*>(args.data);
  return nullptr;
}

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::FfiHandlerShims;
using ::pjrtkit::plugin_wrapper::FfiShimQuery;
using ::pjrtkit::plugin_wrapper::InnerApi;
using ::pjrtkit::plugin_wrapper::InnerFfi;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedClient;
using ::pjrtkit::plugin_wrapper::WrappedExecutable;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;

constexpr char kFillProgram[] = R"(
module @ffi_fill {
  func.func @main() -> tensor<4xf32> {
    %0 = stablehlo.custom_call @pjrtkit_test_fill() {api_version = 4 : i32,
        backend_config = {value = 42.5 : f32}} : () -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})";

// The message of `error` from the inner plugin (destroys it).
std::string InnerMessage(const InnerApi& inner, PJRT_Error* error) {
  return inner.ToStatus(error, "call").message();
}

class InnerFfiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = CreateTestClient(1);
    ASSERT_NE(client_, nullptr);
    xla_cpu_ = static_cast<WrappedClient*>(client_.get());
  }
  std::unique_ptr<Client> client_;
  WrappedClient* xla_cpu_ = nullptr;
};

TEST_F(InnerFfiTest, OurStructSizesAreWhatXlaCpuExpects) {
  StatusOr<InnerFfi> found = InnerFfi::Find(xla_cpu_->shared_inner());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  // XLA:CPU names the size it expects when given a struct that is too small.
  const PJRT_Extension_Base* ext = xla_cpu_->inner().api()->extension_start;
  while (ext != nullptr && ext->type != PJRT_Extension_Type_FFI) ext = ext->next;
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->struct_size, abi::kFfiExtensionSize);
  const auto* inner_ffi = reinterpret_cast<const abi::FfiExtension*>(ext);
  abi::FfiRegisterHandlerArgs handler_args{};
  handler_args.struct_size = 1;
  EXPECT_NE(InnerMessage(xla_cpu_->inner(), inner_ffi->register_handler(&handler_args))
                .find("expected " + std::to_string(abi::kFfiRegisterHandlerArgsSize) + ", got 1"),
            std::string::npos);
  abi::FfiTypeRegisterArgs type_args{};
  type_args.struct_size = 1;
  EXPECT_NE(InnerMessage(xla_cpu_->inner(), inner_ffi->type_register(&type_args))
                .find("expected " + std::to_string(abi::kFfiTypeRegisterArgsSize) + ", got 1"),
            std::string::npos);
  abi::FfiUserDataAddArgs data_args{};
  data_args.struct_size = 1;
  EXPECT_NE(InnerMessage(xla_cpu_->inner(), inner_ffi->user_data_add(&data_args))
                .find("expected " + std::to_string(abi::kFfiUserDataAddArgsSize) + ", got 1"),
            std::string::npos);
}

TEST_F(InnerFfiTest, PlatformNames) {
  const XlaCpuPolicy policy;
  const plugin_wrapper::FfiPlatform& cpu = policy.ffi_platform();
  EXPECT_EQ(*InnerFfi::InnerPlatformName("pjrtkit", cpu), "Host");
  EXPECT_EQ(*InnerFfi::InnerPlatformName("PJRTKIT", cpu), "Host");
  EXPECT_EQ(*InnerFfi::InnerPlatformName("cpu", cpu), "Host");
  EXPECT_EQ(*InnerFfi::InnerPlatformName("Host", cpu), "Host");
  StatusOr<std::string> cuda = InnerFfi::InnerPlatformName("CUDA", cpu);
  EXPECT_EQ(cuda.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda.status().message(),
            "FFI registrations for platform 'CUDA' cannot run on pjrtkit's reference device; use "
            "'pjrtkit' (or 'cpu' / 'host')");
}

TEST_F(InnerFfiTest, ARegisteredHandlerRunsInACompiledProgram) {
  FfiHandlerRegistration registration;
  registration.target_name = "pjrtkit_test_fill";
  registration.platform_name = "pjrtkit";
  registration.handler = reinterpret_cast<void*>(&PjrtkitTestFill);
  ASSERT_TRUE(client_->RegisterFfiHandler(registration).ok());
  // jaxlib's headers are a newer minor FFI version than this XLA:CPU's: the shim downgraded it.
  FfiShimQuery query = FfiHandlerShims::LastQuery(FfiHandlerShims::Wrap(registration.handler));
  ASSERT_TRUE(query.queried);
  EXPECT_EQ(query.handler_major, XLA_FFI_API_MAJOR);
  EXPECT_EQ(query.handler_minor, XLA_FFI_API_MINOR);
  EXPECT_EQ(query.downgraded, query.handler_minor > query.framework_minor);

  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kFillProgram}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 4),
            (std::vector<float>{42.5f, 42.5f, 42.5f, 42.5f}));
}

TEST_F(InnerFfiTest, AnUnknownTargetFailsToCompile) {
  std::string program = kFillProgram;
  program.replace(program.find("pjrtkit_test_fill"), 17, "pjrtkit_test_none");
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", program}, MinimalCompileOptions(1, 1, false));
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("No FFI handler registered for pjrtkit_test_none"),
            std::string::npos)
      << loaded.status().ToString();
}

TEST_F(InnerFfiTest, AnIncompatibleHandlerIsReportedNotDropped) {
  FfiHandlerRegistration registration;
  registration.target_name = "pjrtkit_test_future_major";
  registration.platform_name = "pjrtkit";
  registration.handler = reinterpret_cast<void*>(&PjrtkitTestFutureMajor);
  Status status = client_->RegisterFfiHandler(registration);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("XLA:CPU refused FFI handler 'pjrtkit_test_future_major': it "
                                  "is built against XLA FFI API 9.0, XLA:CPU implements 0."),
            std::string::npos)
      << status.ToString();
}

TEST_F(InnerFfiTest, OtherPlatformsAreInvalid) {
  FfiHandlerRegistration registration;
  registration.target_name = "pjrtkit_test_cuda";
  registration.platform_name = "CUDA";
  registration.handler = reinterpret_cast<void*>(&PjrtkitTestFill);
  EXPECT_EQ(client_->RegisterFfiHandler(registration).code(), StatusCode::kInvalidArgument);
}

TEST_F(InnerFfiTest, TypesAreRegisteredWithTheirIds) {
  FfiTypeRegistration type;
  type.type_name = "pjrtkit_test_type";
  type.type_id = (int64_t{1} << 44) + 77;
  EXPECT_TRUE(client_->RegisterFfiType(type).ok());
  EXPECT_TRUE(client_->RegisterFfiType(type).ok());  // Again, same id: fine.
  type.type_id = 0;
  EXPECT_EQ(client_->RegisterFfiType(type).code(), StatusCode::kInvalidArgument);
}

TEST_F(InnerFfiTest, UserDataGoesIntoAnInnerExecuteContext) {
  StatusOr<InnerFfi> ffi = InnerFfi::Find(xla_cpu_->shared_inner());
  ASSERT_TRUE(ffi.ok());
  PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Create, create);
  ASSERT_TRUE(PJRTKIT_INNER_CALL(xla_cpu_->inner(), PJRT_ExecuteContext_Create, &create).ok());
  int payload = 3;
  EXPECT_TRUE(ffi->AddUserData(create.context, (int64_t{1} << 44) + 5, &payload).ok());
  Status null_context = ffi->AddUserData(nullptr, 1, &payload);
  EXPECT_EQ(null_context.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(null_context.message().find("execute context to be not nullptr"), std::string::npos)
      << null_context.ToString();
  PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Destroy, destroy);
  destroy.context = create.context;
  EXPECT_TRUE(PJRTKIT_INNER_CALL(xla_cpu_->inner(), PJRT_ExecuteContext_Destroy, &destroy).ok());
}

TEST_F(InnerFfiTest, ExecuteContextUserDataReachesTheHandlers) {
  FfiTypeRegistration type;
  type.type_name = "pjrtkit_test_user_data";
  type.type_id = kUserDataType;
  ASSERT_TRUE(client_->RegisterFfiType(type).ok());
  FfiHandlerRegistration registration;
  registration.target_name = "pjrtkit_test_read_user_data";
  registration.platform_name = "pjrtkit";
  registration.handler = reinterpret_cast<void*>(&PjrtkitTestReadUserData);
  ASSERT_TRUE(client_->RegisterFfiHandler(registration).ok());
  constexpr char kProgram[] = R"(
module @read_user_data {
  func.func @main() -> tensor<f32> {
    %0 = stablehlo.custom_call @pjrtkit_test_read_user_data() {api_version = 4 : i32,
        has_side_effect = true} : () -> tensor<f32>
    return %0 : tensor<f32>
  }
})";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kProgram}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();

  for (float value : {1.5f, -4.25f}) {
    ExecuteContext context;  // Lives only during Execute: the device copies its entries.
    ASSERT_TRUE(context.AddUserData(kUserDataType, &value).ok());
    ExecuteOptions options;
    options.context = &context;
    StatusOr<ExecuteResult> result = (*loaded)->Execute({{}}, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(result->completion.empty());  // Not asked for (used inside, for the context).
    EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 1), (std::vector<float>{value}));
  }
  float waited = 8.0f;
  ExecuteContext context;
  ASSERT_TRUE(context.AddUserData(kUserDataType, &waited).ok());
  ExecuteOptions options;
  options.context = &context;
  options.want_completion_events = true;
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{}}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->completion.size(), 1u);
  EXPECT_TRUE(result->completion[0]->Await().ok());
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 1), (std::vector<float>{8.0f}));

  // Without any context XLA:CPU 0.0.1 dereferences a null one in the handler's lookup (the
  // process died here). A program with typed FFI custom calls always runs with one (empty when
  // the caller has no user data), so the lookup fails cleanly and so does the execution.
  auto* executable = static_cast<WrappedExecutable*>((*loaded)->executable().get());
  EXPECT_TRUE(executable->calls_ffi_handlers());
  for (int run = 0; run < 2; ++run) {  // The client's empty context is shared between runs.
    ExecuteContext empty;
    ExecuteOptions no_entries;
    if (run == 1) no_entries.context = &empty;
    StatusOr<ExecuteResult> missing = (*loaded)->Execute({{}}, no_entries);
    Status status = missing.ok() ? missing->outputs[0][0]->ReadyEvent()->Await() : missing.status();
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("XLA:CPU PJRT_LoadedExecutable_Execute"), std::string::npos)
        << status.ToString();
  }
}

TEST_F(InnerFfiTest, ProgramsWithoutFfiCustomCallsRunWithoutAContext) {
  constexpr char kAdd[] = R"(
module @add_one {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %c = stablehlo.constant dense<1.0> : tensor<2xf32>
    %0 = stablehlo.add %a, %c : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(
      static_cast<WrappedExecutable*>((*loaded)->executable().get())->calls_ffi_handlers());
}

// lax.dce_sink(x, prevent_mlir_dce=True) as JAX lowers it: the client registered the built-in
// handler (builtin_ffi_handlers.h) when it was created, so the program compiles and runs.
TEST_F(InnerFfiTest, TheBuiltInDceSinkRuns) {
  constexpr char kDceSink[] = R"(
module @dce_sink {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<2.0> : tensor<4xf32>
    %0 = stablehlo.multiply %a, %c : tensor<4xf32>
    stablehlo.custom_call @dce_sink(%0) {api_version = 4 : i32, has_side_effect = true}
        : (tensor<4xf32>) -> ()
    return %0 : tensor<4xf32>
  }
})";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kDceSink}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::unique_ptr<Buffer> x = testing::Upload(client_.get(), ElementType::kF32,
                                              std::vector<float>{1, 2, 3, 4}, {4},
                                              client_->devices()[0]);
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{x.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 4), (std::vector<float>{2, 4, 6, 8}));

  // Two operands: the handler refuses them, as jaxlib's (bound to one AnyBuffer) does.
  constexpr char kTwoOperands[] = R"(
module @dce_sink_two {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    stablehlo.custom_call @dce_sink(%a, %a) {api_version = 4 : i32, has_side_effect = true}
        : (tensor<4xf32>, tensor<4xf32>) -> ()
    return %a : tensor<4xf32>
  }
})";
  StatusOr<std::unique_ptr<LoadedExecutable>> two =
      client_->Compile(Program{"mlir", kTwoOperands}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  StatusOr<ExecuteResult> refused = (*two)->Execute({{x.get()}}, ExecuteOptions());
  Status status = refused.ok() ? refused->outputs[0][0]->ReadyEvent()->Await() : refused.status();
  EXPECT_NE(status.message().find("dce_sink takes 1 operand and returns nothing; got 2 operand(s) "
                                  "and 0 result(s)"),
            std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
