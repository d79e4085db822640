// HloSharding text -> ShardingSpec, shard shapes, and the xla.OpSharding bytes PJRT reports. The
// expected bytes are what jaxlib's own xla_client.OpSharding serializes for the same sharding.
#include "xla_plugin/devices/sim/compiler/sharding.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string ProtoHex(const std::string& text) {
  StatusOr<ShardingSpec> spec = ParseSharding(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status().message();
  return spec.ok() ? Hex(OpShardingProto(*spec)) : "";
}

TEST(ShardingTest, IotaTileAssignment) {
  StatusOr<ShardingSpec> spec = ParseSharding("{devices=[4]<=[4]}");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->kind, ShardingSpec::Kind::kTiled);
  EXPECT_EQ(spec->tiles, (std::vector<int64_t>{4}));
  EXPECT_EQ(spec->replication, 1);
  EXPECT_EQ(spec->devices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ProtoHex("{devices=[4]<=[4]}"), "08031a0104220400010203");
}

TEST(ShardingTest, TransposedIotaWithReplication) {
  const std::string text = "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}";
  StatusOr<ShardingSpec> spec = ParseSharding(text);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->tiles, (std::vector<int64_t>{4}));
  EXPECT_EQ(spec->replication, 2);
  EXPECT_EQ(spec->devices, (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(ProtoHex(text), "08031a020402220800040105020603073001");
  EXPECT_EQ(ProtoHex("{devices=[2,2]<=[2,2]T(1,0)}"), "08031a020202220400020103");
}

TEST(ShardingTest, ExplicitDevicesAndSubgroups) {
  EXPECT_EQ(ProtoHex("{devices=[2,2]0,2,1,3}"), "08031a020202220400020103");
  EXPECT_EQ(ProtoHex("{devices=[1,2,2]0,1,2,3 last_tile_dims={replicated}}"),
            "08031a030102022204000102033001");
}

TEST(ShardingTest, ReplicatedMaximalManual) {
  EXPECT_EQ(ProtoHex("{replicated}"), "");
  EXPECT_EQ(ProtoHex("{maximal device=2}"), "0801220102");
  EXPECT_EQ(ProtoHex("{manual}"), "0804");
}

TEST(ShardingTest, ShardDimsDivideEvenly) {
  StatusOr<ShardingSpec> spec = ParseSharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  StatusOr<std::vector<int64_t>> dims = ShardDims(*spec, {8, 3});
  ASSERT_TRUE(dims.ok()) << dims.status().message();
  EXPECT_EQ(*dims, (std::vector<int64_t>{4, 3}));
  StatusOr<std::vector<int64_t>> uneven = ShardDims(*spec, {7, 3});
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("not divisible into 2 shards"), std::string::npos);
}

TEST(ShardingTest, MalformedTextIsRefusedByName) {
  for (const std::string text :
       {"devices=[4]<=[4]", "{devices=[4]<=[2]}", "{devices=[2,2]0,1,2}", "{devices=[4]<=[4]T(1)}",
        "{devices=[2,2]<=[2,2]T(0,0)}", "{maximal}", "{tiles}"}) {
    StatusOr<ShardingSpec> spec = ParseSharding(text);
    EXPECT_FALSE(spec.ok()) << text;
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << text;
      EXPECT_NE(spec.status().message().find(text), std::string::npos)
          << spec.status().message();
    }
  }
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
