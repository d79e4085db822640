#include "xla_plugin/devices/sim/compiler/lowerer.h"

#include "xla_plugin/devices/sim/compiler/partitioner.h"

#include <string>
#include <unordered_map>
#include <utility>

namespace pjrtkit {
namespace sim {
namespace {

// Calls nest at most this deep (StableHLO has no recursion; this bounds a malformed module).
constexpr int kMaxDepth = 64;

bool SupportedElementType(ElementType type) {
  switch (type) {
    case ElementType::kInvalid:
    case ElementType::kToken:
    case ElementType::kS4:
    case ElementType::kU4:
    case ElementType::kS2:
    case ElementType::kU2:
    case ElementType::kS1:
    case ElementType::kU1:
    case ElementType::kF4E2M1FN:
    case ElementType::kF6E2M3FN:
    case ElementType::kF6E3M2FN:
      return false;
    default:
      return true;
  }
}

}  // namespace

Lowerer::Lowerer(LoweringState& state, const stablehlo::Function& function, Graph& graph,
                 Lowerer* parent, int depth)
    : state_(state), function_(function), graph_(graph), parent_(parent), depth_(depth) {}

std::string Lowerer::Origin(const stablehlo::Operation& op) {
  return op.location.text.empty() ? op.name : op.name + " at " + op.location.text;
}

Status Lowerer::Unsupported(const stablehlo::Operation& op, const std::string& what) const {
  return Unimplemented(Origin(op) + ": " + what + " is not supported by the " +
                       state_.device_name + " device");
}

Status Lowerer::Invalid(const stablehlo::Operation& op, const std::string& what) const {
  return InvalidArgument(Origin(op) + ": " + what);
}

StatusOr<ArrayType> Lowerer::ToArrayType(const stablehlo::Type& type,
                                         const stablehlo::Operation& op) {
  switch (type.kind) {
    case stablehlo::Type::Kind::kTensor:
      break;
    case stablehlo::Type::Kind::kToken:
      return Unsupported(op, "a token value (ordered effects such as io_callback)");
    case stablehlo::Type::Kind::kTuple:
      return Unsupported(op, "a tuple value");
    default:
      return Unsupported(op, "the type " + type.ToString());
  }
  if (!SupportedElementType(type.element_type)) {
    return Unsupported(op, "the element type of " + type.ToString());
  }
  if (!type.encoding.empty()) return Unsupported(op, "a bounded dynamic " + type.ToString());
  for (int64_t d : type.dims) {
    if (d == stablehlo::kDynamicDim) return Unsupported(op, "a dynamic shape " + type.ToString());
    if (d < 0) return Invalid(op, "a negative dimension in " + type.ToString());
  }
  if (type.NumElements() < 0) return Invalid(op, "the type " + type.ToString() + " is too large");
  return ArrayType{type.element_type, type.dims};
}

StatusOr<ArrayType> Lowerer::TypeOf(stablehlo::ValueId id, const stablehlo::Operation& op) {
  auto local = local_types_.find(id);
  if (local != local_types_.end()) return local->second;
  if (id < 0 || static_cast<size_t>(id) >= function_.value_types.size()) {
    return Invalid(op, "refers to an unknown value");
  }
  return ToArrayType(function_.value_types[id], op);
}

std::optional<ValueIndex> Lowerer::Bound(stablehlo::ValueId id) const {
  auto it = values_.find(id);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<ArrayType> Lowerer::LocalType(stablehlo::ValueId id) const {
  auto it = local_types_.find(id);
  if (it == local_types_.end()) return std::nullopt;
  return it->second;
}

StatusOr<ValueIndex> Lowerer::Lookup(stablehlo::ValueId id) {
  auto it = values_.find(id);
  if (it != values_.end()) return it->second;
  if (parent_ == nullptr) {
    return InvalidArgument("value %" + std::to_string(id) + " is used before it is defined");
  }
  PJRTKIT_ASSIGN_OR_RETURN(ValueIndex outer, parent_->Lookup(id));
  const Graph& outer_graph = parent_->graph();
  if (outer_graph.values[outer].sharded) {
    return Unimplemented("automatic SPMD partitioning of value %" + std::to_string(id) +
                         ", which a region reads from outside while it is held in pieces "
                         "(pass it to the op as an operand) is not supported by the " +
                         state_.device_name + " device");
  }
  const NodeIndex producer = outer_graph.values[outer].producer;
  // Splats and iotas are cheaper to recompute than to pass in, and stay fusable.
  if (producer >= 0 && (outer_graph.nodes[producer].kind == NodeKind::kSplat ||
                        outer_graph.nodes[producer].kind == NodeKind::kIota)) {
    Node copy = outer_graph.nodes[producer];
    copy.operands.clear();
    const ValueIndex v = graph_.AddNode(std::move(copy), outer_graph.type(outer));
    values_[id] = v;
    return v;
  }
  const ValueIndex v = graph_.AddParameter(outer_graph.type(outer));
  captured_.push_back(outer);
  values_[id] = v;
  return v;
}

StatusOr<std::vector<ValueIndex>> Lowerer::Operands(const stablehlo::Operation& op) {
  std::vector<ValueIndex> operands;
  operands.reserve(op.operands.size());
  for (stablehlo::ValueId id : op.operands) {
    StatusOr<ValueIndex> v = Lookup(id);
    if (!v.ok()) return Invalid(op, v.status().message());
    operands.push_back(*v);
  }
  return operands;
}

Status Lowerer::EmitInstruction(const stablehlo::Operation& op, Opcode opcode,
                                InstructionParams params,
                                const std::vector<ValueIndex>& operands) {
  std::vector<ArrayType> types;
  for (stablehlo::ValueId id : op.results) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, TypeOf(id, op));
    types.push_back(std::move(type));
  }
  Node node;
  node.kind = NodeKind::kInstruction;
  node.opcode = opcode;
  node.params = std::move(params);
  node.operands = operands;
  node.origin = Origin(op);
  const std::vector<ValueIndex> results = graph_.AddNode(std::move(node), types);
  for (size_t i = 0; i < results.size(); ++i) Bind(op.results[i], results[i]);
  return OkStatus();
}

Status Lowerer::LowerBlock(const stablehlo::Block& block, std::vector<ValueIndex>* returned) {
  for (const stablehlo::Operation& op : block.operations) {
    if (op.name == "func.return" || op.name == "stablehlo.return") {
      PJRTKIT_ASSIGN_OR_RETURN(*returned, Operands(op));
      return OkStatus();
    }
    PJRTKIT_RETURN_IF_ERROR(LowerOperation(op));
  }
  return InvalidArgument("a block of " + function_.name + " has no terminator");
}

Status Lowerer::LowerOperation(const stablehlo::Operation& op) {
  if (op.name == "func.call") return LowerCall(op);
  if (partitioned_) return LowerPartitioned(*this, op);
  return LowerDirect(op);
}

Status Lowerer::LowerDirect(const stablehlo::Operation& op) {
  if (!partitioned_ && op.name != "stablehlo.custom_call") {
    // Outside the partitioner (which gives ops pieces on purpose) no op reads a piece.
    for (stablehlo::ValueId id : op.operands) {
      StatusOr<ValueIndex> v = Lookup(id);
      if (v.ok() && graph_.values[*v].sharded) {
        return Unsupported(op, "automatic SPMD partitioning (the op reads an array sharded "
                               "across devices; write the computation inside shard_map)");
      }
    }
  }
  OpLowering lowering = FindOpLowering(op.name);
  if (lowering == nullptr) return Unsupported(op, "the operation");
  return lowering(*this, op);
}

Status Lowerer::LowerCall(const stablehlo::Operation& op) {
  const stablehlo::Attribute* callee_attr = op.Find("callee");
  if (callee_attr == nullptr || callee_attr->kind != stablehlo::Attribute::Kind::kSymbolRef) {
    return Invalid(op, "has no callee");
  }
  const stablehlo::Function* callee = state_.module->FindFunction(callee_attr->string_value);
  if (callee == nullptr || callee->body.blocks.empty()) {
    return Invalid(op, "calls @" + callee_attr->string_value + ", which the module does not define");
  }
  if (depth_ >= kMaxDepth) return Invalid(op, "calls nest deeper than 64");
  const stablehlo::Block& entry = callee->body.blocks.front();
  if (entry.arguments.size() != op.operands.size()) {
    return Invalid(op, "passes " + std::to_string(op.operands.size()) + " arguments to @" +
                           callee->name + ", which takes " +
                           std::to_string(entry.arguments.size()));
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, Operands(op));
  // Calls are inlined: the callee's ops become nodes of this graph.
  Lowerer inlined(state_, *callee, graph_, nullptr, depth_ + 1);
  // A shard_map's body computes on the pieces as they are (manual): no partitioning inside.
  inlined.partitioned_ =
      partitioned_ && callee->name.rfind("xla.sdy.manual_computation_body", 0) != 0;
  for (size_t i = 0; i < operands.size(); ++i) inlined.Bind(entry.arguments[i], operands[i]);
  std::vector<ValueIndex> returned;
  PJRTKIT_RETURN_IF_ERROR(inlined.LowerBlock(entry, &returned));
  if (returned.size() != op.results.size()) {
    return Invalid(op, "@" + callee->name + " returns " + std::to_string(returned.size()) +
                           " values, the call expects " + std::to_string(op.results.size()));
  }
  for (size_t i = 0; i < returned.size(); ++i) Bind(op.results[i], returned[i]);
  return OkStatus();
}

OpLowering FindOpLowering(const std::string& name) {
  static const std::unordered_map<std::string, OpLowering>* const table = [] {
    auto* map = new std::unordered_map<std::string, OpLowering>();
    for (const auto* family : {&ElementwiseLowerings(), &DataMovementLowerings(),
                               &ComputeLowerings(), &ControlFlowLowerings(),
                               &CollectiveLowerings(), &CustomCallLowerings()}) {
      for (const OpLoweringEntry& entry : *family) (*map)[entry.name] = entry.lowering;
    }
    return map;
  }();
  auto it = table->find(name);
  return it == table->end() ? nullptr : it->second;
}

}  // namespace sim
}  // namespace pjrtkit
