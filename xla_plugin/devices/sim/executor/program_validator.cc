#include "xla_plugin/devices/sim/executor/program_validator.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/kernels/collectives.h"
#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/data_movement.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"

namespace pjrtkit {
namespace sim {
namespace {

// The most bytes one array may have (keeps offset arithmetic far from overflow).
constexpr int64_t kMaxArrayBytes = int64_t{1} << 46;

bool SupportedType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kBF16:
    case ElementType::kC64:
    case ElementType::kC128:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3:
    case ElementType::kF8E3M4:
    case ElementType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

Status CheckArrayType(const ArrayType& type) {
  if (!SupportedType(type.type)) {
    return InvalidArgument(std::string("element type ") + ElementTypeName(type.type) +
                           " is not supported by the sim device");
  }
  int64_t bytes = type.element_bytes();
  for (int64_t d : type.dims) {
    if (d < 0) return InvalidArgument("dimension " + std::to_string(d) + " is negative");
    if (d > 0 && bytes > kMaxArrayBytes / d) {
      return InvalidArgument("array " + type.ToString() + " is too large");
    }
    bytes *= d;
  }
  return OkStatus();
}

// Validates one computation of `program`.
class ComputationValidator {
 public:
  ComputationValidator(const DeviceProgram& program, int32_t index)
      : program_(program), index_(index), computation_(program.computations[index]) {}

  Status Validate() {
    PJRTKIT_RETURN_IF_ERROR(ValidateSlots());
    PJRTKIT_RETURN_IF_ERROR(ValidatePlaces());
    for (size_t i = 0; i < computation_.instructions.size(); ++i) {
      Status status = ValidateInstruction(computation_.instructions[i]);
      if (!status.ok()) {
        const Instruction& instruction = computation_.instructions[i];
        return InvalidArgument(Where() + ", instruction " + std::to_string(i) + " (" +
                               OpcodeName(instruction.opcode) +
                               (instruction.origin.empty() ? "" : ", " + instruction.origin) +
                               "): " + status.message());
      }
    }
    return OkStatus();
  }

 private:
  std::string Where() const {
    return "computation " + std::to_string(index_) + " '" + computation_.name + "'";
  }

  Status Fail(const std::string& what) const { return InvalidArgument(Where() + ": " + what); }

  bool ValidSlot(Slot s) const {
    return s >= 0 && static_cast<size_t>(s) < computation_.slot_types.size();
  }

  Status ValidateSlots() {
    for (size_t s = 0; s < computation_.slot_types.size(); ++s) {
      Status status = CheckArrayType(computation_.slot_types[s]);
      if (!status.ok()) return Fail("slot " + std::to_string(s) + ": " + status.message());
    }
    for (Slot s : computation_.parameters) {
      if (!ValidSlot(s)) return Fail("parameter slot " + std::to_string(s) + " out of range");
    }
    for (Slot s : computation_.results) {
      if (!ValidSlot(s)) return Fail("result slot " + std::to_string(s) + " out of range");
    }
    return OkStatus();
  }

  Status ValidatePlaces() {
    if (computation_.places.size() != computation_.slot_types.size()) {
      return Fail("has " + std::to_string(computation_.places.size()) + " places for " +
                  std::to_string(computation_.slot_types.size()) + " slots");
    }
    if (computation_.arena_bytes < 0 || computation_.arena_bytes > kMaxArrayBytes) {
      return Fail("arena of " + std::to_string(computation_.arena_bytes) + " bytes");
    }
    written_.assign(computation_.slot_types.size(), false);
    for (size_t s = 0; s < computation_.places.size(); ++s) {
      const SlotPlace& place = computation_.places[s];
      const ArrayType& type = computation_.slot_types[s];
      const std::string slot = "slot " + std::to_string(s);
      switch (place.kind) {
        case SlotPlace::Kind::kArena:
          if (place.value < 0 || place.value % 8 != 0 ||
              place.value > computation_.arena_bytes - type.byte_size()) {
            return Fail(slot + " lies outside the arena");
          }
          break;
        case SlotPlace::Kind::kParameter:
          if (place.value < 0 ||
              static_cast<size_t>(place.value) >= computation_.parameters.size() ||
              computation_.slot_types[computation_.parameters[place.value]] != type) {
            return Fail(slot + " names parameter " + std::to_string(place.value) +
                        ", which does not exist or has another type");
          }
          break;
        case SlotPlace::Kind::kResult:
          if (place.value < 0 || static_cast<size_t>(place.value) >= computation_.results.size() ||
              computation_.slot_types[computation_.results[place.value]] != type) {
            return Fail(slot + " names result " + std::to_string(place.value) +
                        ", which does not exist or has another type");
          }
          break;
        case SlotPlace::Kind::kAlias:
          if (place.value < 0 || place.value >= static_cast<int64_t>(s) ||
              computation_.slot_types[place.value].byte_size() != type.byte_size()) {
            return Fail(slot + " aliases slot " + std::to_string(place.value) +
                        ", which is not an earlier slot of the same size");
          }
          break;
        default:
          return Fail(slot + " has an unknown place");
      }
    }
    // Parameters (and what aliases them) are read-only.
    read_only_.assign(computation_.slot_types.size(), false);
    for (size_t s = 0; s < computation_.places.size(); ++s) {
      const SlotPlace& place = computation_.places[s];
      if (place.kind == SlotPlace::Kind::kParameter) read_only_[s] = true;
      if (place.kind == SlotPlace::Kind::kAlias) read_only_[s] = read_only_[place.value];
    }
    for (size_t p = 0; p < computation_.parameters.size(); ++p) {
      const SlotPlace& place = computation_.places[computation_.parameters[p]];
      if (place.kind != SlotPlace::Kind::kParameter || place.value != static_cast<int64_t>(p)) {
        return Fail("parameter " + std::to_string(p) + " is not placed as that parameter");
      }
    }
    return OkStatus();
  }

  template <typename T>
  StatusOr<const T*> Params(const Instruction& instruction) const {
    const T* params = std::get_if<T>(&instruction.params);
    if (params == nullptr) return InvalidArgument("its params do not fit its opcode");
    return params;
  }

  Status ValidateComputationRef(int32_t index, const std::vector<const ArrayType*>& params,
                                const std::vector<const ArrayType*>& results,
                                const char* what) const {
    if (index <= index_ || static_cast<size_t>(index) >= program_.computations.size()) {
      return InvalidArgument(std::string(what) + " computation " + std::to_string(index) +
                             " is not a later computation of the program");
    }
    const Computation& callee = program_.computations[index];
    if (callee.parameters.size() != params.size() || callee.results.size() != results.size()) {
      return InvalidArgument(std::string(what) + " computation " + std::to_string(index) +
                             " takes or returns another number of values");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (callee.slot_types[callee.parameters[i]] != *params[i]) {
        return InvalidArgument(std::string(what) + " parameter " + std::to_string(i) + " is " +
                               callee.slot_types[callee.parameters[i]].ToString() +
                               ", expected " + params[i]->ToString());
      }
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (callee.slot_types[callee.results[i]] != *results[i]) {
        return InvalidArgument(std::string(what) + " result " + std::to_string(i) + " is " +
                               callee.slot_types[callee.results[i]].ToString() + ", expected " +
                               results[i]->ToString());
      }
    }
    return OkStatus();
  }

  Status ValidateFused(const Instruction& instruction, const ArrayTypes& operands,
                       const ArrayTypes& results) const {
    PJRTKIT_ASSIGN_OR_RETURN(const FusedElementwise* fused, Params<FusedElementwise>(instruction));
    PJRTKIT_RETURN_IF_ERROR(sim::Validate(*fused));
    if (fused->inputs.size() != operands.size() || fused->outputs.size() != results.size()) {
      return InvalidArgument("the fused program's inputs or outputs do not match its operands "
                             "or results");
    }
    for (size_t i = 0; i < operands.size(); ++i) {
      const EwInput& input = fused->inputs[i];
      if (input.type != operands[i]->type || input.strides.size() != fused->dims.size()) {
        return InvalidArgument("fused input " + std::to_string(i) + " does not match operand " +
                               operands[i]->ToString());
      }
      // The largest element offset the strides reach must be inside the operand.
      int64_t last = 0;
      bool empty = false;
      for (size_t d = 0; d < fused->dims.size(); ++d) {
        if (fused->dims[d] == 0) empty = true;
        if (input.strides[d] < 0) return InvalidArgument("a fused input has a negative stride");
        if (fused->dims[d] > 0 && input.strides[d] > kMaxArrayBytes / fused->dims[d]) {
          return InvalidArgument("a fused input's strides overflow");
        }
        last += (fused->dims[d] - 1) * input.strides[d];
      }
      if (!empty && last >= operands[i]->num_elements()) {
        return InvalidArgument("fused input " + std::to_string(i) + " reads past operand " +
                               operands[i]->ToString());
      }
    }
    for (size_t k = 0; k < results.size(); ++k) {
      const EwStep& step = fused->steps[fused->outputs[k]];
      if (results[k]->type != step.type || results[k]->dims != fused->dims) {
        return InvalidArgument("fused output " + std::to_string(k) + " does not match result " +
                               results[k]->ToString());
      }
    }
    return OkStatus();
  }

  Status ValidateInstruction(const Instruction& instruction) {
    ArrayTypes operands, results;
    for (Slot s : instruction.operands) {
      if (!ValidSlot(s)) return InvalidArgument("operand slot " + std::to_string(s));
      operands.push_back(&computation_.slot_types[s]);
    }
    for (Slot s : instruction.results) {
      if (!ValidSlot(s)) return InvalidArgument("result slot " + std::to_string(s));
      if (read_only_[s]) return InvalidArgument("writes parameter slot " + std::to_string(s));
      if (written_[s]) return InvalidArgument("writes slot " + std::to_string(s) + " again");
      written_[s] = true;
      results.push_back(&computation_.slot_types[s]);
    }
    const int opcode = static_cast<int>(instruction.opcode);
    if (opcode < 0 || opcode >= kNumOpcodes) return InvalidArgument("unknown opcode");
    switch (instruction.opcode) {
      case Opcode::kFused:
        return ValidateFused(instruction, operands, results);
      case Opcode::kConstant: {
        PJRTKIT_ASSIGN_OR_RETURN(const ConstantParams* p, Params<ConstantParams>(instruction));
        if (!operands.empty() || results.size() != 1 ||
            static_cast<int64_t>(p->bytes.size()) != results[0]->byte_size()) {
          return InvalidArgument("a constant has no operands and one result of its bytes' size");
        }
        return OkStatus();
      }
      case Opcode::kCopy:
        return CheckCopy(operands, results);
      case Opcode::kPartitionId:
      case Opcode::kReplicaId:
        if (!operands.empty() || results.size() != 1 || results[0]->type != ElementType::kU32 ||
            !results[0]->dims.empty()) {
          return InvalidArgument("takes no operands and returns one u32 scalar");
        }
        return OkStatus();
      case Opcode::kTranspose: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<TransposeParams>(instruction));
        return CheckTranspose(*p, operands, results);
      }
      case Opcode::kSlice: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<SliceParams>(instruction));
        return CheckSlice(*p, operands, results);
      }
      case Opcode::kDynamicSlice: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<DynamicSliceParams>(instruction));
        return CheckDynamicSlice(*p, operands, results);
      }
      case Opcode::kDynamicUpdateSlice: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<DynamicUpdateSliceParams>(instruction));
        return CheckDynamicUpdateSlice(*p, operands, results);
      }
      case Opcode::kConcatenate: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ConcatenateParams>(instruction));
        return CheckConcatenate(*p, operands, results);
      }
      case Opcode::kPad: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<PadParams>(instruction));
        return CheckPad(*p, operands, results);
      }
      case Opcode::kReverse: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ReverseParams>(instruction));
        return CheckReverse(*p, operands, results);
      }
      case Opcode::kReduce: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ReduceParams>(instruction));
        return CheckReduce(*p, operands, results);
      }
      case Opcode::kReduceWindow: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ReduceWindowParams>(instruction));
        return CheckReduceWindow(*p, operands, results);
      }
      case Opcode::kSelectAndScatter: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<SelectAndScatterParams>(instruction));
        return CheckSelectAndScatter(*p, operands, results);
      }
      case Opcode::kDotGeneral: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<DotGeneralParams>(instruction));
        return CheckDotGeneral(*p, operands, results);
      }
      case Opcode::kConvolution: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ConvolutionParams>(instruction));
        return CheckConvolution(*p, operands, results);
      }
      case Opcode::kGather: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<GatherParams>(instruction));
        return CheckGather(*p, operands, results);
      }
      case Opcode::kScatter: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<ScatterParams>(instruction));
        return CheckScatter(*p, operands, results);
      }
      case Opcode::kSort: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<SortParams>(instruction));
        return CheckSort(*p, operands, results);
      }
      case Opcode::kRngBitGenerator: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<RngBitGeneratorParams>(instruction));
        return CheckRngBitGenerator(*p, operands, results);
      }
      case Opcode::kCollective: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<CollectiveParams>(instruction));
        return CheckCollective(*p, program_.num_replicas * program_.num_partitions, operands,
                               results);
      }
      case Opcode::kCustomCall: {
        PJRTKIT_ASSIGN_OR_RETURN(auto p, Params<CustomCallParams>(instruction));
        return CheckCustomCall(*p, operands, results);
      }
      case Opcode::kWhile:
        return ValidateWhile(instruction, operands, results);
      case Opcode::kCase:
        return ValidateCase(instruction, operands, results);
    }
    return InvalidArgument("unknown opcode");
  }

  // A target; attributes sorted by distinct names, scalars of an integer, float or pred type
  // holding exactly one element's bytes; arrays of whole bytes per element.
  static Status CheckCustomCall(const CustomCallParams& p, const ArrayTypes& operands,
                                const ArrayTypes& results) {
    if (p.target.empty()) return InvalidArgument("a custom call has no target");
    for (size_t i = 0; i < p.attributes.size(); ++i) {
      const FfiAttribute& a = p.attributes[i];
      if (i > 0 && !(p.attributes[i - 1].name < a.name)) {
        return InvalidArgument("custom call @" + p.target +
                               ": attributes are not sorted by distinct names");
      }
      if (a.kind != FfiAttribute::Kind::kScalar) continue;
      const int bits = ElementTypeBits(a.type);
      const bool scalar_type = a.type == ElementType::kPred ||
                               (a.type >= ElementType::kS8 && a.type <= ElementType::kF64) ||
                               a.type == ElementType::kBF16;
      const bool bad_pred = a.type == ElementType::kPred && a.bytes.size() == 1 &&
                            static_cast<uint8_t>(a.bytes[0]) > 1;
      if (!scalar_type || bad_pred || bits % 8 != 0 ||
          a.bytes.size() != static_cast<size_t>(bits / 8)) {
        return InvalidArgument("custom call @" + p.target + ": attribute " + a.name +
                               " is not a scalar of an integer, float or pred type");
      }
    }
    for (const ArrayTypes* list : {&operands, &results}) {
      for (const ArrayType* t : *list) {
        if (ElementTypeBits(t->type) % 8 != 0) {
          return InvalidArgument("custom call @" + p.target + " takes " + t->ToString() +
                                 ": elements of less than a byte are not supported");
        }
      }
    }
    PJRTKIT_RETURN_IF_ERROR(CheckOrders(p.target, "operand", p.operand_orders, operands));
    PJRTKIT_RETURN_IF_ERROR(CheckOrders(p.target, "result", p.result_orders, results));
    for (const auto& [result, operand] : p.aliases) {
      if (result < 0 || result >= static_cast<int64_t>(results.size()) || operand < 0 ||
          operand >= static_cast<int64_t>(operands.size()) ||
          *results[result] != *operands[operand]) {
        return InvalidArgument("custom call @" + p.target + ": result " +
                               std::to_string(result) + " aliases operand " +
                               std::to_string(operand) + ", which is not an array of its type");
      }
    }
    return OkStatus();
  }

  // Each order is empty (row-major) or a permutation of its array's dimensions; one per array
  // when there are any.
  static Status CheckOrders(const std::string& target, const char* what,
                            const std::vector<std::vector<int32_t>>& orders,
                            const ArrayTypes& arrays) {
    if (!orders.empty() && orders.size() != arrays.size()) {
      return InvalidArgument("custom call @" + target + ": " + std::to_string(orders.size()) +
                             " " + what + " orders for " + std::to_string(arrays.size()) + " " +
                             what + "s");
    }
    for (size_t i = 0; i < orders.size(); ++i) {
      if (orders[i].empty()) continue;
      std::vector<bool> seen(arrays[i]->dims.size(), false);
      bool ok = orders[i].size() == seen.size();
      for (size_t k = 0; ok && k < orders[i].size(); ++k) {
        const int32_t d = orders[i][k];
        ok = d >= 0 && static_cast<size_t>(d) < seen.size() && !seen[d];
        if (ok) seen[d] = true;
      }
      if (!ok) {
        return InvalidArgument("custom call @" + target + ": " + what + " " + std::to_string(i) +
                               "'s order is not a permutation of its dimensions");
      }
    }
    return OkStatus();
  }

  Status ValidateWhile(const Instruction& instruction, const ArrayTypes& operands,
                       const ArrayTypes& results) {
    PJRTKIT_ASSIGN_OR_RETURN(const WhileParams* p, Params<WhileParams>(instruction));
    if (p->num_captured < 0 || operands.size() != results.size() + p->num_captured) {
      return InvalidArgument("a loop's operands are its carried values then its captured values");
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (*operands[i] != *results[i]) {
        return InvalidArgument("carried value " + std::to_string(i) + " changes type");
      }
    }
    static const ArrayType kPred{ElementType::kPred, {}};
    PJRTKIT_RETURN_IF_ERROR(ValidateComputationRef(p->cond, operands, {&kPred}, "condition"));
    return ValidateComputationRef(p->body, operands, results, "body");
  }

  Status ValidateCase(const Instruction& instruction, const ArrayTypes& operands,
                      const ArrayTypes& results) {
    PJRTKIT_ASSIGN_OR_RETURN(const CaseParams* p, Params<CaseParams>(instruction));
    if (operands.empty() || operands[0]->type != ElementType::kS32 ||
        !operands[0]->dims.empty() || p->branches.empty()) {
      return InvalidArgument("a case takes an s32 scalar index and has at least one branch");
    }
    const ArrayTypes captured(operands.begin() + 1, operands.end());
    for (int32_t branch : p->branches) {
      PJRTKIT_RETURN_IF_ERROR(ValidateComputationRef(branch, captured, results, "branch"));
    }
    return OkStatus();
  }

  const DeviceProgram& program_;
  const int32_t index_;
  const Computation& computation_;
  std::vector<bool> written_;    // Slots an instruction wrote so far.
  std::vector<bool> read_only_;  // Parameter slots and their aliases.
};

}  // namespace

Status ValidateProgram(const DeviceProgram& program) {
  if (program.computations.empty()) return InvalidArgument("the program has no computation");
  if (program.num_replicas < 1 || program.num_partitions < 1 ||
      program.num_replicas * program.num_partitions > 4096) {
    return InvalidArgument("the program's replicas x partitions must be within 1..4096");
  }
  for (size_t c = 0; c < program.computations.size(); ++c) {
    PJRTKIT_RETURN_IF_ERROR(ComputationValidator(program, static_cast<int32_t>(c)).Validate());
  }
  const Computation& entry = program.entry();
  if (program.parameter_aliases.size() != entry.parameters.size() ||
      program.parameter_donatable.size() != entry.parameters.size()) {
    return InvalidArgument("the program's donation facts do not match its parameters");
  }
  // Shardings: none (every value replicated) or one per parameter and one per result.
  if ((!program.parameter_shardings.empty() &&
       program.parameter_shardings.size() != entry.parameters.size()) ||
      (!program.result_shardings.empty() &&
       program.result_shardings.size() != entry.results.size())) {
    return InvalidArgument("the program's shardings do not match its parameters and results");
  }
  for (int32_t alias : program.parameter_aliases) {
    if (alias < -1 || alias >= static_cast<int32_t>(entry.results.size())) {
      return InvalidArgument("a parameter aliases result " + std::to_string(alias) +
                             ", which does not exist");
    }
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
