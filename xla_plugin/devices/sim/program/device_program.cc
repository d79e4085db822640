#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

const char* OpcodeName(Opcode opcode) {
  switch (opcode) {
    case Opcode::kFused: return "fused";
    case Opcode::kConstant: return "constant";
    case Opcode::kCopy: return "copy";
    case Opcode::kTranspose: return "transpose";
    case Opcode::kSlice: return "slice";
    case Opcode::kDynamicSlice: return "dynamic_slice";
    case Opcode::kDynamicUpdateSlice: return "dynamic_update_slice";
    case Opcode::kConcatenate: return "concatenate";
    case Opcode::kPad: return "pad";
    case Opcode::kReverse: return "reverse";
    case Opcode::kReduce: return "reduce";
    case Opcode::kReduceWindow: return "reduce_window";
    case Opcode::kSelectAndScatter: return "select_and_scatter";
    case Opcode::kDotGeneral: return "dot_general";
    case Opcode::kConvolution: return "convolution";
    case Opcode::kGather: return "gather";
    case Opcode::kScatter: return "scatter";
    case Opcode::kSort: return "sort";
    case Opcode::kWhile: return "while";
    case Opcode::kCase: return "case";
    case Opcode::kCollective: return "collective";
    case Opcode::kPartitionId: return "partition_id";
    case Opcode::kReplicaId: return "replica_id";
    case Opcode::kRngBitGenerator: return "rng_bit_generator";
    case Opcode::kCustomCall: return "custom_call";
  }
  return "unknown";
}

}  // namespace sim
}  // namespace pjrtkit
