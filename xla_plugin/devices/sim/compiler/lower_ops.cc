// Lowerings of the ops that become one instruction each: data movement, gather, sort, random
// bits, reductions, scatter, dot_general and convolution. These translate attributes; each
// kernel's Check runs on the finished program (ValidateProgram, executor/program_validator.h).
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/compiler/op_attributes.h"
#include "xla_plugin/devices/sim/compiler/scalar_region.h"
#include "xla_plugin/stablehlo/stablehlo_attributes.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;

// INVALID_ARGUMENT unless `op` has `operands` operands (-1: any) and `results` results.
Status Arity(Lowerer& lowerer, const Operation& op, int operands, int results) {
  if ((operands >= 0 && op.operands.size() != static_cast<size_t>(operands)) ||
      (results >= 0 && op.results.size() != static_cast<size_t>(results))) {
    return lowerer.Invalid(op, "expects " + std::to_string(operands) + " operands and " +
                                   std::to_string(results) + " results");
  }
  return OkStatus();
}

Status Emit(Lowerer& lowerer, const Operation& op, Opcode opcode, InstructionParams params) {
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  return lowerer.EmitInstruction(op, opcode, std::move(params), operands);
}

size_t RankOf(Lowerer& lowerer, const Operation& op, size_t operand) {
  StatusOr<ArrayType> type = lowerer.TypeOf(op.operands[operand], op);
  return type.ok() ? type->dims.size() : 0;
}

Status LowerSlice(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 1, 1));
  SliceParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.start, OpInts(op, "start_indices", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(p.limit, OpInts(op, "limit_indices", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(
      p.strides, OpInts(op, "strides", std::vector<int64_t>(RankOf(lowerer, op, 0), 1)));
  return Emit(lowerer, op, Opcode::kSlice, std::move(p));
}

Status LowerDynamicSlice(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, -1, 1));
  DynamicSliceParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.sizes, OpInts(op, "slice_sizes", std::nullopt));
  return Emit(lowerer, op, Opcode::kDynamicSlice, std::move(p));
}

Status LowerDynamicUpdateSlice(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, -1, 1));
  return Emit(lowerer, op, Opcode::kDynamicUpdateSlice, DynamicUpdateSliceParams{});
}

Status LowerConcatenate(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, -1, 1));
  ConcatenateParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.dimension, OpInt(op, "dimension", std::nullopt));
  return Emit(lowerer, op, Opcode::kConcatenate, std::move(p));
}

Status LowerPad(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 2, 1));
  PadParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.low, OpInts(op, "edge_padding_low", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(p.high, OpInts(op, "edge_padding_high", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(p.interior, OpInts(op, "interior_padding", std::nullopt));
  return Emit(lowerer, op, Opcode::kPad, std::move(p));
}

Status LowerReverse(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 1, 1));
  ReverseParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.dimensions, OpInts(op, "dimensions", std::nullopt));
  return Emit(lowerer, op, Opcode::kReverse, std::move(p));
}

Status LowerGather(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 2, 1));
  PJRTKIT_ASSIGN_OR_RETURN(
      stablehlo::GatherDimensionNumbers dims,
      stablehlo::ReadOpAttribute(op, "dimension_numbers", stablehlo::ReadGatherDimensionNumbers));
  GatherParams p;
  p.offset_dims = dims.offset_dims;
  p.collapsed_slice_dims = dims.collapsed_slice_dims;
  p.operand_batching_dims = dims.operand_batching_dims;
  p.start_indices_batching_dims = dims.start_indices_batching_dims;
  p.start_index_map = dims.start_index_map;
  p.index_vector_dim = dims.index_vector_dim;
  PJRTKIT_ASSIGN_OR_RETURN(p.slice_sizes, OpInts(op, "slice_sizes", std::nullopt));
  p.indices_are_sorted = OpBool(op, "indices_are_sorted");
  return Emit(lowerer, op, Opcode::kGather, std::move(p));
}

Status LowerRngBitGenerator(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 1, 2));
  RngBitGeneratorParams p;
  if (op.Find("rng_algorithm") != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(
        stablehlo::RngAlgorithm algorithm,
        stablehlo::ReadOpAttribute(op, "rng_algorithm", stablehlo::ReadRngAlgorithm));
    p.algorithm = static_cast<RngAlgorithm>(static_cast<int>(algorithm));
  }
  return Emit(lowerer, op, Opcode::kRngBitGenerator, std::move(p));
}

Status LowerOptimizationBarrier(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, static_cast<int>(op.results.size()), -1));
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  // The device runs instructions in program order and never reorders across it: the values as
  // they are.
  for (size_t i = 0; i < operands.size(); ++i) lowerer.Bind(op.results[i], operands[i]);
  return OkStatus();
}

Status LowerGetDimensionSize(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 1, 1));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType operand, lowerer.TypeOf(op.operands[0], op));
  PJRTKIT_ASSIGN_OR_RETURN(ArrayType result, lowerer.TypeOf(op.results[0], op));
  PJRTKIT_ASSIGN_OR_RETURN(int64_t dimension, OpInt(op, "dimension", std::nullopt));
  if (dimension < 0 || dimension >= static_cast<int64_t>(operand.dims.size()) ||
      result.type != ElementType::kS32) {
    return lowerer.Invalid(op, "dimension out of range or result not an s32 scalar");
  }
  const int32_t size = static_cast<int32_t>(operand.dims[dimension]);
  Node node;
  node.kind = NodeKind::kSplat;
  node.bytes.assign(reinterpret_cast<const char*>(&size), sizeof(size));
  node.origin = Lowerer::Origin(op);
  lowerer.Bind(op.results[0], lowerer.graph().AddNode(std::move(node), result));
  return OkStatus();
}

Status LowerSort(Lowerer& lowerer, const Operation& op) {
  if (op.regions.size() != 1 || op.operands.empty()) {
    return lowerer.Invalid(op, "needs operands and a comparator");
  }
  SortParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.dimension, OpInt(op, "dimension", -1));
  p.is_stable = OpBool(op, "is_stable");
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  // A copy: the key function's nodes below grow the graph's value table, which would leave a
  // reference into it dangling.
  const ArrayType shape = lowerer.graph().type(operands[0]);
  if (p.dimension < 0) p.dimension += static_cast<int64_t>(shape.dims.size());
  PJRTKIT_ASSIGN_OR_RETURN(LoweredComparator lowered,
                           LowerComparator(lowerer, op, op.regions.front()));
  p.comparator = std::move(lowered.comparator);
  if (!lowered.keyed_by_function) {
    return lowerer.EmitInstruction(op, Opcode::kSort, std::move(p), operands);
  }
  // The comparator compares f(operand k): sort by f's values computed once per element, as an
  // extra first operand whose sorted copy nobody reads.
  Graph& graph = lowerer.graph();
  const ValueIndex source = operands[lowered.key_operand];
  const FusedElementwise& f = lowered.key_function;
  std::vector<ValueIndex> step_values(f.steps.size(), -1);
  for (size_t s = 0; s < f.steps.size(); ++s) {
    const EwStep& step = f.steps[s];
    if (step.op == EwOp::kInput) {
      step_values[s] = source;
      continue;
    }
    Node node;
    node.origin = Lowerer::Origin(op);
    ArrayType type{step.type, shape.dims};
    if (step.op == EwOp::kConstant) {
      node.kind = NodeKind::kSplat;
      node.bytes = step.constant;
      type.dims.clear();
    } else {
      node.kind = NodeKind::kElementwise;
      node.op = step.op;
      node.operand_type = step.operand_type;
      node.attr = step.attr;
      for (int k = 0; k < 3 && step.operands[k] >= 0; ++k) {
        node.operands.push_back(step_values[step.operands[k]]);
      }
    }
    step_values[s] = graph.AddNode(std::move(node), type);
  }
  const ValueIndex key_values = step_values[f.outputs[0]];
  // The comparator sees (key_lhs, key_rhs, operands...): its body takes two more inputs first.
  SortKey key = lowered.key;
  key.operand = 0;
  FusedElementwise body;
  body.inputs.push_back(EwInput{graph.type(key_values).type, {}});
  body.inputs.push_back(EwInput{graph.type(key_values).type, {}});
  for (const EwInput& input : p.comparator.body.inputs) body.inputs.push_back(input);
  EwStep lhs, rhs, compare;
  lhs.op = rhs.op = EwOp::kInput;
  lhs.type = rhs.type = graph.type(key_values).type;
  lhs.attr = 0;
  rhs.attr = 1;
  compare.op = EwOp::kCompare;
  compare.type = ElementType::kPred;
  compare.operand_type = lhs.type;
  compare.attr = static_cast<int64_t>(key.direction) | (static_cast<int64_t>(key.type) << 8);
  compare.operands[0] = 0;
  compare.operands[1] = 1;
  body.steps = {lhs, rhs, compare};
  body.outputs = {2};
  p.comparator.body = std::move(body);
  p.comparator.keys = {key};
  std::vector<ValueIndex> all = {key_values};
  all.insert(all.end(), operands.begin(), operands.end());
  std::vector<ArrayType> types = {graph.type(key_values)};
  for (ValueIndex v : operands) types.push_back(graph.type(v));
  Node node;
  node.kind = NodeKind::kInstruction;
  node.opcode = Opcode::kSort;
  node.params = std::move(p);
  node.operands = all;
  node.origin = Lowerer::Origin(op);
  const std::vector<ValueIndex> results = graph.AddNode(std::move(node), types);
  for (size_t i = 0; i < op.results.size(); ++i) lowerer.Bind(op.results[i], results[i + 1]);
  return OkStatus();
}

Status LowerReduce(Lowerer& lowerer, const Operation& op) {
  if (op.regions.size() != 1) return lowerer.Invalid(op, "needs a body");
  ReduceParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.dimensions, OpInts(op, "dimensions", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(p.body, LowerScalarRegion(lowerer, op, op.regions.front()));
  return Emit(lowerer, op, Opcode::kReduce, std::move(p));
}

Status LowerReduceWindow(Lowerer& lowerer, const Operation& op) {
  if (op.regions.size() != 1 || op.operands.empty()) return lowerer.Invalid(op, "needs a body");
  const size_t rank = RankOf(lowerer, op, 0);
  ReduceWindowParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.window_dimensions, OpInts(op, "window_dimensions", std::nullopt));
  const std::vector<int64_t> ones(rank, 1);
  PJRTKIT_ASSIGN_OR_RETURN(p.window_strides, OpInts(op, "window_strides", ones));
  PJRTKIT_ASSIGN_OR_RETURN(p.base_dilations, OpInts(op, "base_dilations", ones));
  PJRTKIT_ASSIGN_OR_RETURN(p.window_dilations, OpInts(op, "window_dilations", ones));
  PJRTKIT_ASSIGN_OR_RETURN(p.padding, OpPadding(op, "padding", rank));
  PJRTKIT_ASSIGN_OR_RETURN(p.body, LowerScalarRegion(lowerer, op, op.regions.front()));
  return Emit(lowerer, op, Opcode::kReduceWindow, std::move(p));
}

Status LowerSelectAndScatter(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 3, 1));
  if (op.regions.size() != 2) return lowerer.Invalid(op, "needs select and scatter regions");
  const size_t rank = RankOf(lowerer, op, 0);
  SelectAndScatterParams p;
  PJRTKIT_ASSIGN_OR_RETURN(p.window_dimensions, OpInts(op, "window_dimensions", std::nullopt));
  PJRTKIT_ASSIGN_OR_RETURN(p.window_strides,
                           OpInts(op, "window_strides", std::vector<int64_t>(rank, 1)));
  PJRTKIT_ASSIGN_OR_RETURN(p.padding, OpPadding(op, "padding", rank));
  PJRTKIT_ASSIGN_OR_RETURN(p.select, LowerScalarRegion(lowerer, op, op.regions[0]));
  PJRTKIT_ASSIGN_OR_RETURN(p.scatter, LowerScalarRegion(lowerer, op, op.regions[1]));
  return Emit(lowerer, op, Opcode::kSelectAndScatter, std::move(p));
}

Status LowerScatter(Lowerer& lowerer, const Operation& op) {
  if (op.regions.size() != 1) return lowerer.Invalid(op, "needs an update computation");
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::ScatterDimensionNumbers dims,
                           stablehlo::ReadOpAttribute(op, "scatter_dimension_numbers",
                                                      stablehlo::ReadScatterDimensionNumbers));
  ScatterParams p;
  p.update_window_dims = dims.update_window_dims;
  p.inserted_window_dims = dims.inserted_window_dims;
  p.input_batching_dims = dims.input_batching_dims;
  p.scatter_indices_batching_dims = dims.scatter_indices_batching_dims;
  p.scatter_dims_to_operand_dims = dims.scatter_dims_to_operand_dims;
  p.index_vector_dim = dims.index_vector_dim;
  p.indices_are_sorted = OpBool(op, "indices_are_sorted");
  p.unique_indices = OpBool(op, "unique_indices");
  PJRTKIT_ASSIGN_OR_RETURN(p.update, LowerScalarRegion(lowerer, op, op.regions.front()));
  return Emit(lowerer, op, Opcode::kScatter, std::move(p));
}

Status LowerDotGeneral(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 2, 1));
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::DotDimensionNumbers dims,
                           stablehlo::ReadOpAttribute(op, "dot_dimension_numbers",
                                                      stablehlo::ReadDotDimensionNumbers));
  DotGeneralParams p;
  p.lhs_batching_dimensions = dims.lhs_batching_dimensions;
  p.rhs_batching_dimensions = dims.rhs_batching_dimensions;
  p.lhs_contracting_dimensions = dims.lhs_contracting_dimensions;
  p.rhs_contracting_dimensions = dims.rhs_contracting_dimensions;
  return Emit(lowerer, op, Opcode::kDotGeneral, std::move(p));
}

Status LowerDot(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 2, 1));
  // stablehlo.dot: lhs's last dimension with rhs's first.
  const size_t lhs_rank = RankOf(lowerer, op, 0);
  if (lhs_rank == 0) return lowerer.Invalid(op, "needs a lhs of rank 1 or 2");
  DotGeneralParams p;
  p.lhs_contracting_dimensions = {static_cast<int64_t>(lhs_rank) - 1};
  p.rhs_contracting_dimensions = {0};
  return Emit(lowerer, op, Opcode::kDotGeneral, std::move(p));
}

Status LowerConvolution(Lowerer& lowerer, const Operation& op) {
  PJRTKIT_RETURN_IF_ERROR(Arity(lowerer, op, 2, 1));
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::ConvDimensionNumbers dims,
                           stablehlo::ReadOpAttribute(op, "dimension_numbers",
                                                      stablehlo::ReadConvDimensionNumbers));
  ConvolutionParams p;
  const size_t spatial = dims.input_spatial_dimensions.size();
  const std::vector<int64_t> ones(spatial, 1);
  PJRTKIT_ASSIGN_OR_RETURN(p.window_strides, OpInts(op, "window_strides", ones));
  PJRTKIT_ASSIGN_OR_RETURN(p.padding, OpPadding(op, "padding", spatial));
  PJRTKIT_ASSIGN_OR_RETURN(p.lhs_dilation, OpInts(op, "lhs_dilation", ones));
  PJRTKIT_ASSIGN_OR_RETURN(p.rhs_dilation, OpInts(op, "rhs_dilation", ones));
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> reversal,
                           OpInts(op, "window_reversal", std::vector<int64_t>(spatial, 0)));
  for (int64_t r : reversal) p.window_reversal.push_back(r != 0);
  p.input_batch_dimension = dims.input_batch_dimension;
  p.input_feature_dimension = dims.input_feature_dimension;
  p.input_spatial_dimensions = dims.input_spatial_dimensions;
  p.kernel_input_feature_dimension = dims.kernel_input_feature_dimension;
  p.kernel_output_feature_dimension = dims.kernel_output_feature_dimension;
  p.kernel_spatial_dimensions = dims.kernel_spatial_dimensions;
  p.output_batch_dimension = dims.output_batch_dimension;
  p.output_feature_dimension = dims.output_feature_dimension;
  p.output_spatial_dimensions = dims.output_spatial_dimensions;
  PJRTKIT_ASSIGN_OR_RETURN(p.feature_group_count, OpInt(op, "feature_group_count", 1));
  PJRTKIT_ASSIGN_OR_RETURN(p.batch_group_count, OpInt(op, "batch_group_count", 1));
  return Emit(lowerer, op, Opcode::kConvolution, std::move(p));
}

}  // namespace

const std::vector<OpLoweringEntry>& DataMovementLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.slice", LowerSlice},
      {"stablehlo.dynamic_slice", LowerDynamicSlice},
      {"stablehlo.dynamic_update_slice", LowerDynamicUpdateSlice},
      {"stablehlo.concatenate", LowerConcatenate},
      {"stablehlo.pad", LowerPad},
      {"stablehlo.reverse", LowerReverse},
      {"stablehlo.gather", LowerGather},
      {"stablehlo.sort", LowerSort},
      {"stablehlo.rng_bit_generator", LowerRngBitGenerator},
      {"stablehlo.optimization_barrier", LowerOptimizationBarrier},
      {"stablehlo.get_dimension_size", LowerGetDimensionSize},
  };
  return *table;
}

const std::vector<OpLoweringEntry>& ComputeLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.reduce", LowerReduce},
      {"stablehlo.reduce_window", LowerReduceWindow},
      {"stablehlo.select_and_scatter", LowerSelectAndScatter},
      {"stablehlo.scatter", LowerScatter},
      {"stablehlo.dot_general", LowerDotGeneral},
      {"stablehlo.dot", LowerDot},
      {"stablehlo.convolution", LowerConvolution},
  };
  return *table;
}

}  // namespace sim
}  // namespace pjrtkit
