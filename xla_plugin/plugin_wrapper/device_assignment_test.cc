#include "xla_plugin/plugin_wrapper/device_assignment.h"

#include <string>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/proto_writer.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

using proto_writer::BytesField;
using proto_writer::Varint;
using proto_writer::VarintField;

// ComputationDevice{replica_device_ids: ids} with the ids packed.
std::string Computation(const std::vector<int>& ids) {
  std::string packed;
  for (int id : ids) packed += Varint(id);
  return BytesField(1, packed);
}

TEST(DeviceAssignmentTest, ReplicasAndPartitionsOfEachDevice) {
  // 2 replicas x 2 computations: ids[c][r] = {{3, 1}, {0, 2}}.
  const std::string bytes = VarintField(1, 2) + VarintField(2, 2) +
                            BytesField(3, Computation({3, 1})) + BytesField(3, Computation({0, 2}));
  StatusOr<DeviceAssignment> assignment = DeviceAssignment::Parse(bytes);
  ASSERT_TRUE(assignment.ok()) << assignment.status().ToString();
  EXPECT_EQ(assignment->replica_count(), 2);
  EXPECT_EQ(assignment->computation_count(), 2);
  StatusOr<std::vector<LogicalDeviceId>> ids = assignment->LogicalIdsOf({0, 1, 2, 3});
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 4u);
  EXPECT_EQ((*ids)[0].replica, 0);  // Device 0: computation 1, replica 0.
  EXPECT_EQ((*ids)[0].partition, 1);
  EXPECT_EQ((*ids)[1].replica, 1);  // Device 1: computation 0, replica 1.
  EXPECT_EQ((*ids)[1].partition, 0);
  EXPECT_EQ((*ids)[2].replica, 1);
  EXPECT_EQ((*ids)[2].partition, 1);
  EXPECT_EQ((*ids)[3].replica, 0);
  EXPECT_EQ((*ids)[3].partition, 0);
}

TEST(DeviceAssignmentTest, UnpackedIdsAreRead) {
  const std::string computation = VarintField(1, 5);
  StatusOr<DeviceAssignment> assignment =
      DeviceAssignment::Parse(VarintField(1, 1) + VarintField(2, 1) + BytesField(3, computation));
  ASSERT_TRUE(assignment.ok());
  StatusOr<std::vector<LogicalDeviceId>> ids = assignment->LogicalIdsOf({5});
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*ids)[0].replica, 0);
  EXPECT_EQ((*ids)[0].partition, 0);
}

TEST(DeviceAssignmentTest, CountsThatDisagreeAreRefused) {
  StatusOr<DeviceAssignment> assignment =
      DeviceAssignment::Parse(VarintField(1, 2) + VarintField(2, 1) + BytesField(3, Computation({0})));
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(assignment.status().message(),
            "DeviceAssignmentProto: computation 0 lists 1 devices for 2 replicas");
}

TEST(DeviceAssignmentTest, AnUnassignedDeviceIsNamed) {
  StatusOr<DeviceAssignment> assignment =
      DeviceAssignment::Parse(VarintField(1, 1) + VarintField(2, 1) + BytesField(3, Computation({0})));
  ASSERT_TRUE(assignment.ok());
  StatusOr<std::vector<LogicalDeviceId>> ids = assignment->LogicalIdsOf({7});
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().message(), "DeviceAssignmentProto: device 7 is not assigned");
}

TEST(DeviceAssignmentTest, MalformedBytesAreInvalidArgument) {
  StatusOr<DeviceAssignment> assignment = DeviceAssignment::Parse(std::string("\x1a\x05", 2));
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(assignment.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
