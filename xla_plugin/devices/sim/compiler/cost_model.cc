#include "xla_plugin/devices/sim/compiler/cost_model.h"

namespace pjrtkit {
namespace sim {
namespace {

bool IsTranscendental(EwOp op) {
  switch (op) {
    case EwOp::kExp:
    case EwOp::kExpm1:
    case EwOp::kLog:
    case EwOp::kLog1p:
    case EwOp::kLogistic:
    case EwOp::kTanh:
    case EwOp::kSine:
    case EwOp::kCosine:
    case EwOp::kTan:
    case EwOp::kRsqrt:
    case EwOp::kCbrt:
    case EwOp::kPower:
    case EwOp::kAtan2:
      return true;
    default:
      return false;
  }
}

// Product of `dims` at `indices`.
double Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& indices) {
  double n = 1;
  for (int64_t i : indices) {
    if (i >= 0 && static_cast<size_t>(i) < dims.size()) n *= static_cast<double>(dims[i]);
  }
  return n;
}

void AddComputation(const DeviceProgram& program, int32_t index, int depth, ProgramCost* cost) {
  if (depth > 64) return;
  const Computation& c = program.computations[index];
  for (const Instruction& instruction : c.instructions) {
    for (Slot s : instruction.operands) {
      cost->bytes_accessed += static_cast<double>(c.slot_types[s].byte_size());
    }
    for (Slot s : instruction.results) {
      cost->bytes_accessed += static_cast<double>(c.slot_types[s].byte_size());
    }
    const double elements = instruction.results.empty()
                                ? 0
                                : static_cast<double>(
                                      c.slot_types[instruction.results[0]].num_elements());
    switch (instruction.opcode) {
      case Opcode::kFused: {
        const auto& fused = std::get<FusedElementwise>(instruction.params);
        for (const EwStep& step : fused.steps) {
          if (step.op == EwOp::kInput || step.op == EwOp::kConstant || step.op == EwOp::kIota) {
            continue;
          }
          cost->flops += elements;
          if (IsTranscendental(step.op)) cost->transcendentals += elements;
        }
        break;
      }
      case Opcode::kDotGeneral: {
        const auto& p = std::get<DotGeneralParams>(instruction.params);
        cost->flops += 2 * elements *
                       Product(c.slot_types[instruction.operands[0]].dims,
                               p.lhs_contracting_dimensions);
        break;
      }
      case Opcode::kConvolution: {
        const auto& p = std::get<ConvolutionParams>(instruction.params);
        const ArrayType& kernel = c.slot_types[instruction.operands[1]];
        double window = Product(kernel.dims, p.kernel_spatial_dimensions);
        window *= Product(kernel.dims, {p.kernel_input_feature_dimension});
        cost->flops += 2 * elements * window;
        break;
      }
      case Opcode::kReduce:
      case Opcode::kReduceWindow:
      case Opcode::kScatter:
      case Opcode::kSelectAndScatter:
      case Opcode::kCollective:
        for (Slot s : instruction.operands) {
          cost->flops += static_cast<double>(c.slot_types[s].num_elements());
        }
        break;
      case Opcode::kWhile: {
        const auto& p = std::get<WhileParams>(instruction.params);
        AddComputation(program, p.cond, depth + 1, cost);
        AddComputation(program, p.body, depth + 1, cost);
        break;
      }
      case Opcode::kCase:
        for (int32_t branch : std::get<CaseParams>(instruction.params).branches) {
          AddComputation(program, branch, depth + 1, cost);
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace

ProgramCost EstimateCost(const DeviceProgram& program) {
  ProgramCost cost;
  if (!program.computations.empty()) AddComputation(program, 0, 0, &cost);
  return cost;
}

}  // namespace sim
}  // namespace pjrtkit
