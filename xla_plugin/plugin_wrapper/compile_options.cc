#include "xla_plugin/plugin_wrapper/compile_options.h"

#include <cstddef>
#include <string_view>

#include "xla_plugin/client/proto_reader.h"
#include "xla_plugin/client/proto_writer.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// Field numbers (see the header).
constexpr int kDeviceOrdinal = 1;
constexpr int kDebugOptions = 3;
constexpr int kExecutableBuildOptions = 3;
constexpr int kCompilePortableExecutable = 4;
constexpr int kNumReplicas = 4;
constexpr int kNumPartitions = 5;
constexpr int kUseAutoSpmdPartitioning = 7;
constexpr int kUseShardyPartitioner = 19;

// `status` (from ProtoReader) as "not a serialized xla.CompileOptionsProto" naming `where`.
Status Malformed(const char* where, const Status& status) {
  return InvalidArgument(std::string("compile options are not a serialized "
                                     "xla.CompileOptionsProto (malformed ") +
                         where + ": " + status.message() + ")");
}

// DebugOptions booleans that make XLA abort the process (see the header), in field order.
struct CrashOption {
  int number;
  const char* name;
};
constexpr CrashOption kCrashOptions[] = {
    {101, "xla_gpu_crash_on_verification_failures"},
    {363, "xla_unsupported_crash_on_hlo_pass_fix_max_iterations"},
    {379, "xla_unsupported_crash_on_hlo_pass_noop_change"},
    {380, "xla_unsupported_crash_on_hlo_pass_silent_hlo_change"},
};
constexpr int kCrashOptionCount = sizeof(kCrashOptions) / sizeof(kCrashOptions[0]);

// Reads the crash options' values from a DebugOptions message into `set` (later values win).
Status ReadDebugOptions(std::string_view message, bool set[kCrashOptionCount]) {
  ProtoReader reader(message);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed("executable_build_options.debug_options", field.status());
    if (field->type != WireType::kVarint) continue;
    for (int i = 0; i < kCrashOptionCount; ++i) {
      if (field->number == kCrashOptions[i].number) set[i] = field->varint != 0;
    }
  }
  return OkStatus();
}

// Reads ExecutableBuildOptionsProto fields into `summary` (later values win, as in protobuf;
// repeated debug_options messages merge, so their crash options are read across all of them).
Status ReadBuildOptions(std::string_view message, CompileOptionsSummary* summary,
                        bool crash_set[kCrashOptionCount]) {
  ProtoReader reader(message);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed("executable_build_options", field.status());
    if (field->number == kDebugOptions && field->type == WireType::kLengthDelimited) {
      PJRTKIT_RETURN_IF_ERROR(ReadDebugOptions(field->bytes, crash_set));
    }
    if (field->type != WireType::kVarint) continue;
    if (field->number == kDeviceOrdinal) {
      summary->device_ordinal = static_cast<int64_t>(field->varint);
    }
    if (field->number == kNumReplicas) summary->num_replicas = static_cast<int64_t>(field->varint);
    if (field->number == kNumPartitions) {
      summary->num_partitions = static_cast<int64_t>(field->varint);
    }
    if (field->number == kUseAutoSpmdPartitioning) {
      summary->use_auto_spmd_partitioning = field->varint != 0;
    }
    if (field->number == kUseShardyPartitioner) {
      summary->use_shardy_partitioner = field->varint != 0;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<CompileOptionsSummary> ReadCompileOptions(const std::string& serialized) {
  CompileOptionsSummary summary;
  bool crash_set[kCrashOptionCount] = {};
  ProtoReader reader(serialized);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed("field", field.status());
    if (field->number == kExecutableBuildOptions && field->type == WireType::kLengthDelimited) {
      PJRTKIT_RETURN_IF_ERROR(ReadBuildOptions(field->bytes, &summary, crash_set));
    } else if (field->number == kCompilePortableExecutable && field->type == WireType::kVarint) {
      summary.compile_portable_executable = field->varint != 0;
    }
  }
  for (int i = 0; i < kCrashOptionCount; ++i) {
    if (crash_set[i]) {
      summary.crash_option = kCrashOptions[i].name;
      break;
    }
  }
  return summary;
}

StatusOr<std::string> NormalizeCompileOptions(const std::string& serialized, int device_count) {
  PJRTKIT_ASSIGN_OR_RETURN(CompileOptionsSummary summary, ReadCompileOptions(serialized));
  if (summary.num_replicas < 0 || summary.num_partitions < 0) {
    return InvalidArgument("compile options: num_replicas and num_partitions must be >= 1 (0 "
                           "means 1); got " +
                           std::to_string(summary.num_replicas) + " and " +
                           std::to_string(summary.num_partitions));
  }
  // XLA:CPU narrows device_ordinal to an int and CHECKs that it is >= 0 unless it is -1, so an
  // int64 whose low 32 bits read -1, or any other negative value, aborted the process (found by
  // tests/fuzz compile_options_fuzzer).
  if (summary.device_ordinal < -1 || summary.device_ordinal >= device_count) {
    return InvalidArgument("compile options: executable_build_options.device_ordinal must be -1 "
                           "(any device) or in [0, " + std::to_string(device_count) +
                           ") on this client; got " + std::to_string(summary.device_ordinal));
  }
  // These make XLA CHECK-fail, aborting the process, when a pass misreports whether it changed
  // the module (XLA:CPU's layout assignment does: found by tests/fuzz compile_options_fuzzer).
  if (!summary.crash_option.empty()) {
    return InvalidArgument("compile options: executable_build_options.debug_options." +
                           summary.crash_option +
                           " makes XLA abort the process instead of returning an error; pjrtkit "
                           "refuses it (leave it false)");
  }
  const int64_t replicas = summary.num_replicas == 0 ? 1 : summary.num_replicas;
  const int64_t partitions = summary.num_partitions == 0 ? 1 : summary.num_partitions;
  // XLA:CPU's Shardy pass then needs an auto-partitioner that the published plugin does not
  // register, and report_fatal_error ends the process (found by tests/fuzz
  // compile_options_fuzzer).
  if (summary.use_auto_spmd_partitioning && summary.use_shardy_partitioner && partitions > 1) {
    return InvalidArgument("compile options: executable_build_options.use_auto_spmd_partitioning "
                           "with use_shardy_partitioner over " + std::to_string(partitions) +
                           " partitions needs XLA's automatic partitioner, which the wrapped "
                           "plugin does not register (XLA would abort the process); pjrtkit "
                           "refuses it: give every input and output a sharding instead of AUTO");
  }
  if (replicas > device_count || partitions > device_count ||
      replicas * partitions > device_count) {
    return InvalidArgument("compile options ask for " + std::to_string(replicas) +
                           " replicas x " + std::to_string(partitions) +
                           " partitions; this client has " + std::to_string(device_count) +
                           " devices (create option 'device_count')");
  }
  if (summary.num_replicas != 0 && summary.num_partitions != 0) return serialized;
  std::string build_options;
  if (summary.num_replicas == 0) AppendVarintField(kNumReplicas, 1, &build_options);
  if (summary.num_partitions == 0) AppendVarintField(kNumPartitions, 1, &build_options);
  std::string out = serialized;
  AppendBytesField(kExecutableBuildOptions, build_options, &out);
  return out;
}

std::string MinimalCompileOptions(int64_t num_replicas, int64_t num_partitions, bool portable) {
  std::string build_options;
  AppendVarintField(kNumReplicas, static_cast<uint64_t>(num_replicas), &build_options);
  AppendVarintField(kNumPartitions, static_cast<uint64_t>(num_partitions), &build_options);
  std::string out;
  AppendBytesField(kExecutableBuildOptions, build_options, &out);
  if (portable) AppendVarintField(kCompilePortableExecutable, 1, &out);
  return out;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
