// PJRT_TopologyDescription_Deserialize: bytes from PJRT_TopologyDescription_Serialize back into a
// topology the caller owns.

// C++ standard library.
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

class TopologyDeserializeTest : public ClientTest {
 protected:
  // PJRT_TopologyDescription_Serialize of `topology`.
  std::string Serialize(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Serialize_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Serialize(&args));
    std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_topology_deleter(args.serialized_topology);
    return bytes;
  }

  // PJRT_TopologyDescription_Deserialize of `bytes` (nullptr on error, with `info` set).
  PJRT_TopologyDescription* Deserialize(const std::string& bytes, ErrorInfo* info = nullptr) {
    auto args = MakeArgs<PJRT_TopologyDescription_Deserialize_Args>();
    args.serialized_topology = bytes.data();
    args.serialized_topology_size = bytes.size();
    ErrorInfo result = Consume(api_->PJRT_TopologyDescription_Deserialize(&args));
    if (info != nullptr) *info = result;
    return result.ok ? args.topology : nullptr;
  }

  PJRT_TopologyDescription* ClientTopology() {
    auto args = MakeArgs<PJRT_Client_TopologyDescription_Args>();
    args.client = client_;
    EXPECT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&args));
    return args.topology;
  }
};

TEST_F(TopologyDeserializeTest, RoundTripsTheClientTopology) {
  const std::string bytes = Serialize(ClientTopology());
  PJRT_TopologyDescription* back = Deserialize(bytes);
  ASSERT_NE(back, nullptr);
  auto name = MakeArgs<PJRT_TopologyDescription_PlatformName_Args>();
  name.topology = back;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_PlatformName(&name));
  EXPECT_EQ(Str(name.platform_name, name.platform_name_size), "fake");
  auto version = MakeArgs<PJRT_TopologyDescription_PlatformVersion_Args>();
  version.topology = back;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_PlatformVersion(&version));
  EXPECT_EQ(Str(version.platform_version, version.platform_version_size), "fake 1.0");
  auto descriptions = MakeArgs<PJRT_TopologyDescription_GetDeviceDescriptions_Args>();
  descriptions.topology = back;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_GetDeviceDescriptions(&descriptions));
  ASSERT_EQ(descriptions.num_descriptions, 2u);
  auto kind = MakeArgs<PJRT_DeviceDescription_Kind_Args>();
  kind.device_description = descriptions.descriptions[1];
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Kind(&kind));
  EXPECT_EQ(Str(kind.device_kind, kind.device_kind_size), "fake");
  auto debug = MakeArgs<PJRT_DeviceDescription_DebugString_Args>();
  debug.device_description = descriptions.descriptions[1];
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_DebugString(&debug));
  EXPECT_EQ(Str(debug.debug_string, debug.debug_string_size), "FAKE_1");
  auto attributes = MakeArgs<PJRT_DeviceDescription_Attributes_Args>();
  attributes.device_description = descriptions.descriptions[1];
  EXPECT_PJRT_OK(api_->PJRT_DeviceDescription_Attributes(&attributes));
  ASSERT_EQ(attributes.num_attributes, 1u);
  EXPECT_EQ(Str(attributes.attributes[0].name, attributes.attributes[0].name_size), "index");
  EXPECT_EQ(attributes.attributes[0].int64_value, 1);
  // The same bytes again, and the copy is the caller's to destroy.
  EXPECT_EQ(Serialize(back), bytes);
  auto destroy = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
  destroy.topology = back;
  EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Destroy(&destroy));
}

TEST_F(TopologyDeserializeTest, OtherBytesAreInvalidArgument) {
  ErrorInfo info;
  EXPECT_EQ(Deserialize("pjrtkit-topology 1\nplatform fake\n", &info), nullptr);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "Topology::Deserialize: expected '2' at byte 16 of 33 (bytes made by "
            "Topology::Serialize, format pjrtkit-topology 2)");
  auto args = MakeArgs<PJRT_TopologyDescription_Deserialize_Args>();
  args.serialized_topology_size = 4;  // With a null pointer.
  EXPECT_EQ(Consume(api_->PJRT_TopologyDescription_Deserialize(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
