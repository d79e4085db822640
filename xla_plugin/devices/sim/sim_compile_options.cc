#include "xla_plugin/devices/sim/sim_compile_options.h"

#include <set>
#include <string_view>

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int kExecutableBuildOptions = 3;
constexpr int kCompilePortableExecutable = 4;
constexpr int kDeviceOrdinal = 1;
constexpr int kNumReplicas = 4;
constexpr int kNumPartitions = 5;
constexpr int kDeviceAssignment = 9;
constexpr int kReplicaCount = 1;
constexpr int kComputationCount = 2;
constexpr int kComputationDevices = 3;
constexpr int kReplicaDeviceIds = 1;

Status Malformed(const char* where, const Status& status) {
  return InvalidArgument(std::string("compile options: ") + where + ": " + status.message());
}

// Device ids per computation, from a DeviceAssignmentProto.
struct Assignment {
  int64_t replicas = 0;
  int64_t computations = 0;
  std::vector<std::vector<int64_t>> ids;  // ids[computation][replica].
};

StatusOr<Assignment> ReadAssignment(std::string_view bytes) {
  Assignment assignment;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed("device_assignment", field.status());
    if (field->number == kReplicaCount && field->type == WireType::kVarint) {
      assignment.replicas = static_cast<int64_t>(field->varint);
    } else if (field->number == kComputationCount && field->type == WireType::kVarint) {
      assignment.computations = static_cast<int64_t>(field->varint);
    } else if (field->number == kComputationDevices &&
               field->type == WireType::kLengthDelimited) {
      std::vector<int64_t> ids;
      ProtoReader device(field->bytes);
      while (!device.done()) {
        StatusOr<ProtoField> id = device.Next();
        if (!id.ok()) return Malformed("computation_devices", id.status());
        if (id->number != kReplicaDeviceIds) continue;
        if (id->type == WireType::kVarint) {
          ids.push_back(static_cast<int64_t>(id->varint));
        } else if (id->type == WireType::kLengthDelimited) {
          StatusOr<std::vector<int64_t>> packed = ProtoReader::PackedVarints(id->bytes);
          if (!packed.ok()) return Malformed("replica_device_ids", packed.status());
          ids.insert(ids.end(), packed->begin(), packed->end());
        }
      }
      assignment.ids.push_back(std::move(ids));
    }
  }
  return assignment;
}

}  // namespace

StatusOr<SimCompileOptions> SimCompileOptions::Read(const std::string& serialized,
                                                    int device_count) {
  SimCompileOptions options;
  options.num_replicas = 0;
  options.num_partitions = 0;
  std::string_view assignment_bytes;
  bool has_assignment = false;
  ProtoReader reader(serialized);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed("CompileOptionsProto", field.status());
    if (field->number == kCompilePortableExecutable && field->type == WireType::kVarint) {
      options.portable = field->varint != 0;
    }
    if (field->number != kExecutableBuildOptions ||
        field->type != WireType::kLengthDelimited) {
      continue;
    }
    ProtoReader build(field->bytes);
    while (!build.done()) {
      StatusOr<ProtoField> b = build.Next();
      if (!b.ok()) return Malformed("executable_build_options", b.status());
      if (b->number == kNumReplicas && b->type == WireType::kVarint) {
        options.num_replicas = static_cast<int64_t>(b->varint);
      } else if (b->number == kNumPartitions && b->type == WireType::kVarint) {
        options.num_partitions = static_cast<int64_t>(b->varint);
      } else if (b->number == kDeviceAssignment && b->type == WireType::kLengthDelimited) {
        assignment_bytes = b->bytes;
        has_assignment = true;
      } else if (b->number == kDeviceOrdinal && b->type == WireType::kVarint) {
        // The device of a single-device program; the assignment, when there is one, decides.
      }
    }
  }
  if (options.num_replicas == 0) options.num_replicas = 1;
  if (options.num_partitions == 0) options.num_partitions = 1;
  if (options.num_replicas < 0 || options.num_partitions < 0 ||
      options.num_replicas > device_count || options.num_partitions > device_count ||
      options.num_replicas * options.num_partitions > device_count) {
    return InvalidArgument("compile options: " + std::to_string(options.num_replicas) +
                           " replicas x " + std::to_string(options.num_partitions) +
                           " partitions do not fit the client's " +
                           std::to_string(device_count) + " devices");
  }
  const int64_t count = options.num_replicas * options.num_partitions;
  if (has_assignment) {
    PJRTKIT_ASSIGN_OR_RETURN(Assignment assignment, ReadAssignment(assignment_bytes));
    if (assignment.replicas != options.num_replicas ||
        assignment.computations != options.num_partitions ||
        static_cast<int64_t>(assignment.ids.size()) != assignment.computations) {
      return InvalidArgument("compile options: the device assignment is " +
                             std::to_string(assignment.replicas) + " replicas x " +
                             std::to_string(assignment.computations) +
                             " computations, the options say " +
                             std::to_string(options.num_replicas) + " x " +
                             std::to_string(options.num_partitions));
    }
    options.devices.assign(count, -1);
    std::set<int64_t> seen;
    for (int64_t c = 0; c < assignment.computations; ++c) {
      if (static_cast<int64_t>(assignment.ids[c].size()) != assignment.replicas) {
        return InvalidArgument("compile options: a computation of the device assignment does "
                               "not list one device per replica");
      }
      for (int64_t r = 0; r < assignment.replicas; ++r) {
        const int64_t id = assignment.ids[c][r];
        if (id < 0 || id >= device_count || !seen.insert(id).second) {
          return InvalidArgument("compile options: the device assignment names device " +
                                 std::to_string(id) + ", which is not a distinct device of "
                                 "0.." + std::to_string(device_count - 1));
        }
        options.devices[r * options.num_partitions + c] = static_cast<int>(id);
      }
    }
  } else {
    for (int64_t i = 0; i < count; ++i) options.devices.push_back(static_cast<int>(i));
  }
  return options;
}

}  // namespace sim
}  // namespace pjrtkit
