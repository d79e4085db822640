// Lowerings of the fusable ops: elementwise math, compare, select, clamp, convert, constants,
// iota, broadcasts, transposes and reshapes.
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/elementwise_ops.h"
#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/stablehlo/stablehlo_attributes.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;

const std::vector<std::pair<const char*, EwOp>>& SimpleElementwiseOps();

// Adds an elementwise node for `op` with `ew_op`; `operand_type` defaults to operand 0's type.
Status EmitElementwise(Lowerer& lowerer, const Operation& op, EwOp ew_op, int64_t attr = 0) {
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  if (op.results.size() != 1) return lowerer.Invalid(op, "must have one result");
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(op.results[0], op));
  Graph& graph = lowerer.graph();
  // The engine's operand_type is operand 0's (select: pred).
  ElementType operand_type = ElementType::kInvalid;
  if (!operands.empty()) operand_type = graph.type(operands[0]).type;
  for (ValueIndex v : operands) {
    const ArrayType& t = graph.type(v);
    if (!t.dims.empty() && t.dims != type.dims) {
      return lowerer.Invalid(op, "operand " + t.ToString() + " does not match the result " +
                                     type.ToString());
    }
  }
  Status supported = CheckSupported(ew_op, type.type, operand_type);
  if (!supported.ok()) {
    // The engine's message names the op, the types and the device already.
    return Status(supported.code(), Lowerer::Origin(op) + ": " + supported.message());
  }
  Node node;
  node.kind = NodeKind::kElementwise;
  node.op = ew_op;
  node.operand_type = operand_type;
  node.attr = attr;
  node.operands = std::move(operands);
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], graph.AddNode(std::move(node), type));
  return OkStatus();
}

Status LowerSimple(Lowerer& lowerer, const Operation& op) {
  for (const auto& [name, ew_op] : SimpleElementwiseOps()) {
    if (op.name == name) return EmitElementwise(lowerer, op, ew_op);
  }
  return lowerer.Unsupported(op, "the operation");
}

StatusOr<int64_t> CompareAttr(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(
      stablehlo::ComparisonDirection direction,
      stablehlo::ReadOpAttribute(op, "comparison_direction", stablehlo::ReadComparisonDirection));
  if (op.operands.empty()) return lowerer.Invalid(op, "has no operands");
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType operand, lowerer.TypeOf(op.operands[0], op));
  ComparisonType type;
  if (op.Find("compare_type") != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(
        stablehlo::ComparisonType read,
        stablehlo::ReadOpAttribute(op, "compare_type", stablehlo::ReadComparisonType));
    type = static_cast<ComparisonType>(static_cast<int>(read));
  } else {
    // The spec's default: FLOAT for floats and complex, SIGNED / UNSIGNED for integers.
    switch (operand.type) {
      case ElementType::kPred:
      case ElementType::kU8:
      case ElementType::kU16:
      case ElementType::kU32:
      case ElementType::kU64:
        type = ComparisonType::kUnsigned;
        break;
      case ElementType::kS8:
      case ElementType::kS16:
      case ElementType::kS32:
      case ElementType::kS64:
        type = ComparisonType::kSigned;
        break;
      default:
        type = ComparisonType::kFloat;
    }
  }
  if (type == ComparisonType::kNotype) {
    type = operand.type == ElementType::kPred ? ComparisonType::kUnsigned : type;
  }
  return static_cast<int64_t>(direction) | (static_cast<int64_t>(type) << 8);
}

Status LowerCompare(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(int64_t attr, CompareAttr(lowerer, op));
  return EmitElementwise(lowerer, op, EwOp::kCompare, attr);
}

Status LowerBitcastConvert(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType from, lowerer.TypeOf(op.operands.at(0), op));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType to, lowerer.TypeOf(op.results.at(0), op));
  if (from.element_bytes() == to.element_bytes()) {
    return EmitElementwise(lowerer, op, EwOp::kBitcastConvert);
  }
  if (from.byte_size() != to.byte_size()) {
    return lowerer.Invalid(op, "changes the byte size from " + from.ToString() + " to " +
                                   to.ToString());
  }
  // Different element sizes: the row-major bytes are the same, only the type changes.
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  Node node;
  node.kind = NodeKind::kAlias;
  node.operands = operands;
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), to));
  return OkStatus();
}

StatusOr<int64_t> ReducePrecisionAttr(Lowerer& lowerer, const Operation& op) {
  const stablehlo::Attribute* exponent = op.Find("exponent_bits");
  const stablehlo::Attribute* mantissa = op.Find("mantissa_bits");
  if (exponent == nullptr || mantissa == nullptr) {
    return lowerer.Invalid(op, "needs exponent_bits and mantissa_bits");
  }
  if (exponent->int_value < 1 || exponent->int_value > 30 || mantissa->int_value < 0 ||
      mantissa->int_value > 60) {
    return lowerer.Invalid(op, "exponent_bits must be in 1..30 and mantissa_bits in 0..60");
  }
  return (exponent->int_value << 32) | mantissa->int_value;
}

Status LowerReducePrecision(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(int64_t attr, ReducePrecisionAttr(lowerer, op));
  return EmitElementwise(lowerer, op, EwOp::kReducePrecision, attr);
}

Status LowerConstant(Lowerer& lowerer, const Operation& op) {
  const stablehlo::Attribute* value = op.Find("value");
  if (value == nullptr || value->kind != stablehlo::Attribute::Kind::kDenseElements) {
    return lowerer.Unsupported(op, "a constant that is not dense elements");
  }
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(op.results.at(0), op));
  Node node;
  node.origin = Lowerer::Origin(op);
  if (value->is_splat || type.num_elements() == 1) {
    node.kind = NodeKind::kSplat;
    node.bytes = value->data.substr(0, type.element_bytes());
  } else {
    node.kind = NodeKind::kInstruction;
    node.opcode = Opcode::kConstant;
    node.params = ConstantParams{value->data};
  }
  const size_t want = value->is_splat ? type.element_bytes() : type.byte_size();
  if (value->data.size() != want) {
    return lowerer.Invalid(op, "has " + std::to_string(value->data.size()) + " bytes for " +
                                   type.ToString());
  }
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), type));
  return OkStatus();
}

Status LowerIota(Lowerer& lowerer, const Operation& op) {
  const stablehlo::Attribute* dimension = op.Find("iota_dimension");
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(op.results.at(0), op));
  if (dimension == nullptr || dimension->int_value < 0 ||
      dimension->int_value >= static_cast<int64_t>(type.dims.size())) {
    return lowerer.Invalid(op, "iota_dimension must be a dimension of " + type.ToString());
  }
  Status supported = CheckSupported(EwOp::kIota, type.type, ElementType::kInvalid);
  if (!supported.ok()) {
    // The engine's message names the op, the types and the device already.
    return Status(supported.code(), Lowerer::Origin(op) + ": " + supported.message());
  }
  Node node;
  node.kind = NodeKind::kIota;
  node.attr = dimension->int_value;
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), type));
  return OkStatus();
}

// Adds a view of operand 0 whose result dimension e reads operand dimension source_dims[e].
Status EmitView(Lowerer& lowerer, const Operation& op, std::vector<int32_t> source_dims) {
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(op.results.at(0), op));
  const ArrayType& source = lowerer.graph().type(operands.at(0));
  if (source.type != type.type) return lowerer.Invalid(op, "changes the element type");
  Node node;
  node.kind = NodeKind::kView;
  node.operands = {operands[0]};
  node.source_dims = std::move(source_dims);
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), type));
  return OkStatus();
}

Status LowerBroadcastInDim(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType operand, lowerer.TypeOf(op.operands.at(0), op));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType result, lowerer.TypeOf(op.results.at(0), op));
  const stablehlo::Attribute* dims_attr = op.Find("broadcast_dimensions");
  if (dims_attr == nullptr) return lowerer.Invalid(op, "has no broadcast_dimensions");
  const std::vector<int64_t>& dims = dims_attr->ints;
  if (dims.size() != operand.dims.size()) {
    return lowerer.Invalid(op, "broadcast_dimensions must have one entry per operand dimension");
  }
  std::vector<int32_t> source(result.dims.size(), -1);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t e = dims[i];
    if (e < 0 || e >= static_cast<int64_t>(result.dims.size()) || source[e] != -1 ||
        (operand.dims[i] != 1 && operand.dims[i] != result.dims[e])) {
      return lowerer.Invalid(op, "broadcast_dimensions " + std::to_string(e) +
                                     " does not map operand dimension " + std::to_string(i));
    }
    // A size-1 dimension broadcast to a larger one is read at index 0 (stride 0).
    if (operand.dims[i] == result.dims[e]) source[e] = static_cast<int32_t>(i);
  }
  return EmitView(lowerer, op, std::move(source));
}

Status LowerTranspose(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType operand, lowerer.TypeOf(op.operands.at(0), op));
  const stablehlo::Attribute* permutation = op.Find("permutation");
  if (permutation == nullptr || permutation->ints.size() != operand.dims.size()) {
    return lowerer.Invalid(op, "permutation must have one entry per dimension");
  }
  std::vector<int32_t> source;
  std::vector<bool> seen(operand.dims.size(), false);
  for (int64_t p : permutation->ints) {
    if (p < 0 || p >= static_cast<int64_t>(operand.dims.size()) || seen[p]) {
      return lowerer.Invalid(op, "permutation is not a permutation of the dimensions");
    }
    seen[p] = true;
    source.push_back(static_cast<int32_t>(p));
  }
  return EmitView(lowerer, op, std::move(source));
}

Status LowerReshape(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType operand, lowerer.TypeOf(op.operands.at(0), op));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType result, lowerer.TypeOf(op.results.at(0), op));
  if (operand.num_elements() != result.num_elements() || operand.type != result.type) {
    return lowerer.Invalid(op, "reshapes " + operand.ToString() + " to " + result.ToString());
  }
  // Only size-1 dimensions added or removed: a view (stays fusable).
  std::vector<int32_t> kept_operand, kept_result;
  for (size_t i = 0; i < operand.dims.size(); ++i) {
    if (operand.dims[i] != 1) kept_operand.push_back(static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < result.dims.size(); ++i) {
    if (result.dims[i] != 1) kept_result.push_back(static_cast<int32_t>(i));
  }
  bool degenerate = kept_operand.size() == kept_result.size();
  for (size_t k = 0; degenerate && k < kept_operand.size(); ++k) {
    degenerate = operand.dims[kept_operand[k]] == result.dims[kept_result[k]];
  }
  if (degenerate) {
    std::vector<int32_t> source(result.dims.size(), -1);
    for (size_t k = 0; k < kept_result.size(); ++k) source[kept_result[k]] = kept_operand[k];
    return EmitView(lowerer, op, std::move(source));
  }
  // Otherwise the row-major bytes are the same: an alias.
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  Node node;
  node.kind = NodeKind::kAlias;
  node.operands = {operands[0]};
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), result));
  return OkStatus();
}

const std::vector<std::pair<const char*, EwOp>>& SimpleElementwiseOps() {
  static const std::vector<std::pair<const char*, EwOp>>* const table =
      new std::vector<std::pair<const char*, EwOp>>{
          {"stablehlo.abs", EwOp::kAbs},
          {"stablehlo.negate", EwOp::kNegate},
          {"stablehlo.sign", EwOp::kSign},
          {"stablehlo.not", EwOp::kNot},
          {"stablehlo.exponential", EwOp::kExp},
          {"stablehlo.exponential_minus_one", EwOp::kExpm1},
          {"stablehlo.log", EwOp::kLog},
          {"stablehlo.log_plus_one", EwOp::kLog1p},
          {"stablehlo.logistic", EwOp::kLogistic},
          {"stablehlo.tanh", EwOp::kTanh},
          {"stablehlo.sine", EwOp::kSine},
          {"stablehlo.cosine", EwOp::kCosine},
          {"stablehlo.tan", EwOp::kTan},
          {"stablehlo.sqrt", EwOp::kSqrt},
          {"stablehlo.rsqrt", EwOp::kRsqrt},
          {"stablehlo.cbrt", EwOp::kCbrt},
          {"stablehlo.floor", EwOp::kFloor},
          {"stablehlo.ceil", EwOp::kCeil},
          {"stablehlo.round_nearest_afz", EwOp::kRoundNearestAfz},
          {"stablehlo.round_nearest_even", EwOp::kRoundNearestEven},
          {"stablehlo.is_finite", EwOp::kIsFinite},
          {"stablehlo.popcnt", EwOp::kPopcnt},
          {"stablehlo.count_leading_zeros", EwOp::kCountLeadingZeros},
          {"stablehlo.real", EwOp::kReal},
          {"stablehlo.imag", EwOp::kImag},
          {"stablehlo.convert", EwOp::kConvert},
          {"stablehlo.add", EwOp::kAdd},
          {"stablehlo.subtract", EwOp::kSubtract},
          {"stablehlo.multiply", EwOp::kMultiply},
          {"stablehlo.divide", EwOp::kDivide},
          {"stablehlo.remainder", EwOp::kRemainder},
          {"stablehlo.power", EwOp::kPower},
          {"stablehlo.maximum", EwOp::kMaximum},
          {"stablehlo.minimum", EwOp::kMinimum},
          {"stablehlo.and", EwOp::kAnd},
          {"stablehlo.or", EwOp::kOr},
          {"stablehlo.xor", EwOp::kXor},
          {"stablehlo.shift_left", EwOp::kShiftLeft},
          {"stablehlo.shift_right_arithmetic", EwOp::kShiftRightArithmetic},
          {"stablehlo.shift_right_logical", EwOp::kShiftRightLogical},
          {"stablehlo.atan2", EwOp::kAtan2},
          {"stablehlo.complex", EwOp::kComplex},
          {"stablehlo.select", EwOp::kSelect},
          {"stablehlo.clamp", EwOp::kClamp},
      };
  return *table;
}

}  // namespace

StatusOr<ElementwiseOp> ClassifyElementwise(Lowerer& lowerer, const Operation& op) {
  for (const auto& [name, ew_op] : SimpleElementwiseOps()) {
    if (op.name == name) return ElementwiseOp{ew_op, 0};
  }
  if (op.name == "stablehlo.compare") {
    PJRTKIT_ASSIGN_OR_RETURN(int64_t attr, CompareAttr(lowerer, op));
    return ElementwiseOp{EwOp::kCompare, attr};
  }
  if (op.name == "stablehlo.reduce_precision") {
    PJRTKIT_ASSIGN_OR_RETURN(int64_t attr, ReducePrecisionAttr(lowerer, op));
    return ElementwiseOp{EwOp::kReducePrecision, attr};
  }
  if (op.name == "stablehlo.bitcast_convert" && op.operands.size() == 1 &&
      op.results.size() == 1) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType from, lowerer.TypeOf(op.operands[0], op));
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType to, lowerer.TypeOf(op.results[0], op));
    if (from.element_bytes() == to.element_bytes()) return ElementwiseOp{EwOp::kBitcastConvert, 0};
  }
  return lowerer.Unsupported(op, "the operation in an elementwise region");
}

const std::vector<OpLoweringEntry>& ElementwiseLowerings() {
  static const std::vector<OpLoweringEntry>* const table = [] {
    auto* entries = new std::vector<OpLoweringEntry>{
        {"stablehlo.compare", LowerCompare},
        {"stablehlo.bitcast_convert", LowerBitcastConvert},
        {"stablehlo.reduce_precision", LowerReducePrecision},
        {"stablehlo.constant", LowerConstant},
        {"stablehlo.iota", LowerIota},
        {"stablehlo.broadcast_in_dim", LowerBroadcastInDim},
        {"stablehlo.transpose", LowerTranspose},
        {"stablehlo.reshape", LowerReshape},
    };
    for (const auto& entry : SimpleElementwiseOps()) {
      entries->push_back({entry.first, LowerSimple});
    }
    return entries;
  }();
  return *table;
}

}  // namespace sim
}  // namespace pjrtkit
