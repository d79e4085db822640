// ScratchLayout: how one execution's scratch device memory is laid out: each computation's arena,
// then, while an instruction runs a nested computation (a loop, a branch), that instruction's
// loop state and the nested computation's own scratch.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_SCRATCH_LAYOUT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_SCRATCH_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// Byte alignment of every block in scratch memory.
inline constexpr int64_t kScratchAlignment = 64;

// Rounds `bytes` up to kScratchAlignment.
int64_t AlignScratch(int64_t bytes);

// Where a while loop keeps its state inside its instruction's nested scratch.
struct WhileLayout {
  std::vector<int64_t> state_a_offsets;  // Carried value i, as the iteration reads it.
  std::vector<int64_t> state_b_offsets;  // Carried value i, as the iteration writes it.
  std::vector<bool> invariant;           // The body returns carried value i unchanged: one buffer.
  int64_t pred_offset = 0;               // The condition's result.
  int64_t inner_offset = 0;              // Scratch of the condition and the body.
  int64_t total = 0;                     // Bytes in all.
};

// The layout of a program that passed ValidateProgram (computations refer only forward).
class ScratchLayout {
 public:
  explicit ScratchLayout(const DeviceProgram& program);

  // Bytes of computation `index`'s arena (aligned).
  int64_t ArenaBytes(int32_t index) const;
  // Bytes computation `index` needs in all: its arena, then the most any of its instructions
  // needs for nested computations.
  int64_t TotalBytes(int32_t index) const;
  // The layout of `instruction`, a while loop of `computation`.
  WhileLayout While(const Computation& computation, const Instruction& instruction) const;

 private:
  int64_t NestedBytes(const Computation& computation, const Instruction& instruction) const;

  const DeviceProgram& program_;
  std::vector<int64_t> total_;  // TotalBytes of each computation.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_SCRATCH_LAYOUT_H_
