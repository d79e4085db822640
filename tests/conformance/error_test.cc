// PJRT_Error_*: message, code, destroy; struct_size checking.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class ErrorTest : public ClientTestBase {
 protected:
  // A fresh error from the plugin: looking up device id -1.
  PJRT_Error* MakeError() {
    PJRT_ARGS(PJRT_Client_LookupDevice_Args, args);
    args.client = client();
    args.id = -1;
    return api()->PJRT_Client_LookupDevice(&args);
  }

  std::string Message(const PJRT_Error* error, const char** pointer = nullptr) {
    PJRT_ARGS(PJRT_Error_Message_Args, args);
    args.error = error;
    api()->PJRT_Error_Message(&args);
    if (pointer != nullptr) *pointer = args.message;
    return Str(args.message, args.message_size);
  }

  void Destroy(PJRT_Error* error) {
    PJRT_ARGS(PJRT_Error_Destroy_Args, args);
    args.error = error;
    api()->PJRT_Error_Destroy(&args);
  }
};

TEST_F(ErrorTest, ErrorHasAValidCodeAndAMessage) {
  PJRT_Error* error = MakeError();
  ASSERT_NE(error, nullptr) << "looking up device -1 must fail";
  PJRT_ARGS(PJRT_Error_GetCode_Args, args);
  args.error = error;
  const Status code_status = PJRT_CALL(api()->PJRT_Error_GetCode(&args));
  EXPECT_TRUE(code_status.ok()) << "PJRT_Error_GetCode itself failed: " << code_status;
  EXPECT_GT(args.code, PJRT_Error_Code_OK);
  EXPECT_LE(args.code, PJRT_Error_Code_UNAUTHENTICATED);
  EXPECT_FALSE(Message(error).empty());
  Destroy(error);
}

TEST_F(ErrorTest, MessageIsStableWhileTheErrorLives) {
  PJRT_Error* error = MakeError();
  ASSERT_NE(error, nullptr);
  const char* first_pointer = nullptr;
  const char* second_pointer = nullptr;
  const std::string first = Message(error, &first_pointer);
  const std::string second = Message(error, &second_pointer);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first_pointer, second_pointer) << "the message is owned by the error";
  Destroy(error);
}

TEST_F(ErrorTest, ErrorsAreIndependent) {
  PJRT_Error* first = MakeError();
  PJRT_Error* second = MakeError();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  const std::string expected = Message(second);
  Destroy(first);
  EXPECT_EQ(Message(second), expected) << "destroying one error changed another";
  Destroy(second);
}

TEST_F(ErrorTest, TakeErrorReportsTheSameCodeAsGetCode) {
  PJRT_Error* error = MakeError();
  ASSERT_NE(error, nullptr);
  PJRT_ARGS(PJRT_Error_GetCode_Args, args);
  args.error = error;
  ASSERT_EQ(api()->PJRT_Error_GetCode(&args), nullptr);
  const PJRT_Error_Code code = args.code;
  const Status status = TakeError(api(), error);  // Destroys it.
  EXPECT_EQ(status.code, code);
}

TEST_F(ErrorTest, TooSmallStructSizeIsRejected) {
  PJRT_ARGS(PJRT_Client_PlatformName_Args, args);
  args.client = client();
  // Claims the caller's struct ends before `client`: the plugin must not read past it.
  args.struct_size = offsetof(PJRT_Client_PlatformName_Args, client);
  const Status status = PJRT_CALL(api()->PJRT_Client_PlatformName(&args));
  PJRT_SKIP_IF_KNOWN_DEVIATION("struct_size_unchecked", status.ok(),
                               "a too-small struct_size was accepted");
  PJRT_ASSERT_ERROR(status);
}

TEST_F(ErrorTest, LargerStructSizeFromANewerCallerIsAccepted) {
  // A caller built against a newer header passes a bigger struct; `>=` checks accept it.
  struct NewerArgs {
    PJRT_Client_ProcessIndex_Args args;
    int64_t field_from_the_future;
  } newer;
  std::memset(&newer, 0, sizeof(newer));
  newer.args.struct_size = sizeof(newer);
  newer.args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_ProcessIndex(&newer.args)));
  EXPECT_EQ(newer.args.process_index, traits().process_index);
}

}  // namespace
}  // namespace pjrt_conformance
