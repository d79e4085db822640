#include "xla_plugin/devices/sim/array_layout.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TEST(ArrayLayoutTest, ShapeStrings) {
  EXPECT_EQ(ShapeString(ElementType::kF32, {2, 3}), "f32[2,3]");
  EXPECT_EQ(ShapeString(ElementType::kPred, {}), "pred[]");
  EXPECT_EQ(ShapeString(ElementType::kBF16, {0}), "bf16[0]");
}

TEST(ArrayLayoutTest, DenseBytesOfEveryStorableType) {
  const std::vector<std::pair<ElementType, int64_t>> sizes = {
      {ElementType::kPred, 1},       {ElementType::kS8, 1},
      {ElementType::kS16, 2},        {ElementType::kS32, 4},
      {ElementType::kS64, 8},        {ElementType::kU8, 1},
      {ElementType::kU16, 2},        {ElementType::kU32, 4},
      {ElementType::kU64, 8},        {ElementType::kF16, 2},
      {ElementType::kF32, 4},        {ElementType::kF64, 8},
      {ElementType::kBF16, 2},       {ElementType::kC64, 8},
      {ElementType::kC128, 16},      {ElementType::kF8E5M2, 1},
      {ElementType::kF8E4M3FN, 1},   {ElementType::kF8E4M3B11FNUZ, 1},
      {ElementType::kF8E5M2FNUZ, 1}, {ElementType::kF8E4M3FNUZ, 1},
      {ElementType::kF8E4M3, 1},     {ElementType::kF8E3M4, 1},
      {ElementType::kF8E8M0FNU, 1},
  };
  for (const auto& [type, size] : sizes) {
    StatusOr<int64_t> bytes = DenseBytes(type, {2, 3}, "test");
    ASSERT_TRUE(bytes.ok()) << ElementTypeName(type) << ": " << bytes.status().ToString();
    EXPECT_EQ(*bytes, 6 * size) << ElementTypeName(type);
  }
}

TEST(ArrayLayoutTest, SubByteTypesTakeOneBytePerElement) {
  for (ElementType type :
       {ElementType::kS1, ElementType::kU1, ElementType::kS2, ElementType::kU2, ElementType::kS4,
        ElementType::kU4, ElementType::kF4E2M1FN, ElementType::kF6E2M3FN, ElementType::kF6E3M2FN}) {
    EXPECT_EQ(StoredElementBytes(type), 1) << ElementTypeName(type);
    EXPECT_EQ(*DenseBytes(type, {4, 3}, "t"), 12) << ElementTypeName(type);
  }
}

TEST(ArrayLayoutTest, TokensAndInvalidTypesAreUnimplementedNamingTheType) {
  for (ElementType type : {ElementType::kToken, ElementType::kInvalid}) {
    StatusOr<int64_t> bytes = DenseBytes(type, {4}, "PJRT_Client_BufferFromHostBuffer");
    ASSERT_FALSE(bytes.ok()) << ElementTypeName(type);
    EXPECT_EQ(bytes.status().code(), StatusCode::kUnimplemented);
    EXPECT_EQ(bytes.status().message().find(std::string("PJRT_Client_BufferFromHostBuffer: "
                                                        "element type ") +
                                            ElementTypeName(type) + " has no data"),
              0u)
        << bytes.status().message();
  }
}

TEST(ArrayLayoutTest, DenseBytesEdgeCases) {
  EXPECT_EQ(*DenseBytes(ElementType::kF32, {}, "t"), 4);
  EXPECT_EQ(*DenseBytes(ElementType::kF32, {0, 1 << 30}, "t"), 0);
  EXPECT_EQ(DenseBytes(ElementType::kF32, {-1}, "t").status().code(), StatusCode::kInvalidArgument);
  StatusOr<int64_t> huge = DenseBytes(ElementType::kF64, {int64_t{1} << 31, int64_t{1} << 31}, "t");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("more than 2^63 - 1 bytes"), std::string::npos);
}

TEST(ArrayLayoutTest, RowMajorStridesAndDensity) {
  EXPECT_EQ(RowMajorByteStrides(4, {2, 3, 5}), (std::vector<int64_t>{60, 20, 4}));
  EXPECT_TRUE(IsDenseRowMajor(4, {2, 3}, {12, 4}));
  EXPECT_FALSE(IsDenseRowMajor(4, {2, 3}, {4, 8}));
  EXPECT_TRUE(IsDenseRowMajor(4, {1, 3}, {999, 4})) << "size-1 dimensions do not matter";
  EXPECT_TRUE(IsDenseRowMajor(4, {0, 3}, {1, 1})) << "nothing to address";
  EXPECT_FALSE(IsDenseRowMajor(4, {2, 3}, {16, 4})) << "padded rows";
}

TEST(ArrayLayoutTest, HostLayoutStrides) {
  MemoryLayout column_major;
  column_major.minor_to_major = {0, 1};
  EXPECT_EQ(*HostLayoutByteStrides(ElementType::kF32, {2, 3}, column_major, "t"),
            (std::vector<int64_t>{4, 8}));
  MemoryLayout tiled;
  tiled.minor_to_major = {1, 0};
  tiled.tiles = {{8, 128}};
  EXPECT_EQ(HostLayoutByteStrides(ElementType::kF32, {2, 3}, tiled, "t").status().code(),
            StatusCode::kUnimplemented);
  MemoryLayout packed;
  packed.minor_to_major = {0};
  packed.element_size_in_bits = 4;
  EXPECT_EQ(HostLayoutByteStrides(ElementType::kS8, {4}, packed, "t").status().code(),
            StatusCode::kUnimplemented);
  MemoryLayout bad;
  bad.minor_to_major = {0, 0};
  EXPECT_EQ(HostLayoutByteStrides(ElementType::kF32, {2, 3}, bad, "t").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ArrayLayoutTest, DeviceLayoutsMustStoreRowMajor) {
  MemoryLayout row_major;
  row_major.minor_to_major = {1, 0};
  EXPECT_TRUE(CheckDeviceLayout(row_major, ElementType::kF32, {2, 3}, "t").ok());
  MemoryLayout column_major;
  column_major.minor_to_major = {0, 1};
  const Status refused = CheckDeviceLayout(column_major, ElementType::kF32, {2, 3}, "t");
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(refused.message(),
            "t: the sim device keeps arrays dense row-major; the layout {0,1} of f32[2,3] is not "
            "supported");
  EXPECT_TRUE(CheckDeviceLayout(column_major, ElementType::kF32, {1, 3}, "t").ok())
      << "the same element order when a dimension has size 1";
}

TEST(ArrayLayoutTest, StridedCopiesTransposeReverseAndBroadcast) {
  // A 2x3 int32 array (r, c) -> 10 * r + c.
  const std::vector<int32_t> row_major = {0, 1, 2, 10, 11, 12};
  // Column-major source.
  const std::vector<int32_t> column_major = {0, 10, 1, 11, 2, 12};
  std::vector<int32_t> out(6, -1);
  CopyStridedToDense(4, {2, 3}, reinterpret_cast<const uint8_t*>(column_major.data()), {4, 8},
                     reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, row_major);
  // Rows reversed: negative stride from the last row.
  std::fill(out.begin(), out.end(), -1);
  CopyStridedToDense(4, {2, 3}, reinterpret_cast<const uint8_t*>(row_major.data() + 3), {-12, 4},
                     reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{10, 11, 12, 0, 1, 2}));
  // One row broadcast (stride 0).
  std::fill(out.begin(), out.end(), -1);
  CopyStridedToDense(4, {2, 3}, reinterpret_cast<const uint8_t*>(row_major.data()), {0, 4},
                     reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  // Dense to column-major and back.
  std::vector<int32_t> transposed(6, -1);
  CopyDenseToStrided(4, {2, 3}, reinterpret_cast<const uint8_t*>(row_major.data()),
                     reinterpret_cast<uint8_t*>(transposed.data()), {4, 8});
  EXPECT_EQ(transposed, column_major);
}

TEST(ArrayLayoutTest, StridedCopiesOfScalarsEmptyArraysAndRankFour) {
  const int64_t scalar = 42;
  int64_t copied = 0;
  CopyStridedToDense(8, {}, reinterpret_cast<const uint8_t*>(&scalar), {},
                     reinterpret_cast<uint8_t*>(&copied));
  EXPECT_EQ(copied, 42);
  uint8_t untouched = 7;
  CopyStridedToDense(1, {0, 5}, nullptr, {5, 1}, &untouched);
  EXPECT_EQ(untouched, 7);
  // Rank 4, padded innermost rows (stride 8 elements for 5 used): gathers exactly the used ones.
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  std::vector<int16_t> padded(2 * 3 * 4 * 8, -1);
  std::vector<int16_t> expected;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) {
        for (int d = 0; d < 5; ++d) {
          const int16_t value = static_cast<int16_t>(1000 * a + 100 * b + 10 * c + d);
          padded[((a * 3 + b) * 4 + c) * 8 + d] = value;
          expected.push_back(value);
        }
      }
    }
  }
  std::vector<int16_t> out(expected.size(), -2);
  CopyStridedToDense(2, dims, reinterpret_cast<const uint8_t*>(padded.data()),
                     {3 * 4 * 8 * 2, 4 * 8 * 2, 8 * 2, 2}, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, expected);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
