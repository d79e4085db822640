// Topology::Serialize / Topology::Deserialize: exact bytes, round trips, malformed input.
#include "xla_plugin/client/topology_codec.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/topology.h"

namespace pjrtkit {
namespace {

Topology TwoDevices() {
  AttributeMap device_attributes{{"backend", std::string("xla cpu\nnewline")},
                                 {"cores", int64_t{-3}},
                                 {"fast", true},
                                 {"scale", 0.25f},
                                 {"coords", std::vector<int64_t>{1, 2, 3}}};
  std::vector<DeviceDescription> devices;
  devices.emplace_back(0, 0, "kind a", "D_0", "Device(0)", device_attributes);
  devices.emplace_back(5, 1, "kind:b", "D_5", "", AttributeMap{});
  return Topology("plat", "v 1", std::move(devices),
                  AttributeMap{{"device_count", int64_t{2}}, {"empty", std::vector<int64_t>{}}});
}

TEST(TopologyCodecTest, ExactBytes) {
  std::vector<DeviceDescription> devices;
  devices.emplace_back(0, 0, "cpu", "D_0", "Device(0)", AttributeMap{{"n", int64_t{1}}});
  Topology topology("p", "1.0", std::move(devices), AttributeMap{{"f", 1.0f}});
  StatusOr<std::string> bytes = topology.Serialize();
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes,
            "pjrtkit-topology 2\n"
            "platform 1:p\n"
            "version 3:1.0\n"
            "attributes 1\n"
            "attr 1:f f 3f800000\n"
            "devices 1\n"
            "device 0 0 3:cpu 3:D_0 9:Device(0) 1\n"
            "attr 1:n i 1\n");
}

TEST(TopologyCodecTest, RoundTripKeepsEverything) {
  const Topology original = TwoDevices();
  StatusOr<std::string> bytes = original.Serialize();
  ASSERT_TRUE(bytes.ok());
  StatusOr<std::unique_ptr<Topology>> back = Topology::Deserialize(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const Topology& t = **back;
  EXPECT_EQ(t.platform_name(), "plat");
  EXPECT_EQ(t.platform_version(), "v 1");
  EXPECT_EQ(t.attributes(), original.attributes());
  ASSERT_EQ(t.devices().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const DeviceDescription& got = t.devices()[i];
    const DeviceDescription& want = original.devices()[i];
    EXPECT_EQ(got.id(), want.id());
    EXPECT_EQ(got.process_index(), want.process_index());
    EXPECT_EQ(got.kind(), want.kind());
    EXPECT_EQ(got.debug_string(), want.debug_string());
    EXPECT_EQ(got.to_string(), want.to_string());
    EXPECT_EQ(got.attributes(), want.attributes());
  }
  // Serializing again gives the same bytes.
  StatusOr<std::string> again = t.Serialize();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *bytes);
}

TEST(TopologyCodecTest, RejectsOtherBytesWithTheOffset) {
  StatusOr<std::unique_ptr<Topology>> bad = Topology::Deserialize("pjrtkit-topology 1\n");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "Topology::Deserialize: expected '2' at byte 16 of 19 (bytes made by "
            "Topology::Serialize, format pjrtkit-topology 2)");
  EXPECT_FALSE(Topology::Deserialize("").ok());
  EXPECT_FALSE(Topology::Deserialize("garbage").ok());
}

TEST(TopologyCodecTest, EveryTruncationFailsCleanly) {
  StatusOr<std::string> bytes = TwoDevices().Serialize();
  ASSERT_TRUE(bytes.ok());
  // Cutting anywhere before the last line's end loses something the format requires.
  const size_t last_newline = bytes->rfind('\n', bytes->size() - 2);
  for (size_t size = 0; size <= last_newline; ++size) {
    StatusOr<std::unique_ptr<Topology>> cut = Topology::Deserialize(bytes->substr(0, size));
    EXPECT_FALSE(cut.ok()) << "accepted the first " << size << " bytes";
    if (!cut.ok()) {
      EXPECT_EQ(cut.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(TopologyCodecTest, RejectsHugeCountsAndLengths) {
  EXPECT_FALSE(Topology::Deserialize("pjrtkit-topology 2\nplatform 999999:x\n").ok());
  EXPECT_FALSE(
      Topology::Deserialize(
          "pjrtkit-topology 2\nplatform 1:p\nversion 1:v\nattributes 99999999999\n")
          .ok());
  EXPECT_FALSE(Topology::Deserialize("pjrtkit-topology 2\nplatform 1:p\nversion 1:v\n"
                                     "attributes 0\ndevices 0\ntrailing")
                   .ok());
}

}  // namespace
}  // namespace pjrtkit
