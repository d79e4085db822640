// DeviceProgram: what the sim compiler makes of a StableHLO module and the executor runs: the
// device's own program (instructions over statically typed slots, attributes already decoded,
// constants inline, a buffer plan), independent of MLIR. It serializes (serialization.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_DEVICE_PROGRAM_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_DEVICE_PROGRAM_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/program/array_type.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// Index of a value in its Computation.
using Slot = int32_t;

// What an instruction does. The params alternative each opcode uses is noted.
enum class Opcode : uint8_t {
  kFused,               // FusedElementwise: elementwise ops, broadcasts, iotas, converts.
  kConstant,            // ConstantParams.
  kCopy,                // std::monostate: result = operand, same bytes (reshape, bitcast).
  kTranspose,           // TransposeParams.
  kSlice,               // SliceParams.
  kDynamicSlice,        // DynamicSliceParams.
  kDynamicUpdateSlice,  // DynamicUpdateSliceParams.
  kConcatenate,         // ConcatenateParams.
  kPad,                 // PadParams.
  kReverse,             // ReverseParams.
  kReduce,              // ReduceParams.
  kReduceWindow,        // ReduceWindowParams.
  kSelectAndScatter,    // SelectAndScatterParams.
  kDotGeneral,          // DotGeneralParams.
  kConvolution,         // ConvolutionParams.
  kGather,              // GatherParams.
  kScatter,             // ScatterParams.
  kSort,                // SortParams.
  kWhile,               // WhileParams.
  kCase,                // CaseParams.
  kCollective,          // CollectiveParams.
  kPartitionId,         // std::monostate: u32 scalar, this device's partition.
  kReplicaId,           // std::monostate: u32 scalar, this device's replica.
  kRngBitGenerator,     // RngBitGeneratorParams.
  kCustomCall,          // CustomCallParams.
};

// The number of opcodes (for range checks of deserialized programs).
inline constexpr int kNumOpcodes = static_cast<int>(Opcode::kCustomCall) + 1;

// "fused", "dot_general", ... for messages.
const char* OpcodeName(Opcode opcode);

using InstructionParams =
    std::variant<std::monostate, FusedElementwise, ConstantParams, TransposeParams, SliceParams,
                 DynamicSliceParams, DynamicUpdateSliceParams, ConcatenateParams, PadParams,
                 ReverseParams, ReduceParams, ReduceWindowParams, SelectAndScatterParams,
                 DotGeneralParams, ConvolutionParams, GatherParams, ScatterParams, SortParams,
                 WhileParams, CaseParams, CollectiveParams, RngBitGeneratorParams,
                 CustomCallParams>;

// One step of a computation: reads `operands`, writes `results`.
struct Instruction {
  Opcode opcode = Opcode::kCopy;
  std::vector<Slot> operands;
  std::vector<Slot> results;
  InstructionParams params;
  // The StableHLO op(s) it came from and their source location, for run-time errors.
  std::string origin;
};

// Where a slot's bytes live while its computation runs (the buffer plan).
struct SlotPlace {
  enum class Kind : uint8_t {
    kArena,      // `value`: byte offset in the computation's temporary arena.
    kParameter,  // `value`: the computation's parameter index (the caller's buffer).
    kResult,     // `value`: the computation's result index (the caller's buffer).
    kAlias,      // `value`: another slot with the same bytes, defined earlier.
  };
  Kind kind = Kind::kArena;
  int64_t value = 0;
};

// A function of the program: the entry, a loop's condition or body, a case branch.
struct Computation {
  std::string name;
  std::vector<ArrayType> slot_types;   // Type of every slot.
  std::vector<Slot> parameters;        // Slots holding the parameters, in order.
  std::vector<Slot> results;           // Slots returned, in order (may repeat, may be parameters).
  std::vector<Instruction> instructions;
  // The buffer plan: a place for every slot, and the arena's size. A result whose slot is not
  // placed as that result (a parameter, an alias, another result's slot) is copied at the end.
  std::vector<SlotPlace> places;
  int64_t arena_bytes = 0;
};

// A compiled program.
struct DeviceProgram {
  std::string name;                        // The module's name ("jit_f").
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  // computations[0] is the entry; a computation refers (while, case) only to computations
  // after itself, so the references form no cycle.
  std::vector<Computation> computations;
  // For each entry parameter: the entry result whose buffer it may become when the caller donates
  // it (StableHLO tf.aliasing_output), or -1.
  std::vector<int32_t> parameter_aliases;
  // For each entry parameter: whether JAX marked it donatable (jax.buffer_donor or an alias).
  std::vector<bool> parameter_donatable;
  // For each entry parameter and result: its sharding over the program's devices, a serialized
  // xla.OpSharding (empty: replicated), as PJRT reports it to the framework. Either vector may be
  // empty: every parameter (result) replicated.
  std::vector<std::string> parameter_shardings;
  std::vector<std::string> result_shardings;

  const Computation& entry() const { return computations.front(); }
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_DEVICE_PROGRAM_H_
