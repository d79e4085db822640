// The shape checks every layer uses: one wording each, naming the entry point and the parameter.
#include "xla_plugin/client/shape_checks.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

TEST(ShapeChecksTest, ANegativeDimensionIsNamedByIndex) {
  const std::vector<int64_t> dims = {2, 0, -3, -1};
  const Status status = CheckDimensions("PJRT_Client_BufferFromHostBuffer", "args->dims", dims);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "PJRT_Client_BufferFromHostBuffer: args->dims[2] is -3; dimensions must be >= 0");
  EXPECT_TRUE(CheckDimensions("f", "dims", {2, 0, 5}).ok());
  EXPECT_TRUE(CheckDimensions("f", "dims", nullptr, 0).ok());
  EXPECT_EQ(CheckDimensions("f", "shape_specs[1].dims", dims.data() + 3, 1).message(),
            "f: shape_specs[1].dims[0] is -1; dimensions must be >= 0");
}

TEST(ShapeChecksTest, ShapesNeedAKnownTypeNonNegativeDimensionsAndFewerThan2To63Bytes) {
  EXPECT_TRUE(CheckShape("BufferFromHostBuffer", ElementType::kF32, {4, 0}).ok());
  EXPECT_EQ(CheckShape("BufferFromHostBuffer", ElementType::kInvalid, {4}).message(),
            "BufferFromHostBuffer: invalid element type 0");
  EXPECT_EQ(CheckShape("BufferFromHostBuffer", static_cast<ElementType>(kMaxElementType + 1), {})
                .message(),
            "BufferFromHostBuffer: invalid element type " + std::to_string(kMaxElementType + 1));
  EXPECT_EQ(CheckShape("BufferFromHostBuffer", ElementType::kF32, {4, -2}).message(),
            "BufferFromHostBuffer: dims[1] is -2; dimensions must be >= 0");
  // 2^61 f32 elements are 2^63 bytes: one byte too many; 2^61 bytes of s8 fit.
  EXPECT_EQ(CheckShape("f", ElementType::kF32, {int64_t{1} << 31, int64_t{1} << 30}).message(),
            "f: the dimensions [2147483648,1073741824] make an array of more than 2^63 bytes");
  EXPECT_TRUE(CheckShape("f", ElementType::kS8, {int64_t{1} << 61}).ok());
  EXPECT_EQ(DimensionsText({}), "[]");
  EXPECT_EQ(DimensionsText({2, 3}), "[2,3]");
}

}  // namespace
}  // namespace pjrtkit
