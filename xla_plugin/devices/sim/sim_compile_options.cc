#include "xla_plugin/devices/sim/sim_compile_options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int kExecutableBuildOptions = 3;
constexpr int kCompilePortableExecutable = 4;
constexpr int kEnvOptionOverrides = 7;
constexpr int kMapKey = 1;
constexpr int kMapValue = 2;
constexpr int kOverrideString = 1;
constexpr int kOverrideBool = 2;
constexpr int kOverrideInt = 3;
constexpr int kOverrideDouble = 4;
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

// The value type of an XLA option, as XLA names it in its errors.
enum class OptionType { kBool, kInt32, kFloat, kString };

const char* TypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool: return "bool";
    case OptionType::kInt32: return "int32";
    case OptionType::kFloat: return "float";
    case OptionType::kString: return "string";
  }
  return "?";
}

// The XLA options (DebugOptions fields) the sim device accepts in env_option_overrides, with
// their types. Each concerns something sim does not have, so it changes nothing:
//   xla_embed_ir_in_executable: sim executables hold no HLO to embed.
//   xla_dump_to, xla_dump_max_hlo_modules, xla_dump_hlo_as_text: sim dumps nothing.
//   xla_gpu_auto_spmd_partitioning_memory_budget_ratio: sim has no automatic sharding search (its partitioner follows the shardings it is given).
// Any other name is refused, as XLA refuses a name that is not a DebugOptions field: sim cannot
// honour an option that changes code generation or numerics.
struct KnownOption {
  const char* name;
  OptionType type;
};
constexpr KnownOption kKnownOptions[] = {
    {"xla_embed_ir_in_executable", OptionType::kBool},
    {"xla_dump_to", OptionType::kString},
    {"xla_dump_max_hlo_modules", OptionType::kInt32},
    {"xla_dump_hlo_as_text", OptionType::kBool},
    {"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", OptionType::kFloat},
};

// One OptionOverrideProto: which of its oneof fields is set, and the value as text.
struct OverrideValue {
  int field = 0;     // kOverrideString ... kOverrideDouble; 0 when none is set.
  std::string text;  // The value, as XLA prints it in its errors.
  std::string string_value;
  int64_t int_value = 0;
};

StatusOr<OverrideValue> ReadOverrideValue(std::string_view bytes) {
  OverrideValue value;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    StatusOr<ProtoField> f = reader.Next();
    if (!f.ok()) return Malformed("env_option_overrides value", f.status());
    if (f->number == kOverrideString && f->type == WireType::kLengthDelimited) {
      value.field = kOverrideString;
      value.string_value = std::string(f->bytes);
      value.text = value.string_value;
    } else if (f->number == kOverrideBool && f->type == WireType::kVarint) {
      value.field = kOverrideBool;
      value.text = f->varint != 0 ? "1" : "0";
    } else if (f->number == kOverrideInt && f->type == WireType::kVarint) {
      value.field = kOverrideInt;
      value.int_value = static_cast<int64_t>(f->varint);
      value.text = std::to_string(value.int_value);
    } else if (f->number == kOverrideDouble && f->type == WireType::kFixed64) {
      value.field = kOverrideDouble;
      double d;
      static_assert(sizeof(d) == sizeof(f->varint), "double is 64 bits");
      std::memcpy(&d, &f->varint, sizeof(d));
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%g", d);
      value.text = buffer;
    }
  }
  return value;
}

// True when `text` is a whole number in int32 range, or (float) a whole floating-point number.
bool ParsesAs(const std::string& text, OptionType type) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  if (type == OptionType::kInt32) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    return errno == 0 && *end == '\0' && v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  }
  std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0';
}

// OK when `value` fits `type` as XLA:CPU takes it: a bool only as a bool, an int32 as an int in
// range or a string that reads as one, a float as a double or a string that reads as one, a
// string only as a string.
Status CheckOverride(const std::string& name, OptionType type, const OverrideValue& value) {
  bool ok = false;
  switch (type) {
    case OptionType::kBool:
      ok = value.field == kOverrideBool;
      break;
    case OptionType::kInt32:
      ok = (value.field == kOverrideInt &&
            value.int_value >= std::numeric_limits<int32_t>::min() &&
            value.int_value <= std::numeric_limits<int32_t>::max()) ||
           (value.field == kOverrideString && ParsesAs(value.string_value, type));
      break;
    case OptionType::kFloat:
      ok = value.field == kOverrideDouble ||
           (value.field == kOverrideString && ParsesAs(value.string_value, type));
      break;
    case OptionType::kString:
      ok = value.field == kOverrideString;
      break;
  }
  if (ok) return OkStatus();
  return InvalidArgument("While setting option " + name + ", '" + value.text +
                         "' is not a valid " + TypeName(type) + " value.");
}

// Checks one env_option_overrides entry (map<string, OptionOverrideProto>) and returns its name.
StatusOr<std::string> ReadOverride(std::string_view entry) {
  std::string name;
  std::string_view value_bytes;
  ProtoReader reader(entry);
  while (!reader.done()) {
    StatusOr<ProtoField> f = reader.Next();
    if (!f.ok()) return Malformed("env_option_overrides", f.status());
    if (f->number == kMapKey && f->type == WireType::kLengthDelimited) {
      name = std::string(f->bytes);
    } else if (f->number == kMapValue && f->type == WireType::kLengthDelimited) {
      value_bytes = f->bytes;
    }
  }
  const KnownOption* known = nullptr;
  for (const KnownOption& option : kKnownOptions) {
    if (name == option.name) known = &option;
  }
  if (known == nullptr) {
    std::string list;
    for (const KnownOption& option : kKnownOptions) {
      list += (list.empty() ? "" : ", ") + std::string(option.name);
    }
    return InvalidArgument("No such compile option: '" + name +
                           "' (the sim device accepts only " + list + ")");
  }
  PJRTKIT_ASSIGN_OR_RETURN(OverrideValue value, ReadOverrideValue(value_bytes));
  PJRTKIT_RETURN_IF_ERROR(CheckOverride(name, known->type, value));
  return name;
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
    if (field->number == kEnvOptionOverrides && field->type == WireType::kLengthDelimited) {
      PJRTKIT_ASSIGN_OR_RETURN(std::string name, ReadOverride(field->bytes));
      options.overrides.push_back(std::move(name));
      continue;
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
