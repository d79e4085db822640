// The Shardings extension served from the client layer (shardings_extension.h), over the fake
// device (no inner plugin): what a device reports, none, a count that disagrees, bad arguments.
#include "xla_plugin/c_api/shardings_extension.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace {

using ::pjrtkit::capi::test::ClientTest;
using ::pjrtkit::capi::test::Compile;
using ::pjrtkit::capi::test::Consume;
using ::pjrtkit::capi::test::DestroyExecutable;
using ::pjrtkit::capi::test::DestroyLoaded;
using ::pjrtkit::capi::test::ErrorInfo;
using ::pjrtkit::capi::test::GetExecutable;

class ShardingsExtensionTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
      if (e->type == PJRT_Extension_Type_Shardings) {
        ext_ = reinterpret_cast<const PJRT_Shardings_Extension*>(e);
      }
    }
    ASSERT_NE(ext_, nullptr);
  }

  // The executable's output shardings, or "error: <message>".
  std::vector<std::string> Outputs(PJRT_Executable* executable, size_t* count) {
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args args{};
    args.struct_size = PJRT_Shardings_PJRT_Executable_OutputShardings_Args_STRUCT_SIZE;
    args.executable = executable;
    ErrorInfo info = Consume(ext_->PJRT_Shardings_PJRT_Executable_OutputShardings(&args));
    if (!info.ok) return {"error: " + info.message};
    *count = args.num_outputs;
    if (args.shardings == nullptr) {
      EXPECT_EQ(args.sharding_sizes, nullptr);
      return {"none"};
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < args.num_outputs; ++i) {
      out.emplace_back(args.shardings[i], args.sharding_sizes[i]);
    }
    return out;
  }

  const PJRT_Shardings_Extension* ext_ = nullptr;  // Under test.
};

TEST_F(ShardingsExtensionTest, ReportsWhatTheDeviceReportsOwnedByTheExecutable) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s32[3] pred[]", "shardings=reported");
  PJRT_Executable* executable = GetExecutable(loaded);
  size_t count = 0;
  const std::string manual("\x08\x04", 2);
  EXPECT_EQ(Outputs(executable, &count), (std::vector<std::string>{"", manual, ""}));
  EXPECT_EQ(count, 3u);

  PJRT_Shardings_PJRT_Executable_ParameterShardings_Args params{};
  params.struct_size = PJRT_Shardings_PJRT_Executable_ParameterShardings_Args_STRUCT_SIZE;
  params.executable = executable;
  ASSERT_TRUE(Consume(ext_->PJRT_Shardings_PJRT_Executable_ParameterShardings(&params)).ok);
  ASSERT_EQ(params.num_parameters, 3u);
  ASSERT_NE(params.shardings, nullptr);
  EXPECT_EQ(std::string(params.shardings[1], params.sharding_sizes[1]), manual);
  EXPECT_EQ(params.sharding_sizes[0], 0u);
  const char* const* first = params.shardings;
  ASSERT_TRUE(Consume(ext_->PJRT_Shardings_PJRT_Executable_ParameterShardings(&params)).ok);
  EXPECT_EQ(params.shardings, first);  // Cached on the handle.
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(ShardingsExtensionTest, NoneReportedIsNullAsTheHeaderAllows) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s32[3]");
  PJRT_Executable* executable = GetExecutable(loaded);
  size_t count = 7;
  EXPECT_EQ(Outputs(executable, &count), (std::vector<std::string>{"none"}));
  EXPECT_EQ(count, 0u);
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(ShardingsExtensionTest, ADeviceReportingTooFewIsAnInternalError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s32[3]", "shardings=short");
  PJRT_Executable* executable = GetExecutable(loaded);
  size_t count = 0;
  EXPECT_EQ(Outputs(executable, &count),
            (std::vector<std::string>{
                "error: PJRT_Shardings_PJRT_Executable_OutputShardings: the executable reports 1 "
                "output shardings for 2 outputs"}));
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(ShardingsExtensionTest, BadArgumentsNameTheParameter) {
  PJRT_Shardings_PJRT_Executable_OutputShardings_Args args{};
  args.struct_size = PJRT_Shardings_PJRT_Executable_OutputShardings_Args_STRUCT_SIZE;
  ErrorInfo info = Consume(ext_->PJRT_Shardings_PJRT_Executable_OutputShardings(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("args->executable"), std::string::npos) << info.message;
  info = Consume(ext_->PJRT_Shardings_PJRT_Executable_OutputShardings(nullptr));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  args.struct_size = 8;
  info = Consume(ext_->PJRT_Shardings_PJRT_Executable_ParameterShardings(
      reinterpret_cast<PJRT_Shardings_PJRT_Executable_ParameterShardings_Args*>(&args)));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("struct_size"), std::string::npos) << info.message;
}

}  // namespace
}  // namespace capi
}  // namespace pjrtkit
