#include "xla_plugin/devices/sim/compiler/scalar_region.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

#include "xla_plugin/devices/sim/compiler/elementwise_ops.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;
using stablehlo::ValueId;

// Builds the FusedElementwise of one scalar region.
class ScalarRegionBuilder {
 public:
  ScalarRegionBuilder(Lowerer& lowerer, const Operation& op) : lowerer_(lowerer), op_(op) {}

  StatusOr<FusedElementwise> Build(const stablehlo::Region& region) {
    if (region.blocks.size() != 1) return lowerer_.Invalid(op_, "a region must have one block");
    const stablehlo::Block& block = region.blocks.front();
    for (ValueId arg : block.arguments) {
      PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, ScalarType(arg));
      fused_.inputs.push_back(EwInput{type.type, {}});
      EwStep step;
      step.op = EwOp::kInput;
      step.type = type.type;
      step.attr = static_cast<int64_t>(fused_.inputs.size() - 1);
      steps_[arg] = Add(std::move(step));
    }
    for (const Operation& inner : block.operations) {
      if (inner.name == "stablehlo.return") {
        for (ValueId id : inner.operands) {
          PJRTKIT_ASSIGN_OR_RETURN(int32_t step, StepOf(id));
          fused_.outputs.push_back(step);
        }
        return std::move(fused_);
      }
      PJRTKIT_RETURN_IF_ERROR(LowerInner(inner));
    }
    return lowerer_.Invalid(op_, "a region has no stablehlo.return");
  }

 private:
  int32_t Add(EwStep step) {
    fused_.steps.push_back(std::move(step));
    return static_cast<int32_t>(fused_.steps.size() - 1);
  }

  StatusOr<ArrayType> ScalarType(ValueId id) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer_.TypeOf(id, op_));
    if (type.num_elements() != 1) {
      return lowerer_.Unsupported(op_, "a region value of type " + type.ToString() +
                                           " (regions on scalars only)");
    }
    return type;
  }

  // The step computing `id`: defined in the region, or a constant defined outside it.
  StatusOr<int32_t> StepOf(ValueId id) {
    auto it = steps_.find(id);
    if (it != steps_.end()) return it->second;
    StatusOr<ValueIndex> outer = lowerer_.Lookup(id);
    if (outer.ok()) {
      const Graph& graph = lowerer_.graph();
      const NodeIndex producer = graph.values[*outer].producer;
      if (producer >= 0 && graph.nodes[producer].kind == NodeKind::kSplat) {
        EwStep step;
        step.op = EwOp::kConstant;
        step.type = graph.type(*outer).type;
        step.constant = graph.nodes[producer].bytes;
        const int32_t index = Add(std::move(step));
        steps_[id] = index;
        return index;
      }
    }
    return lowerer_.Unsupported(op_, "a region reading a non-constant value defined outside it");
  }

  Status LowerInner(const Operation& inner) {
    if (inner.results.size() != 1) return lowerer_.Unsupported(inner, "in a region, the operation");
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, ScalarType(inner.results[0]));
    if (inner.name == "stablehlo.constant") {
      const stablehlo::Attribute* value = inner.Find("value");
      if (value == nullptr || value->kind != stablehlo::Attribute::Kind::kDenseElements ||
          value->data.size() < static_cast<size_t>(type.element_bytes())) {
        return lowerer_.Invalid(inner, "a constant without dense elements");
      }
      EwStep step;
      step.op = EwOp::kConstant;
      step.type = type.type;
      step.constant = value->data.substr(0, type.element_bytes());
      steps_[inner.results[0]] = Add(std::move(step));
      return OkStatus();
    }
    if (inner.name == "stablehlo.broadcast_in_dim" || inner.name == "stablehlo.reshape") {
      if (inner.operands.size() != 1) return lowerer_.Invalid(inner, "needs one operand");
      PJRTKIT_ASSIGN_OR_RETURN(int32_t step, StepOf(inner.operands[0]));
      steps_[inner.results[0]] = step;  // A scalar stays the same scalar.
      return OkStatus();
    }
    PJRTKIT_ASSIGN_OR_RETURN(ElementwiseOp ew, ClassifyElementwise(lowerer_, inner));
    EwStep step;
    step.op = ew.op;
    step.type = type.type;
    step.attr = ew.attr;
    if (inner.operands.size() > 3) return lowerer_.Invalid(inner, "has too many operands");
    for (size_t i = 0; i < inner.operands.size(); ++i) {
      PJRTKIT_ASSIGN_OR_RETURN(step.operands[i], StepOf(inner.operands[i]));
    }
    const size_t typed = ew.op == EwOp::kSelect || ew.op == EwOp::kClamp ? 1 : 0;
    if (typed < inner.operands.size()) {
      step.operand_type = fused_.steps[step.operands[typed]].type;
    }
    Status supported = CheckSupported(step.op, step.type, step.operand_type);
    if (!supported.ok()) return lowerer_.Unsupported(inner, supported.message());
    steps_[inner.results[0]] = Add(std::move(step));
    return OkStatus();
  }

  Lowerer& lowerer_;
  const Operation& op_;
  FusedElementwise fused_;
  std::unordered_map<ValueId, int32_t> steps_;
};

// The combiner `body` is, when it is one binary op of its two inputs (or returns the second).
Combiner RecognizeCombiner(const FusedElementwise& body) {
  if (body.inputs.size() != 2 || body.outputs.size() != 1) return Combiner::kGeneric;
  if (body.inputs[0].type != body.inputs[1].type) return Combiner::kGeneric;
  const EwStep& out = body.steps[body.outputs[0]];
  if (out.op == EwOp::kInput && out.attr == 1) return Combiner::kReplace;
  if (body.steps.size() != 3 || body.outputs[0] != 2 || out.type != body.inputs[0].type) {
    return Combiner::kGeneric;
  }
  const bool args = (out.operands[0] == 0 && out.operands[1] == 1) ||
                    (out.operands[0] == 1 && out.operands[1] == 0);
  if (!args) return Combiner::kGeneric;
  switch (out.op) {
    case EwOp::kAdd: return Combiner::kAdd;
    case EwOp::kMultiply: return Combiner::kMultiply;
    case EwOp::kMaximum: return Combiner::kMaximum;
    case EwOp::kMinimum: return Combiner::kMinimum;
    case EwOp::kAnd: return Combiner::kAnd;
    case EwOp::kOr: return Combiner::kOr;
    case EwOp::kXor: return Combiner::kXor;
    default: return Combiner::kGeneric;
  }
}

// Whether step `a` computes from input `ia` exactly what step `b` computes from input `ib`.
bool SameFunction(const FusedElementwise& f, int32_t a, int32_t b, int64_t ia, int64_t ib,
                  int depth) {
  if (depth > 64) return false;
  const EwStep& sa = f.steps[a];
  const EwStep& sb = f.steps[b];
  if (sa.op == EwOp::kInput || sb.op == EwOp::kInput) {
    return sa.op == EwOp::kInput && sb.op == EwOp::kInput && sa.attr == ia && sb.attr == ib;
  }
  if (sa.op != sb.op || sa.type != sb.type || sa.operand_type != sb.operand_type ||
      sa.attr != sb.attr) {
    return false;
  }
  if (sa.op == EwOp::kConstant) return sa.constant == sb.constant;
  for (int k = 0; k < 3; ++k) {
    if ((sa.operands[k] < 0) != (sb.operands[k] < 0)) return false;
    if (sa.operands[k] >= 0 &&
        !SameFunction(f, sa.operands[k], sb.operands[k], ia, ib, depth + 1)) {
      return false;
    }
  }
  return true;
}

// Copies the steps step `root` depends on into a one-input FusedElementwise whose input is
// `input`; false when they read another input.
bool ExtractFunction(const FusedElementwise& f, int32_t root, int64_t input,
                     FusedElementwise* out) {
  std::unordered_map<int32_t, int32_t> copied;
  out->inputs = {EwInput{f.inputs[input].type, {}}};
  bool ok = true;
  std::function<int32_t(int32_t)> copy = [&](int32_t s) -> int32_t {
    auto it = copied.find(s);
    if (it != copied.end()) return it->second;
    EwStep step = f.steps[s];
    if (step.op == EwOp::kInput) {
      if (step.attr != input) ok = false;
      step.attr = 0;
    }
    for (int k = 0; k < 3 && ok; ++k) {
      if (step.operands[k] >= 0) step.operands[k] = copy(step.operands[k]);
    }
    out->steps.push_back(step);
    const int32_t index = static_cast<int32_t>(out->steps.size() - 1);
    copied[s] = index;
    return index;
  };
  out->outputs = {copy(root)};
  return ok;
}

}  // namespace

StatusOr<ScalarComputation> LowerScalarRegion(Lowerer& lowerer, const Operation& op,
                                              const stablehlo::Region& region) {
  ScalarRegionBuilder builder(lowerer, op);
  ScalarComputation computation;
  PJRTKIT_ASSIGN_OR_RETURN(computation.body, builder.Build(region));
  Status valid = Validate(computation.body);
  if (!valid.ok()) return lowerer.Unsupported(op, "its region (" + valid.message() + ")");
  computation.combiner = RecognizeCombiner(computation.body);
  return computation;
}

StatusOr<LoweredComparator> LowerComparator(Lowerer& lowerer, const Operation& op,
                                            const stablehlo::Region& region) {
  PJRTKIT_ASSIGN_OR_RETURN(ScalarComputation lowered, LowerScalarRegion(lowerer, op, region));
  LoweredComparator result;
  result.comparator.body = std::move(lowered.body);
  const FusedElementwise& body = result.comparator.body;
  if (body.outputs.size() != 1 || body.steps[body.outputs[0]].type != ElementType::kPred) {
    return lowerer.Invalid(op, "a comparator returns one pred");
  }
  const EwStep& out = body.steps[body.outputs[0]];
  if (out.op != EwOp::kCompare) return result;
  const auto direction = static_cast<ComparisonDirection>(out.attr & 0xff);
  const auto type = static_cast<ComparisonType>((out.attr >> 8) & 0xff);
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return result;
  }
  // Which input does the left side read? It must be the lhs of one operand, the right side the
  // same function of that operand's rhs.
  for (int64_t k = 0; 2 * k + 1 < static_cast<int64_t>(body.inputs.size()); ++k) {
    if (!SameFunction(body, out.operands[0], out.operands[1], 2 * k, 2 * k + 1, 0)) continue;
    SortKey key{static_cast<int32_t>(k), direction, type};
    const EwStep& lhs = body.steps[out.operands[0]];
    if (lhs.op == EwOp::kInput) {
      result.comparator.keys = {key};
      return result;
    }
    FusedElementwise function;
    if (!ExtractFunction(body, out.operands[0], 2 * k, &function)) continue;
    result.keyed_by_function = true;
    result.key_operand = static_cast<int32_t>(k);
    result.key_function = std::move(function);
    result.key = key;
    return result;
  }
  return result;
}

}  // namespace sim
}  // namespace pjrtkit
