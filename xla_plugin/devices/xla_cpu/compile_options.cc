#include "xla_plugin/devices/xla_cpu/compile_options.h"

#include <cstddef>

namespace pjrtkit {
namespace xla_cpu {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

// Field numbers (see the header).
constexpr uint64_t kExecutableBuildOptions = 3;
constexpr uint64_t kCompilePortableExecutable = 4;
constexpr uint64_t kNumReplicas = 4;
constexpr uint64_t kNumPartitions = 5;

// A cursor over serialized protobuf bytes.
class WireReader {
 public:
  WireReader(const char* data, size_t size) : data_(data), size_(size) {}

  bool done() const { return pos_ >= size_; }

  // Reads a base-128 varint.
  bool ReadVarint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) return false;
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  // Reads a field key.
  bool ReadTag(uint64_t* field, int* wire_type) {
    uint64_t key = 0;
    if (!ReadVarint(&key)) return false;
    *field = key >> 3;
    *wire_type = static_cast<int>(key & 7);
    return *field != 0;
  }

  // Reads the payload of a length-delimited field.
  bool ReadBytes(const char** bytes, size_t* length) {
    uint64_t n = 0;
    if (!ReadVarint(&n) || n > size_ - pos_) return false;
    *bytes = data_ + pos_;
    *length = static_cast<size_t>(n);
    pos_ += *length;
    return true;
  }

  // Skips the payload of a field of `wire_type` (groups are not supported).
  bool Skip(int wire_type) {
    uint64_t ignored = 0;
    const char* bytes = nullptr;
    size_t length = 0;
    switch (wire_type) {
      case kVarint: return ReadVarint(&ignored);
      case kFixed64: return Advance(8);
      case kLengthDelimited: return ReadBytes(&bytes, &length);
      case kFixed32: return Advance(4);
      default: return false;
    }
  }

 private:
  bool Advance(size_t n) {
    if (n > size_ - pos_) return false;
    pos_ += n;
    return true;
  }

  const char* data_;  // The bytes.
  size_t size_;       // Their count.
  size_t pos_ = 0;    // Next byte to read.
};

Status Malformed(const char* where) {
  return InvalidArgument(std::string("compile options are not a serialized "
                                     "xla.CompileOptionsProto (malformed ") +
                         where + ")");
}

// Reads ExecutableBuildOptionsProto fields into `summary` (later values win, as in protobuf).
Status ReadBuildOptions(const char* data, size_t size, CompileOptionsSummary* summary) {
  WireReader reader(data, size);
  while (!reader.done()) {
    uint64_t field = 0;
    int wire_type = 0;
    if (!reader.ReadTag(&field, &wire_type)) return Malformed("executable_build_options");
    if ((field == kNumReplicas || field == kNumPartitions) && wire_type == kVarint) {
      uint64_t value = 0;
      if (!reader.ReadVarint(&value)) return Malformed("executable_build_options");
      (field == kNumReplicas ? summary->num_replicas : summary->num_partitions) =
          static_cast<int64_t>(value);
    } else if (!reader.Skip(wire_type)) {
      return Malformed("executable_build_options");
    }
  }
  return OkStatus();
}

// Appends `value` as a varint.
void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Appends a varint field.
void AppendVarintField(uint64_t field, uint64_t value, std::string* out) {
  AppendVarint((field << 3) | kVarint, out);
  AppendVarint(value, out);
}

// Appends a length-delimited field.
void AppendBytesField(uint64_t field, const std::string& bytes, std::string* out) {
  AppendVarint((field << 3) | kLengthDelimited, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

}  // namespace

StatusOr<CompileOptionsSummary> ReadCompileOptions(const std::string& serialized) {
  CompileOptionsSummary summary;
  WireReader reader(serialized.data(), serialized.size());
  while (!reader.done()) {
    uint64_t field = 0;
    int wire_type = 0;
    if (!reader.ReadTag(&field, &wire_type)) return Malformed("field key");
    if (field == kExecutableBuildOptions && wire_type == kLengthDelimited) {
      const char* bytes = nullptr;
      size_t length = 0;
      if (!reader.ReadBytes(&bytes, &length)) return Malformed("executable_build_options");
      PJRTKIT_RETURN_IF_ERROR(ReadBuildOptions(bytes, length, &summary));
    } else if (field == kCompilePortableExecutable && wire_type == kVarint) {
      uint64_t value = 0;
      if (!reader.ReadVarint(&value)) return Malformed("compile_portable_executable");
      summary.compile_portable_executable = value != 0;
    } else if (!reader.Skip(wire_type)) {
      return Malformed("field payload");
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
  const int64_t replicas = summary.num_replicas == 0 ? 1 : summary.num_replicas;
  const int64_t partitions = summary.num_partitions == 0 ? 1 : summary.num_partitions;
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

}  // namespace xla_cpu
}  // namespace pjrtkit
