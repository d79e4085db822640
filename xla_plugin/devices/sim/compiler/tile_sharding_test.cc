// TileSharding: HloSharding device orders to per-device coordinates and back, groups for
// collectives, validity.
#include "xla_plugin/devices/sim/compiler/tile_sharding.h"

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TileSharding FromText(const std::string& text, int rank) {
  StatusOr<ShardingSpec> spec = ParseSharding(text);
  EXPECT_TRUE(spec.ok()) << text;
  StatusOr<TileSharding> tiling = TileSharding::FromSpec(*spec, rank, 4);
  EXPECT_TRUE(tiling.ok()) << text << ": " << tiling.status().ToString();
  return *tiling;
}

TEST(TileShardingTest, CoordinatesFollowTheTileAssignment) {
  const TileSharding rows = FromText("{devices=[4,1]<=[4]}", 2);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(rows.coords(k), (std::vector<int64_t>{k, 0}));
  // <=[2,2]T(1,0) lists devices 0,2,1,3: tile (0,1) is on device 2.
  const TileSharding transposed = FromText("{devices=[2,2]<=[2,2]T(1,0)}", 2);
  EXPECT_EQ(transposed.coords(2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(transposed.coords(1), (std::vector<int64_t>{1, 0}));
  const TileSharding replicated_pairs = FromText("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 2);
  EXPECT_EQ(replicated_pairs.coords(1), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(replicated_pairs.coords(2), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(FromText("{replicated}", 3).IsReplicated());
  EXPECT_EQ(*rows.PieceDims({8, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(rows.PieceDims({6, 3}).ok());
}

TEST(TileShardingTest, SpecRoundTripsWithExplicitDevices) {
  for (const char* text : {"{devices=[4,1]<=[4]}", "{devices=[2,2]<=[2,2]T(1,0)}",
                           "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}) {
    const TileSharding tiling = FromText(text, 2);
    StatusOr<TileSharding> again = TileSharding::FromSpec(tiling.ToSpec(), 2, 4);
    ASSERT_TRUE(again.ok()) << text;
    EXPECT_EQ(*again, tiling) << text;
  }
  EXPECT_EQ(FromText("{devices=[2,2]<=[2,2]T(1,0)}", 2).ToSpec().devices,
            (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(TileShardingTest, GroupsAlongADimensionHoldOneDevicePerCoordinate) {
  const TileSharding grid = FromText("{devices=[2,2]<=[4]}", 2);
  EXPECT_EQ(grid.GroupsAlong({0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(grid.GroupsAlong({1}), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(grid.GroupsAlong({0, 1}), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  // With copies: two groups, each with one holder of each piece.
  const TileSharding pairs = FromText("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 2);
  EXPECT_EQ(pairs.GroupsAlong({0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_TRUE(grid.Whole({0, 1}).IsReplicated());
  EXPECT_EQ(grid.Whole({1}).tiles(), (std::vector<int64_t>{2, 1}));
}

TEST(TileShardingTest, PiecesMustBeHeldEquallyOften) {
  EXPECT_FALSE(TileSharding::Make({2}, {{0}, {0}, {0}, {1}}).ok());
  EXPECT_FALSE(TileSharding::Make({3}, {{0}, {1}, {2}, {0}}).ok());
  EXPECT_FALSE(TileSharding::Make({2}, {{0}, {2}, {1}, {1}}).ok());
  EXPECT_TRUE(TileSharding::Make({2}, {{1}, {0}, {0}, {1}}).ok());
  EXPECT_FALSE(TileSharding::FromSpec(ShardingSpec{ShardingSpec::Kind::kManual}, 1, 4).ok());
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
