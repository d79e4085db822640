// Shardy's mesh and sharding text -> TileSharding.
#include "xla_plugin/devices/sim/compiler/sdy_sharding.h"

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TEST(SdyShardingTest, MeshesWithAndWithoutDeviceIds) {
  StatusOr<std::map<std::string, SdyMesh>> meshes = ParseSdyMeshes(
      R"({mesh = #sdy.mesh<["a"=2, "b"=2]>, flipped = #sdy.mesh<["x"=4], device_ids=[3,2,1,0]>, empty_mesh = #sdy.mesh<[]>})");
  ASSERT_TRUE(meshes.ok()) << meshes.status().ToString();
  ASSERT_EQ(meshes->size(), 3u);
  EXPECT_EQ(meshes->at("mesh").axes.size(), 2u);
  EXPECT_EQ(meshes->at("mesh").axes[1], (std::pair<std::string, int64_t>{"b", 2}));
  EXPECT_EQ(meshes->at("flipped").device_ids, (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_FALSE(ParseSdyMeshes("{mesh = #sdy.mesh<[\"a\"]>}").ok());
}

TEST(SdyShardingTest, DimensionsCutByTheirAxesMajorFirst) {
  const std::map<std::string, SdyMesh> meshes =
      *ParseSdyMeshes(R"({mesh = #sdy.mesh<["a"=2, "b"=2]>, flipped = #sdy.mesh<["x"=4], device_ids=[3,2,1,0]>})");
  StatusOr<std::vector<TileSharding>> got = ParseSdyShardings(
      R"(#sdy.sharding_per_value<[<@mesh, [{"b"}, {"a"}]>, <@mesh, [{"b", "a"}, {}]>, <@flipped, [{"x"}]>, <@mesh, [{?}, {}], replicated={"a"}>]>)",
      meshes, {2, 2, 1, 2}, 4);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  // Mesh position (a, b) is device 2a + b.
  EXPECT_EQ((*got)[0].tiles(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*got)[0].coords(1), (std::vector<int64_t>{1, 0}));  // a=0, b=1.
  EXPECT_EQ((*got)[1].tiles(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ((*got)[1].coords(1), (std::vector<int64_t>{2, 0}));  // b major: 2b + a.
  EXPECT_EQ((*got)[2].coords(3), (std::vector<int64_t>{0}));     // device_ids reversed.
  EXPECT_TRUE((*got)[3].IsReplicated());
  // Only the manual axes cut a shard_map's pieces.
  const std::set<std::string> manual = {"a"};
  StatusOr<std::vector<TileSharding>> partial = ParseSdyShardings(
      R"(#sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>)", meshes, {2}, 4, &manual);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ((*partial)[0].tiles(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(*ParseSdyManualAxes(R"(#sdy<manual_axes{"a", "b"}>)"),
            (std::set<std::string>{"a", "b"}));
}

TEST(SdyShardingTest, WhatItCannotReadIsNamed) {
  const std::map<std::string, SdyMesh> meshes = *ParseSdyMeshes(R"({mesh = #sdy.mesh<["a"=4]>})");
  StatusOr<std::vector<TileSharding>> sub =
      ParseSdyShardings(R"(#sdy.sharding<@mesh, [{"a":(1)2}]>)", meshes, {1}, 4);
  EXPECT_EQ(sub.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(sub.status().message().find("sub-axis"), std::string::npos);
  StatusOr<std::vector<TileSharding>> axis =
      ParseSdyShardings(R"(#sdy.sharding<@mesh, [{"z"}]>)", meshes, {1}, 4);
  EXPECT_NE(axis.status().message().find("names the axis \"z\""), std::string::npos);
  EXPECT_NE(ParseSdyShardings(R"(#sdy.sharding<@other, [{}]>)", meshes, {1}, 4)
                .status().message().find("@other"),
            std::string::npos);
  EXPECT_NE(ParseSdyShardings(R"(#sdy.sharding<@mesh, [{}]>)", meshes, {2}, 4)
                .status().message().find("rank 2"),
            std::string::npos);
  EXPECT_NE(ParseSdyShardings(R"(#sdy.sharding<@mesh, [{"a", "a", "a"}]>)", meshes, {1}, 4)
                .status().message().find("more pieces than the 4 devices"),
            std::string::npos);
  EXPECT_NE(ParseSdyShardings(R"(#sdy.sharding<@mesh, [{}]>)", meshes, {1}, 8)
                .status().message().find("spans 4 devices of the program's 8"),
            std::string::npos);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
