// DeviceAssignment: the replica and partition of each device in a serialized
// xla.DeviceAssignmentProto, read without libprotobuf.
//
// Field numbers (xla/xla_data.proto), checked against XLA:CPU's PJRT_LoadedExecutable_
// GetDeviceAssignment bytes (xla_cpu_executable_test):
//   DeviceAssignmentProto.replica_count = 1 (int32)
//   DeviceAssignmentProto.computation_count = 2 (int32)
//   DeviceAssignmentProto.computation_devices = 3 (repeated message, one per computation)
//   ComputationDevice.replica_device_ids = 1 (repeated int64, packed or not)
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_ASSIGNMENT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_ASSIGNMENT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace plugin_wrapper {

// A device assignment: device id of (replica r, computation c) at ids[c][r].
class DeviceAssignment {
 public:
  // Reads a serialized xla.DeviceAssignmentProto; INVALID_ARGUMENT for malformed bytes, counts
  // that disagree with the lists, or a negative device id.
  static StatusOr<DeviceAssignment> Parse(std::string_view bytes);

  int replica_count() const { return replica_count_; }
  int computation_count() const { return computation_count_; }
  // The (replica, partition) of each id in `device_ids`, in that order; INVALID_ARGUMENT naming
  // an id the assignment does not hold, or holds twice.
  StatusOr<std::vector<LogicalDeviceId>> LogicalIdsOf(const std::vector<int>& device_ids) const;

 private:
  int replica_count_ = 0;                    // Replicas.
  int computation_count_ = 0;                // Computations (partitions).
  std::vector<std::vector<int64_t>> ids_;    // ids_[c][r].
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_ASSIGNMENT_H_
