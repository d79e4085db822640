#include "xla_plugin/devices/sim/executor/scratch_layout.h"

#include <algorithm>

namespace pjrtkit {
namespace sim {

int64_t AlignScratch(int64_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

ScratchLayout::ScratchLayout(const DeviceProgram& program)
    : program_(program), total_(program.computations.size(), 0) {
  // Computations refer only to later ones: fill from the last.
  for (int32_t c = static_cast<int32_t>(program.computations.size()) - 1; c >= 0; --c) {
    const Computation& computation = program.computations[c];
    int64_t nested = 0;
    for (const Instruction& instruction : computation.instructions) {
      nested = std::max(nested, NestedBytes(computation, instruction));
    }
    total_[c] = ArenaBytes(c) + nested;
  }
}

int64_t ScratchLayout::ArenaBytes(int32_t index) const {
  return AlignScratch(program_.computations[index].arena_bytes);
}

int64_t ScratchLayout::TotalBytes(int32_t index) const { return total_[index]; }

int64_t ScratchLayout::NestedBytes(const Computation& computation,
                                   const Instruction& instruction) const {
  if (instruction.opcode == Opcode::kWhile) return While(computation, instruction).total;
  if (instruction.opcode == Opcode::kCase) {
    int64_t most = 0;
    for (int32_t branch : std::get<CaseParams>(instruction.params).branches) {
      most = std::max(most, total_[branch]);
    }
    return most;
  }
  return 0;
}

WhileLayout ScratchLayout::While(const Computation& computation,
                                 const Instruction& instruction) const {
  const WhileParams& params = std::get<WhileParams>(instruction.params);
  const Computation& body = program_.computations[params.body];
  WhileLayout layout;
  int64_t offset = 0;
  const size_t carried = instruction.results.size();
  for (size_t i = 0; i < carried; ++i) {
    const int64_t bytes = AlignScratch(computation.slot_types[instruction.results[i]].byte_size());
    layout.invariant.push_back(body.results[i] == body.parameters[i]);
    layout.state_a_offsets.push_back(offset);
    offset += bytes;
    layout.state_b_offsets.push_back(layout.invariant[i] ? layout.state_a_offsets[i] : offset);
    if (!layout.invariant[i]) offset += bytes;
  }
  layout.pred_offset = offset;
  offset += kScratchAlignment;
  layout.inner_offset = offset;
  layout.total = offset + std::max(total_[params.cond], total_[params.body]);
  return layout;
}

}  // namespace sim
}  // namespace pjrtkit
