#include "xla_plugin/client/status.h"

#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  PJRTKIT_ASSIGN_OR_RETURN(int half, Half(x));
  PJRTKIT_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

TEST(StatusTest, CodesNamesAndText) {
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_EQ(OkStatus().ToString(), "OK");
  Status s = Unimplemented("no");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(static_cast<int>(s.code()), 12);
  EXPECT_EQ(s.ToString(), "UNIMPLEMENTED: no");
  EXPECT_EQ(Status(StatusCode::kOk, "dropped").message(), "");
  EXPECT_STREQ(StatusCodeName(StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 3");
}

TEST(StatusTest, CopiesAreIndependentAndMovesLeaveOk) {
  Status error = NotFound("gone");
  error.SetPayload("k", "v1");
  Status copy = error;
  copy.SetPayload("k", "v2");
  copy.SetPayload("k2", "w");
  ASSERT_EQ(error.payloads().size(), 1u);
  EXPECT_EQ(error.payloads()[0].second, "v1");
  ASSERT_EQ(copy.payloads().size(), 2u);
  EXPECT_EQ(copy.payloads()[0].second, "v2");
  EXPECT_EQ(copy.ToString(), "NOT_FOUND: gone");

  Status assigned;
  assigned = copy;
  EXPECT_EQ(assigned.code(), StatusCode::kNotFound);
  assigned = OkStatus();
  EXPECT_TRUE(assigned.ok());
  EXPECT_EQ(assigned.message(), "");
  EXPECT_TRUE(assigned.payloads().empty());

  Status moved = std::move(error);
  EXPECT_EQ(moved.message(), "gone");
  EXPECT_TRUE(error.ok());  // NOLINT(bugprone-use-after-move): the documented moved-from state.

  Status ok = OkStatus();
  ok.SetPayload("k", "v");  // No-op on OK.
  EXPECT_TRUE(ok.payloads().empty());
  EXPECT_EQ(Status(StatusCode::kOk, "dropped").code(), StatusCode::kOk);
}

TEST(StatusOrTest, OkStatusIsTurnedIntoInternal) {
  StatusOr<int> bad = OkStatus();
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, MoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(7);
  ASSERT_TRUE(v.ok());
  std::unique_ptr<int> p = std::move(v).value();
  EXPECT_EQ(*p, 7);
}

}  // namespace
}  // namespace pjrtkit
