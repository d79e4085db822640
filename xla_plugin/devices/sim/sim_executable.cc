#include "xla_plugin/devices/sim/sim_executable.h"

#include <cstring>
#include <utility>

#include "xla_plugin/devices/sim/compiler/cost_model.h"
#include "xla_plugin/devices/sim/executor/executor.h"
#include "xla_plugin/devices/sim/executor/program_validator.h"
#include "xla_plugin/devices/sim/program/serialization.h"

namespace pjrtkit {
namespace sim {
namespace {

// The executable's envelope: magic, version, then three length-prefixed sections (program bytes,
// which carry their own checksum; compile options; StableHLO), then an FNV-1a-64 of all before it.
constexpr char kMagic[] = "PJRTKIT-SIM-EXECUTABLE";
constexpr uint32_t kVersion = 1;

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void AppendFixed(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool ReadFixed(std::string_view* in, int bytes, uint64_t* value) {
  if (in->size() < static_cast<size_t>(bytes)) return false;
  *value = 0;
  for (int i = 0; i < bytes; ++i) {
    *value |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  }
  in->remove_prefix(bytes);
  return true;
}

bool ReadSection(std::string_view* in, std::string* out) {
  uint64_t size = 0;
  if (!ReadFixed(in, 8, &size) || size > in->size()) return false;
  out->assign(in->data(), size);
  in->remove_prefix(size);
  return true;
}

std::string Hex(uint64_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) text[i] = kDigits[value & 0xf];
  return text;
}

}  // namespace

SimExecutable::SimExecutable(std::shared_ptr<const DeviceProgram> program,
                             SimCompileOptions options, std::string compile_options,
                             std::string stablehlo, CompileReport report)
    : program_(std::move(program)),
      options_(std::move(options)),
      compile_options_(std::move(compile_options)),
      stablehlo_(std::move(stablehlo)),
      report_(report) {
  program_bytes_ = SerializeProgram(*program_);
  serialized_.append(kMagic, sizeof(kMagic));
  AppendFixed(kVersion, 4, &serialized_);
  for (const std::string* section : {&program_bytes_, &compile_options_, &stablehlo_}) {
    AppendFixed(section->size(), 8, &serialized_);
    serialized_ += *section;
  }
  const uint64_t checksum = Fnv1a64(serialized_);
  AppendFixed(checksum, 8, &serialized_);
  fingerprint_ = Hex(Fnv1a64(program_bytes_) ^ (Fnv1a64(compile_options_) * 31));
}

StatusOr<std::shared_ptr<SimExecutable>> SimExecutable::Deserialize(const std::string& bytes,
                                                                    int device_count) {
  std::string_view in(bytes);
  if (in.size() < sizeof(kMagic) || std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) {
    return InvalidArgument("the bytes are not a serialized sim executable");
  }
  if (in.size() < sizeof(kMagic) + 4 + 8 ||
      Fnv1a64(in.substr(0, in.size() - 8)) !=
          [&] {
            std::string_view tail = in.substr(in.size() - 8);
            uint64_t v = 0;
            ReadFixed(&tail, 8, &v);
            return v;
          }()) {
    return InvalidArgument("the serialized sim executable is corrupted (checksum mismatch)");
  }
  in.remove_prefix(sizeof(kMagic));
  in.remove_suffix(8);
  uint64_t version = 0;
  ReadFixed(&in, 4, &version);
  if (version != kVersion) {
    return InvalidArgument("the serialized sim executable has format version " +
                           std::to_string(version) + "; this plugin reads version " +
                           std::to_string(kVersion) + " (recompile the program)");
  }
  std::string program_bytes, compile_options, stablehlo;
  if (!ReadSection(&in, &program_bytes) || !ReadSection(&in, &compile_options) ||
      !ReadSection(&in, &stablehlo) || !in.empty()) {
    return InvalidArgument("the serialized sim executable is truncated or malformed");
  }
  PJRTKIT_ASSIGN_OR_RETURN(DeviceProgram program, DeserializeProgram(program_bytes));
  Status valid = ValidateProgram(program);
  if (!valid.ok()) {
    return InvalidArgument("the serialized sim executable holds an invalid program: " +
                           valid.message());
  }
  PJRTKIT_ASSIGN_OR_RETURN(SimCompileOptions options,
                           SimCompileOptions::Read(compile_options, device_count));
  if (options.num_replicas != program.num_replicas ||
      options.num_partitions != program.num_partitions) {
    return InvalidArgument("the serialized sim executable's options disagree with its program");
  }
  CompileReport report;
  report.computations = static_cast<int64_t>(program.computations.size());
  return std::make_shared<SimExecutable>(std::make_shared<const DeviceProgram>(std::move(program)),
                                         std::move(options), std::move(compile_options),
                                         std::move(stablehlo), report);
}

StatusOr<std::vector<ElementType>> SimExecutable::output_element_types() const {
  std::vector<ElementType> types;
  const Computation& entry = program_->entry();
  for (Slot s : entry.results) types.push_back(entry.slot_types[s].type);
  return types;
}

StatusOr<std::vector<std::vector<int64_t>>> SimExecutable::output_dimensions() const {
  std::vector<std::vector<int64_t>> dims;
  const Computation& entry = program_->entry();
  for (Slot s : entry.results) dims.push_back(entry.slot_types[s].dims);
  return dims;
}

StatusOr<std::vector<MemoryLayout>> SimExecutable::parameter_layouts() const {
  std::vector<MemoryLayout> layouts;
  const Computation& entry = program_->entry();
  for (Slot s : entry.parameters) layouts.push_back(RowMajorLayout(entry.slot_types[s].dims.size()));
  return layouts;
}

StatusOr<std::vector<std::string>> SimExecutable::output_memory_kinds() const {
  return std::vector<std::string>(num_outputs(), "device");
}

StatusOr<std::vector<std::string>> SimExecutable::parameter_memory_kinds() const {
  return std::vector<std::string>(program_->entry().parameters.size(), "device");
}

StatusOr<Program> SimExecutable::optimized_program() const {
  Program program;
  program.format = "mlir";
  program.code = stablehlo_;
  return program;
}

int64_t SimExecutable::SizeOfGeneratedCodeInBytes() const {
  return static_cast<int64_t>(program_bytes_.size());
}

StatusOr<CompiledMemoryStats> SimExecutable::GetCompiledMemoryStats() const {
  CompiledMemoryStats stats;
  const Computation& entry = program_->entry();
  for (Slot s : entry.parameters) stats.argument_size_in_bytes += entry.slot_types[s].byte_size();
  for (Slot s : entry.results) stats.output_size_in_bytes += entry.slot_types[s].byte_size();
  stats.temp_size_in_bytes = Executor::ScratchBytes(*program_);
  stats.generated_code_size_in_bytes = SizeOfGeneratedCodeInBytes();
  stats.total_size_in_bytes = stats.argument_size_in_bytes + stats.output_size_in_bytes +
                              stats.temp_size_in_bytes;
  stats.peak_memory_in_bytes = stats.total_size_in_bytes;
  return stats;
}

StatusOr<AttributeMap> SimExecutable::GetCostAnalysis() const {
  const ProgramCost cost = EstimateCost(*program_);
  AttributeMap properties;
  properties["flops"] = static_cast<float>(cost.flops);
  properties["transcendentals"] = static_cast<float>(cost.transcendentals);
  properties["bytes accessed"] = static_cast<float>(cost.bytes_accessed);
  return properties;
}

StatusOr<std::optional<std::vector<std::string>>> SimExecutable::parameter_shardings() const {
  std::vector<std::string> shardings = program_->parameter_shardings;
  shardings.resize(program_->entry().parameters.size());  // None recorded: all replicated.
  return std::optional<std::vector<std::string>>(std::move(shardings));
}

StatusOr<std::optional<std::vector<std::string>>> SimExecutable::output_shardings() const {
  std::vector<std::string> shardings = program_->result_shardings;
  shardings.resize(program_->entry().results.size());
  return std::optional<std::vector<std::string>>(std::move(shardings));
}

}  // namespace sim
}  // namespace pjrtkit
