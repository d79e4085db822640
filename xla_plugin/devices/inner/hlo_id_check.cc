#include "xla_plugin/devices/inner/hlo_id_check.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "xla_plugin/devices/inner/proto_reader.h"

namespace pjrtkit {
namespace inner {
namespace {

constexpr int kWithConfigModuleField = 1;    // HloModuleProtoWithConfig.hlo_module
constexpr int kModuleComputationsField = 3;  // HloModuleProto.computations
constexpr int kComputationNameField = 1;     // HloComputationProto.name
constexpr int kComputationInstructionsField = 2;  // HloComputationProto.instructions
constexpr int kInstructionIdField = 35;      // HloInstructionProto.id

// What one computation asks of the id tables; `ok` is false when its bytes are malformed.
struct ComputationIds {
  bool ok = true;
  uint64_t instructions = 0;
  uint64_t entries = 0;  // Largest id's low 32 bits + 1 (0 without instructions).
  std::string_view name;
};

ComputationIds ReadComputation(std::string_view computation) {
  ComputationIds out;
  ProtoReader reader(computation);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return ComputationIds{false};
    if (field->number == kComputationNameField && field->type == WireType::kLengthDelimited) {
      out.name = field->bytes;
    } else if (field->number == kComputationInstructionsField &&
               field->type == WireType::kLengthDelimited) {
      ++out.instructions;
      ProtoReader instruction(field->bytes);
      while (!instruction.done()) {
        StatusOr<ProtoField> f = instruction.Next();
        if (!f.ok()) return ComputationIds{false};
        if (f->number == kInstructionIdField && f->type == WireType::kVarint) {
          out.entries = std::max<uint64_t>(out.entries, (f->varint & 0xffffffffu) + 1);
        }
      }
    }
  }
  return out;
}

}  // namespace

Status HloIdCheck::Check(const Program& program, const char* what) {
  if (program.format == "hlo") return CheckModule(program.code, what);
  if (program.format != "hlo_with_config") return OkStatus();
  ProtoReader reader(program.code);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return OkStatus();
    if (field->number == kWithConfigModuleField && field->type == WireType::kLengthDelimited) {
      PJRTKIT_RETURN_IF_ERROR(CheckModule(field->bytes, what));
    }
  }
  return OkStatus();
}

Status HloIdCheck::CheckModule(std::string_view module, const char* what) {
  uint64_t instructions = 0;
  uint64_t entries = 0;
  ComputationIds largest;
  ProtoReader reader(module);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return OkStatus();
    if (field->number != kModuleComputationsField ||
        field->type != WireType::kLengthDelimited) {
      continue;
    }
    ComputationIds computation = ReadComputation(field->bytes);
    if (!computation.ok) return OkStatus();
    instructions += computation.instructions;
    entries += computation.entries;  // At most 2^32 per computation: no overflow.
    if (computation.entries > largest.entries) largest = computation;
  }
  const uint64_t allowed = std::max(kMinAllowedEntries, kEntriesPerInstruction * instructions);
  if (entries <= allowed) return OkStatus();
  return InvalidArgument(
      std::string(what) + ": program: the HLO module's instruction ids are too sparse for XLA, "
      "which allocates one table entry per id (low 32 bits) up to each computation's largest: " +
      std::to_string(entries) + " entries (" + std::to_string(entries * 8 >> 20) +
      " MiB) for " + std::to_string(instructions) + " instructions; computation '" +
      std::string(largest.name) + "' alone reaches id " + std::to_string(largest.entries - 1) +
      ". Accepted: at most max(" + std::to_string(kMinAllowedEntries) + ", " +
      std::to_string(kEntriesPerInstruction) +
      " x instructions) entries; number the instructions densely");
}

}  // namespace inner
}  // namespace pjrtkit
