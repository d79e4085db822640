// The xla::Layout text form: exact strings as xla::Layout::ToString() prints them, and back.
#include "xla_plugin/client/layout_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

MemoryLayout Layout(std::vector<int64_t> m2m, std::vector<std::vector<int64_t>> tiles = {},
                    int64_t element_size_in_bits = 0) {
  MemoryLayout layout;
  layout.minor_to_major = std::move(m2m);
  layout.tiles = std::move(tiles);
  layout.element_size_in_bits = element_size_in_bits;
  return layout;
}

TEST(LayoutCodecTest, RowMajor) {
  EXPECT_EQ(RowMajorLayout(0).minor_to_major, std::vector<int64_t>{});
  EXPECT_EQ(RowMajorLayout(3).minor_to_major, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_TRUE(RowMajorLayout(3).tiles.empty());
  EXPECT_EQ(RowMajorLayout(3).element_size_in_bits, 0);
}

// The strings XLA:CPU's own Layouts extension serializes (xla_cpu inner_layouts_test compares
// them with the real plugin) and the forms xla::Layout::Print writes for tiles and sizes.
TEST(LayoutCodecTest, EncodesXlaSyntax) {
  EXPECT_EQ(EncodeXlaLayout(Layout({})), "{}");
  EXPECT_EQ(EncodeXlaLayout(Layout({0})), "{0}");
  EXPECT_EQ(EncodeXlaLayout(Layout({1, 0})), "{1,0}");
  EXPECT_EQ(EncodeXlaLayout(Layout({0, 1})), "{0,1}");
  EXPECT_EQ(EncodeXlaLayout(Layout({0, 2, 1})), "{0,2,1}");
  EXPECT_EQ(EncodeXlaLayout(Layout({0}, {}, 4)), "{0:E(4)}");
  EXPECT_EQ(EncodeXlaLayout(Layout({1, 0}, {{8, 128}})), "{1,0:T(8,128)}");
  EXPECT_EQ(EncodeXlaLayout(Layout({1, 0}, {{8, 128}, {2, 1}}, 4)), "{1,0:T(8,128)(2,1)E(4)}");
}

TEST(LayoutCodecTest, DecodesWhatItEncodes) {
  for (const MemoryLayout& layout :
       {Layout({}), Layout({1, 0}), Layout({0, 1}), Layout({0}, {}, 2), Layout({2, 0, 1}),
        Layout({1, 0}, {{8, 128}, {2, 1}}, 4), Layout({0}, {{128}})}) {
    const std::string text = EncodeXlaLayout(layout);
    StatusOr<MemoryLayout> back = DecodeXlaLayout(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status().ToString();
    EXPECT_EQ(back->minor_to_major, layout.minor_to_major) << text;
    EXPECT_EQ(back->tiles, layout.tiles) << text;
    EXPECT_EQ(back->element_size_in_bits, layout.element_size_in_bits) << text;
  }
}

TEST(LayoutCodecTest, DropsTheMemorySpace) {
  StatusOr<MemoryLayout> layout = DecodeXlaLayout("{1,0:S(5)}");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(EncodeXlaLayout(*layout), "{1,0}");
}

TEST(LayoutCodecTest, RejectsWhatItCannotRepresent) {
  StatusOr<MemoryLayout> padded = DecodeXlaLayout("{1,0:L(2)}");
  EXPECT_EQ(padded.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(padded.status().message(),
            "xla::Layout text '{1,0:L(2)}': the attribute at 'L(2)}' is not supported by pjrtkit "
            "(accepted: T(...) tiles, E(n), S(n))");
  StatusOr<MemoryLayout> bad = DecodeXlaLayout("{1,x}");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "xla::Layout text '{1,x}': expected a number at offset 3");
  EXPECT_EQ(DecodeXlaLayout("1,0").status().message(),
            "xla::Layout text '1,0': expected '{' at offset 0");
  EXPECT_EQ(DecodeXlaLayout("{1,0}x").status().message(),
            "xla::Layout text '{1,0}x': unexpected text after '}' at offset 5");
  EXPECT_EQ(DecodeXlaLayout("{1,0:T(8,128}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeXlaLayout("").status().code(), StatusCode::kInvalidArgument);
}

TEST(LayoutCodecTest, ChecksLayoutsAgainstTheRank) {
  EXPECT_TRUE(CheckMemoryLayout(Layout({1, 0}), 2).ok());
  EXPECT_TRUE(CheckMemoryLayout(Layout({}), 0).ok());
  EXPECT_TRUE(CheckMemoryLayout(Layout({1, 0}, {{8, 128}}, 4), 2).ok());
  EXPECT_EQ(CheckMemoryLayout(Layout({0, 0}), 2).message(),
            "layout minor_to_major {0,0} is not a permutation of 2 dimensions");
  EXPECT_EQ(CheckMemoryLayout(Layout({0}), 2).message(),
            "layout minor_to_major {0} is not a permutation of 2 dimensions");
  EXPECT_EQ(CheckMemoryLayout(Layout({1, 0}, {{8, 0}}), 2).message(),
            "layout tile 0 (8,0) must have 1..2 positive dimensions");
  EXPECT_EQ(CheckMemoryLayout(Layout({0}, {{2, 2}}), 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckMemoryLayout(Layout({0}, {}, -1), 1).message(),
            "layout element_size_in_bits is -1, accepted: 0..64");
}

TEST(LayoutCodecTest, SameElementOrderIgnoresUnitDimensions) {
  EXPECT_TRUE(SameElementOrder(Layout({1, 0}), Layout({1, 0}), {3, 4}));
  EXPECT_FALSE(SameElementOrder(Layout({1, 0}), Layout({0, 1}), {3, 4}));
  EXPECT_TRUE(SameElementOrder(Layout({1, 0}), Layout({0, 1}), {1, 4}));
  EXPECT_TRUE(SameElementOrder(Layout({2, 1, 0}), Layout({2, 0, 1}), {5, 1, 3}));
  EXPECT_FALSE(SameElementOrder(Layout({2, 1, 0}), Layout({1, 0, 2}), {5, 1, 3}));
  EXPECT_TRUE(SameElementOrder(Layout({1, 0}), Layout({0, 1}), {0, 4}));
  EXPECT_FALSE(SameElementOrder(Layout({0}, {}, 4), Layout({0}), {8}));
  EXPECT_FALSE(SameElementOrder(Layout({1, 0}, {{8}}), Layout({0, 1}, {{8}}), {1, 4}));
}

}  // namespace
}  // namespace pjrtkit
