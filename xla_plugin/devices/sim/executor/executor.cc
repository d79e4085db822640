#include "xla_plugin/devices/sim/executor/executor.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "xla_plugin/devices/sim/executor/scratch_layout.h"
#include "xla_plugin/devices/sim/kernels/collectives.h"
#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/data_movement.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"

namespace pjrtkit {
namespace sim {
namespace {

// One execution of a program on one device: runs computations recursively (loops, branches).
class Frame {
 public:
  Frame(const DeviceProgram& program, const ExecutionPlace& place, const ScratchLayout& layout)
      : program_(program), place_(place), layout_(layout) {}

  // Runs computation `index` with `params` and `results` (caller-owned buffers of its types) in
  // `scratch` (layout_.TotalBytes(index) bytes).
  Status RunComputation(int32_t index, const std::vector<const void*>& params,
                        const std::vector<void*>& results, uint8_t* scratch);

 private:
  Status RunInstruction(const Computation& computation, const Instruction& instruction,
                        const std::vector<void*>& slots, uint8_t* nested);
  Status RunKernel(const Computation& computation, const Instruction& instruction,
                   const std::vector<void*>& slots);
  Status RunWhile(const Computation& computation, const Instruction& instruction,
                  const std::vector<void*>& slots, uint8_t* nested);
  Status RunCase(const Computation& computation, const Instruction& instruction,
                 const std::vector<void*>& slots, uint8_t* nested);

  const DeviceProgram& program_;
  const ExecutionPlace& place_;
  const ScratchLayout& layout_;
  int64_t collective_step_ = 0;  // Collectives this device ran so far in this execution.
};

Status Frame::RunComputation(int32_t index, const std::vector<const void*>& params,
                             const std::vector<void*>& results, uint8_t* scratch) {
  const Computation& computation = program_.computations[index];
  const size_t num_slots = computation.slot_types.size();
  std::vector<void*> slots(num_slots, nullptr);
  for (size_t s = 0; s < num_slots; ++s) {
    const SlotPlace& place = computation.places[s];
    switch (place.kind) {
      case SlotPlace::Kind::kArena:
        slots[s] = scratch + place.value;
        break;
      case SlotPlace::Kind::kParameter:
        slots[s] = const_cast<void*>(params[place.value]);
        break;
      case SlotPlace::Kind::kResult:
        slots[s] = results[place.value];
        break;
      case SlotPlace::Kind::kAlias:
        break;  // Below: an alias names an earlier slot, resolved by then.
    }
    if (place.kind == SlotPlace::Kind::kAlias) slots[s] = slots[place.value];
  }
  uint8_t* nested = scratch + layout_.ArenaBytes(index);
  for (const Instruction& instruction : computation.instructions) {
    PJRTKIT_RETURN_IF_ERROR(RunInstruction(computation, instruction, slots, nested));
  }
  for (size_t j = 0; j < computation.results.size(); ++j) {
    const Slot slot = computation.results[j];
    const SlotPlace& place = computation.places[slot];
    if (place.kind == SlotPlace::Kind::kResult && place.value == static_cast<int64_t>(j)) continue;
    if (slots[slot] == results[j]) continue;
    std::memcpy(results[j], slots[slot], computation.slot_types[slot].byte_size());
  }
  return OkStatus();
}

Status Frame::RunInstruction(const Computation& computation, const Instruction& instruction,
                             const std::vector<void*>& slots, uint8_t* nested) {
  switch (instruction.opcode) {
    case Opcode::kWhile:
      return RunWhile(computation, instruction, slots, nested);
    case Opcode::kCase:
      return RunCase(computation, instruction, slots, nested);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId: {
      const uint32_t value = static_cast<uint32_t>(
          instruction.opcode == Opcode::kPartitionId ? place_.partition : place_.replica);
      std::memcpy(slots[instruction.results[0]], &value, sizeof(value));
      return OkStatus();
    }
    case Opcode::kConstant: {
      const std::string& bytes = std::get<ConstantParams>(instruction.params).bytes;
      std::memcpy(slots[instruction.results[0]], bytes.data(), bytes.size());
      return OkStatus();
    }
    case Opcode::kFused: {
      const FusedElementwise& fused = std::get<FusedElementwise>(instruction.params);
      std::vector<const void*> inputs;
      inputs.reserve(instruction.operands.size());
      for (Slot s : instruction.operands) inputs.push_back(slots[s]);
      std::vector<void*> outputs;
      outputs.reserve(instruction.results.size());
      for (Slot s : instruction.results) outputs.push_back(slots[s]);
      if (place_.workers != nullptr && place_.workers->threads() > 0) {
        WorkerPool* workers = place_.workers;
        EvaluateParallel(
            fused, inputs.data(), outputs.data(),
            [workers](int64_t count, const std::function<void(int64_t)>& part) {
              workers->ParallelFor(count, part);
            },
            workers->threads() + 1);
      } else {
        Evaluate(fused, inputs.data(), outputs.data());
      }
      return OkStatus();
    }
    default:
      return RunKernel(computation, instruction, slots);
  }
}

Status Frame::RunKernel(const Computation& computation, const Instruction& instruction,
                        const std::vector<void*>& slots) {
  std::vector<ArrayArg> operands;
  operands.reserve(instruction.operands.size());
  for (Slot s : instruction.operands) operands.push_back({&computation.slot_types[s], slots[s]});
  std::vector<ArrayResult> results;
  results.reserve(instruction.results.size());
  for (Slot s : instruction.results) results.push_back({&computation.slot_types[s], slots[s]});
  const InstructionParams& p = instruction.params;
  switch (instruction.opcode) {
    case Opcode::kCopy:
      return RunCopy(operands, results);
    case Opcode::kTranspose:
      return RunTranspose(std::get<TransposeParams>(p), operands, results);
    case Opcode::kSlice:
      return RunSlice(std::get<SliceParams>(p), operands, results);
    case Opcode::kDynamicSlice:
      return RunDynamicSlice(std::get<DynamicSliceParams>(p), operands, results);
    case Opcode::kDynamicUpdateSlice:
      return RunDynamicUpdateSlice(std::get<DynamicUpdateSliceParams>(p), operands, results);
    case Opcode::kConcatenate:
      return RunConcatenate(std::get<ConcatenateParams>(p), operands, results);
    case Opcode::kPad:
      return RunPad(std::get<PadParams>(p), operands, results);
    case Opcode::kReverse:
      return RunReverse(std::get<ReverseParams>(p), operands, results);
    case Opcode::kReduce:
      return RunReduce(std::get<ReduceParams>(p), operands, results);
    case Opcode::kReduceWindow:
      return RunReduceWindow(std::get<ReduceWindowParams>(p), operands, results);
    case Opcode::kSelectAndScatter:
      return RunSelectAndScatter(std::get<SelectAndScatterParams>(p), operands, results);
    case Opcode::kDotGeneral:
      return RunDotGeneral(std::get<DotGeneralParams>(p), operands, results);
    case Opcode::kConvolution:
      return RunConvolution(std::get<ConvolutionParams>(p), operands, results);
    case Opcode::kGather:
      return RunGather(std::get<GatherParams>(p), operands, results);
    case Opcode::kScatter:
      return RunScatter(std::get<ScatterParams>(p), operands, results);
    case Opcode::kSort:
      return RunSort(std::get<SortParams>(p), operands, results);
    case Opcode::kRngBitGenerator:
      return RunRngBitGenerator(std::get<RngBitGeneratorParams>(p), operands, results);
    case Opcode::kCustomCall: {
      const CustomCallParams& call = std::get<CustomCallParams>(p);
      if (place_.custom_calls == nullptr) {
        return FailedPrecondition("custom call @" + call.target +
                                  ": this execution was given no FFI handlers");
      }
      return place_.custom_calls->Call(call, operands, results);
    }
    case Opcode::kCollective: {
      CollectiveContext context;
      context.logical_id = place_.replica * program_.num_partitions + place_.partition;
      context.num_participants = place_.num_participants;
      context.rendezvous = place_.rendezvous;
      context.step = &collective_step_;
      return RunCollective(std::get<CollectiveParams>(p), context, operands, results);
    }
    default:
      return Internal(std::string("sim executor: no kernel for opcode ") +
                      OpcodeName(instruction.opcode));
  }
}

Status Frame::RunWhile(const Computation& computation, const Instruction& instruction,
                       const std::vector<void*>& slots, uint8_t* nested) {
  const WhileParams& params = std::get<WhileParams>(instruction.params);
  const WhileLayout layout = layout_.While(computation, instruction);
  const Computation& body = program_.computations[params.body];
  const size_t carried = instruction.results.size();
  // Loop state A (read by this iteration) and B (written by it); a value the body returns
  // unchanged keeps one buffer.
  std::vector<void*> state_a(carried), state_b(carried);
  for (size_t i = 0; i < carried; ++i) {
    state_a[i] = nested + layout.state_a_offsets[i];
    state_b[i] = layout.invariant[i] ? state_a[i] : nested + layout.state_b_offsets[i];
    std::memcpy(state_a[i], slots[instruction.operands[i]],
                computation.slot_types[instruction.results[i]].byte_size());
  }
  std::vector<const void*> loop_params(instruction.operands.size());
  for (size_t i = carried; i < instruction.operands.size(); ++i) {
    loop_params[i] = slots[instruction.operands[i]];
  }
  uint8_t* pred = nested + layout.pred_offset;
  uint8_t* inner = nested + layout.inner_offset;
  while (true) {
    for (size_t i = 0; i < carried; ++i) loop_params[i] = state_a[i];
    PJRTKIT_RETURN_IF_ERROR(RunComputation(params.cond, loop_params, {pred}, inner));
    if (*pred == 0) break;
    PJRTKIT_RETURN_IF_ERROR(RunComputation(params.body, loop_params, state_b, inner));
    std::swap(state_a, state_b);
  }
  (void)body;
  for (size_t i = 0; i < carried; ++i) {
    std::memcpy(slots[instruction.results[i]], state_a[i],
                computation.slot_types[instruction.results[i]].byte_size());
  }
  return OkStatus();
}

Status Frame::RunCase(const Computation& computation, const Instruction& instruction,
                      const std::vector<void*>& slots, uint8_t* nested) {
  const CaseParams& params = std::get<CaseParams>(instruction.params);
  int32_t index = 0;
  std::memcpy(&index, slots[instruction.operands[0]], sizeof(index));
  const int32_t count = static_cast<int32_t>(params.branches.size());
  if (index < 0 || index >= count) index = count - 1;  // The spec: out of range -> last branch.
  std::vector<const void*> branch_params;
  for (size_t i = 1; i < instruction.operands.size(); ++i) {
    branch_params.push_back(slots[instruction.operands[i]]);
  }
  std::vector<void*> results;
  for (Slot s : instruction.results) results.push_back(slots[s]);
  (void)computation;
  return RunComputation(params.branches[index], branch_params, results, nested);
}

}  // namespace

int64_t Executor::ScratchBytes(const DeviceProgram& program) {
  return ScratchLayout(program).TotalBytes(0);
}

Status Executor::Run(const DeviceProgram& program, const ExecutionPlace& place,
                     const std::vector<const void*>& arguments, const std::vector<void*>& results,
                     void* scratch) {
  const ScratchLayout layout(program);
  Frame frame(program, place, layout);
  Status status =
      frame.RunComputation(0, arguments, results, static_cast<uint8_t*>(scratch));
  if (!status.ok() && place.rendezvous != nullptr) place.rendezvous->Abort(status);
  return status;
}

}  // namespace sim
}  // namespace pjrtkit
