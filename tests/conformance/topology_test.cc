// PJRT_Client_TopologyDescription and PJRT_TopologyDescription_*.
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class TopologyTest : public ClientTestBase {
 protected:
  void SetUp() override {
    ClientTestBase::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    PJRT_REQUIRE_SLOT(PJRT_Client_TopologyDescription);
    PJRT_ARGS(PJRT_Client_TopologyDescription_Args, args);
    args.client = client();
    PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Client_TopologyDescription(&args)),
                               "PJRT_Client_TopologyDescription");
    ASSERT_NE(args.topology, nullptr);
    topology_ = args.topology;  // Owned by the client.
  }

  // PJRT_TopologyDescription_Serialize of the client's topology into `bytes`.
  Status Serialize(std::string* bytes) {
    PJRT_ARGS(PJRT_TopologyDescription_Serialize_Args, args);
    args.topology = topology_;
    const Status status = PJRT_CALL(api()->PJRT_TopologyDescription_Serialize(&args));
    if (!status.ok()) return status;
    *bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    EXPECT_NE(args.serialized_topology_deleter, nullptr);
    if (args.serialized_topology_deleter != nullptr) {
      args.serialized_topology_deleter(args.serialized_topology);
    }
    return status;
  }

  PJRT_TopologyDescription* topology_ = nullptr;  // The client's topology.
};

TEST_F(TopologyTest, PlatformNameMatchesTheClients) {
  PJRT_ARGS(PJRT_TopologyDescription_PlatformName_Args, args);
  args.topology = topology_;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_TopologyDescription_PlatformName(&args)));
  PJRT_ARGS(PJRT_Client_PlatformName_Args, client_args);
  client_args.client = client();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_PlatformName(&client_args)));
  EXPECT_EQ(Str(args.platform_name, args.platform_name_size),
            Str(client_args.platform_name, client_args.platform_name_size));
}

TEST_F(TopologyTest, PlatformVersionIsNonEmpty) {
  PJRT_ARGS(PJRT_TopologyDescription_PlatformVersion_Args, args);
  args.topology = topology_;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_TopologyDescription_PlatformVersion(&args)));
  EXPECT_FALSE(Str(args.platform_version, args.platform_version_size).empty());
}

TEST_F(TopologyTest, DeviceDescriptionsMatchTheClientsDevices) {
  PJRT_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, args);
  args.topology = topology_;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_TopologyDescription_GetDeviceDescriptions(&args)));
  EXPECT_EQ(args.num_descriptions, Devices().size());
  std::set<int> topology_ids;
  for (size_t i = 0; i < args.num_descriptions; ++i) {
    PJRT_ARGS(PJRT_DeviceDescription_Id_Args, id_args);
    id_args.device_description = args.descriptions[i];
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_DeviceDescription_Id(&id_args)));
    topology_ids.insert(id_args.id);
  }
  std::set<int> client_ids;
  for (PJRT_Device* device : Devices()) client_ids.insert(DeviceId(device));
  EXPECT_EQ(topology_ids, client_ids);
}

TEST_F(TopologyTest, AttributesAreWellFormed) {
  PJRT_ARGS(PJRT_TopologyDescription_Attributes_Args, args);
  args.topology = topology_;
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_TopologyDescription_Attributes(&args)));
  ExpectWellFormedNamedValues(args.attributes, args.num_attributes, "topology attributes");
}

TEST_F(TopologyTest, SerializeGivesBytesOrUnimplemented) {
  std::string bytes;
  PJRT_SKIP_IF_UNIMPLEMENTED(Serialize(&bytes), "PJRT_TopologyDescription_Serialize");
  EXPECT_FALSE(bytes.empty());
}

TEST_F(TopologyTest, DeserializeRoundTripsOrReported) {
  std::string bytes;
  PJRT_SKIP_IF_UNIMPLEMENTED(Serialize(&bytes), "PJRT_TopologyDescription_Serialize");
  PJRT_REQUIRE_SLOT(PJRT_TopologyDescription_Deserialize);
  PJRT_ARGS(PJRT_TopologyDescription_Deserialize_Args, back);
  back.serialized_topology = bytes.data();
  back.serialized_topology_size = bytes.size();
  const Status status = PJRT_CALL(api()->PJRT_TopologyDescription_Deserialize(&back));
  TopologyPtr owned(api(), back.topology);
  if (status.code == PJRT_Error_Code_NOT_FOUND) {
    // Deserializing goes through a compiler registered for the platform; plugins that only
    // compile through a client (XLA:CPU) have none and say NOT_FOUND.
    GTEST_SKIP() << "PJRT_TopologyDescription_Deserialize: no topology compiler: " << status;
  }
  PJRT_SKIP_IF_UNIMPLEMENTED(status, "PJRT_TopologyDescription_Deserialize");
  PJRT_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, descriptions);
  descriptions.topology = owned.get();
  PJRT_ASSERT_OK(
      PJRT_CALL(api()->PJRT_TopologyDescription_GetDeviceDescriptions(&descriptions)));
  EXPECT_EQ(descriptions.num_descriptions, Devices().size());
}

}  // namespace
}  // namespace pjrt_conformance
