#include "xla_plugin/plugin_wrapper/device_assignment.h"

#include <string>

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// "DeviceAssignmentProto: <what>" as INVALID_ARGUMENT.
Status Bad(const std::string& what) {
  return InvalidArgument("DeviceAssignmentProto: " + what);
}

// The replica_device_ids of one ComputationDevice message.
StatusOr<std::vector<int64_t>> ReadComputation(std::string_view bytes) {
  std::vector<int64_t> ids;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number != 1) continue;
    if (field.type == WireType::kVarint) {
      ids.push_back(static_cast<int64_t>(field.varint));
    } else if (field.type == WireType::kLengthDelimited) {
      PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> packed, ProtoReader::PackedVarints(field.bytes));
      ids.insert(ids.end(), packed.begin(), packed.end());
    } else {
      return Bad("replica_device_ids has wire type " +
                 std::to_string(static_cast<int>(field.type)));
    }
  }
  return ids;
}

}  // namespace

StatusOr<DeviceAssignment> DeviceAssignment::Parse(std::string_view bytes) {
  DeviceAssignment out;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == 1 && field.type == WireType::kVarint) {
      out.replica_count_ = static_cast<int>(field.varint);
    } else if (field.number == 2 && field.type == WireType::kVarint) {
      out.computation_count_ = static_cast<int>(field.varint);
    } else if (field.number == 3 && field.type == WireType::kLengthDelimited) {
      PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ReadComputation(field.bytes));
      out.ids_.push_back(std::move(ids));
    }
  }
  if (static_cast<int>(out.ids_.size()) != out.computation_count_) {
    return Bad("computation_count is " + std::to_string(out.computation_count_) + " but " +
               std::to_string(out.ids_.size()) + " computation_devices are listed");
  }
  for (size_t c = 0; c < out.ids_.size(); ++c) {
    if (static_cast<int>(out.ids_[c].size()) != out.replica_count_) {
      return Bad("computation " + std::to_string(c) + " lists " +
                 std::to_string(out.ids_[c].size()) + " devices for " +
                 std::to_string(out.replica_count_) + " replicas");
    }
    for (int64_t id : out.ids_[c]) {
      if (id < 0) return Bad("device id " + std::to_string(id) + " is negative");
    }
  }
  return out;
}

StatusOr<std::vector<LogicalDeviceId>> DeviceAssignment::LogicalIdsOf(
    const std::vector<int>& device_ids) const {
  std::vector<LogicalDeviceId> out;
  out.reserve(device_ids.size());
  for (int id : device_ids) {
    bool found = false;
    LogicalDeviceId logical;
    for (size_t c = 0; c < ids_.size(); ++c) {
      for (size_t r = 0; r < ids_[c].size(); ++r) {
        if (ids_[c][r] != id) continue;
        if (found) return Bad("device " + std::to_string(id) + " is assigned twice");
        found = true;
        logical.replica = static_cast<int>(r);
        logical.partition = static_cast<int>(c);
      }
    }
    if (!found) return Bad("device " + std::to_string(id) + " is not assigned");
    out.push_back(logical);
  }
  return out;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
