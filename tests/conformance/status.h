// Turning PJRT_Error* into a value the tests can print and compare.
#ifndef PJRTKIT_TESTS_CONFORMANCE_STATUS_H_
#define PJRTKIT_TESTS_CONFORMANCE_STATUS_H_

#include <cstring>
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {

// The outcome of one PJRT call: OK, or an error code with the plugin's message.
struct Status {
  PJRT_Error_Code code = PJRT_Error_Code_OK;  // OK when the call succeeded.
  std::string message;                        // The plugin's text, if any.

  // True when the call returned no error.
  bool ok() const { return code == PJRT_Error_Code_OK; }
  // True when the plugin said it does not implement the call.
  bool unimplemented() const { return code == PJRT_Error_Code_UNIMPLEMENTED; }
};

// Reads code and message out of `error` with `api`, then destroys it. NULL is OK.
Status TakeError(const PJRT_Api* api, PJRT_Error* error);

// The enum's name, e.g. "INVALID_ARGUMENT".
const char* ErrorCodeName(PJRT_Error_Code code);

// Prints "OK" or "CODE: message".
std::ostream& operator<<(std::ostream& os, const Status& status);

}  // namespace pjrt_conformance

// Declares `var` of the Args type `T`, zeroed, with struct_size set from the header.
#define PJRT_ARGS(T, var)          \
  T var;                           \
  std::memset(&var, 0, sizeof(T)); \
  var.struct_size = T##_STRUCT_SIZE

// Calls one PJRT entry point (an expression returning PJRT_Error*) and converts the result.
#define PJRT_CALL(expr) ::pjrt_conformance::TakeError(api(), (expr))

#define PJRT_ASSERT_OK(expr)                                 \
  do {                                                       \
    const ::pjrt_conformance::Status _st = (expr);           \
    ASSERT_TRUE(_st.ok()) << #expr << " failed: " << _st;    \
  } while (0)

#define PJRT_EXPECT_OK(expr)                                 \
  do {                                                       \
    const ::pjrt_conformance::Status _st = (expr);           \
    EXPECT_TRUE(_st.ok()) << #expr << " failed: " << _st;    \
  } while (0)

// Asserts that a status is an error that says something (code not OK, message not empty).
#define PJRT_ASSERT_ERROR(expr)                                           \
  do {                                                                    \
    const ::pjrt_conformance::Status _st = (expr);                        \
    ASSERT_FALSE(_st.ok()) << #expr << " succeeded but must fail";        \
    EXPECT_FALSE(_st.message.empty()) << #expr << " failed with no text"; \
  } while (0)

// Skips the test when the status is UNIMPLEMENTED, naming what is missing; fails on
// any other error.
#define PJRT_SKIP_IF_UNIMPLEMENTED(status, what)                            \
  do {                                                                      \
    const ::pjrt_conformance::Status& _st = (status);                       \
    if (_st.unimplemented()) {                                              \
      GTEST_SKIP() << what << " is UNIMPLEMENTED in this plugin: "          \
                   << _st.message;                                          \
    }                                                                       \
    ASSERT_TRUE(_st.ok()) << what << " failed: " << _st;                    \
  } while (0)

#endif  // PJRTKIT_TESTS_CONFORMANCE_STATUS_H_
