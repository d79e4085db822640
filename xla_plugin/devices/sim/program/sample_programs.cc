#include "xla_plugin/devices/sim/program/sample_programs.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

// The 4 bytes of a little-endian f32.
std::string F32Bytes(float value) {
  std::string bytes(sizeof(value), '\0');
  const auto* raw = reinterpret_cast<const char*>(&value);
  bytes.assign(raw, raw + sizeof(value));
  return bytes;
}

EwStep Step(EwOp op, ElementType type, int32_t a, int32_t b = -1, int32_t c = -1) {
  EwStep step{};
  step.op = op;
  step.type = type;
  step.operands[0] = a;
  step.operands[1] = b;
  step.operands[2] = c;
  return step;
}

// A fused body with every field set; `seed` makes bodies differ from each other.
FusedElementwise SampleFused(int32_t seed) {
  FusedElementwise fused;
  fused.dims = {2, 3 + seed};
  fused.inputs = {EwInput{ElementType::kF32, {3 + seed, 1}}, EwInput{ElementType::kBF16, {0, 0}},
                  EwInput{}};
  EwStep compare = Step(EwOp::kCompare, ElementType::kPred, 0, 1);
  compare.operand_type = ElementType::kF32;
  compare.attr = kInt64Min + seed;
  compare.constant = std::string("\0\x01\xff", 3);
  EwStep constant = Step(EwOp::kConstant, ElementType::kF32, kInt32Min, 7, -seed - 2);
  constant.operand_type = ElementType::kF16;
  constant.attr = kInt64Max - seed;
  constant.constant = F32Bytes(2.5f + seed);
  fused.steps = {Step(EwOp::kInput, ElementType::kF32, 0), compare, constant,
                 Step(EwOp::kSelect, ElementType::kF32, 1, 2, 0), EwStep{}};
  fused.outputs = {3, 1 + seed};
  return fused;
}

ScalarComputation SampleRegion(int32_t seed, Combiner combiner) {
  return ScalarComputation{SampleFused(seed), combiner};
}

Instruction Make(Opcode opcode, InstructionParams params, const std::string& origin) {
  Instruction instruction;
  instruction.opcode = opcode;
  instruction.operands = {0, 1, -3};
  instruction.results = {2, 70000};
  instruction.params = std::move(params);
  instruction.origin = origin;
  return instruction;
}

ConvolutionParams SampleConvolution() {
  ConvolutionParams p;
  p.window_strides = {1, 2};
  p.padding = {{-1, 2}, {kInt64Min, kInt64Max}};
  p.lhs_dilation = {3, 4};
  p.rhs_dilation = {5, 6};
  p.window_reversal = {true, false, true};
  p.input_batch_dimension = 7;
  p.input_feature_dimension = 8;
  p.input_spatial_dimensions = {9, 10};
  p.kernel_input_feature_dimension = 11;
  p.kernel_output_feature_dimension = 12;
  p.kernel_spatial_dimensions = {13, 14};
  p.output_batch_dimension = 15;
  p.output_feature_dimension = 16;
  p.output_spatial_dimensions = {17, 18};
  p.feature_group_count = 19;
  p.batch_group_count = 20;
  return p;
}

GatherParams SampleGather() {
  GatherParams p;
  p.offset_dims = {1};
  p.collapsed_slice_dims = {2};
  p.operand_batching_dims = {3};
  p.start_indices_batching_dims = {4};
  p.start_index_map = {5, 6};
  p.index_vector_dim = 7;
  p.slice_sizes = {8, 9};
  p.indices_are_sorted = true;
  return p;
}

ScatterParams SampleScatter() {
  ScatterParams p;
  p.update_window_dims = {1};
  p.inserted_window_dims = {2};
  p.input_batching_dims = {3};
  p.scatter_indices_batching_dims = {4};
  p.scatter_dims_to_operand_dims = {5, 6};
  p.index_vector_dim = 7;
  p.indices_are_sorted = true;
  p.unique_indices = true;
  p.update = SampleRegion(5, Combiner::kReplace);
  return p;
}

CollectiveParams SampleCollective() {
  CollectiveParams p;
  p.kind = CollectiveKind::kCollectiveBroadcast;
  p.groups = {{0, 2, 4, 6}, {1, 3, 5, 7}, {}};
  p.dimension = 1;
  p.concat_dimension = 2;
  p.split_count = 4;
  p.source_target_pairs = {{0, 1}, {1, 0}, {7, -7}};
  p.reduction = SampleRegion(6, Combiner::kXor);
  return p;
}

// One instruction of each params alternative, in InstructionParams' order.
// A typed FFI custom call with one attribute of each kind.
CustomCallParams SampleCustomCall() {
  CustomCallParams p;
  p.target = "my_handler";
  p.attributes = {FfiAttribute{"index", FfiAttribute::Kind::kScalar, ElementType::kU64,
                               std::string("\x07\0\0\0\0\0\0\0", 8)},
                  FfiAttribute{"name", FfiAttribute::Kind::kString, ElementType::kInvalid, "x"}};
  p.has_side_effect = true;
  p.operand_orders = {{}, {1, 0}};
  p.result_orders = {{2, 0, 1}};
  p.aliases = {{0, 1}};
  return p;
}

std::vector<Instruction> EveryParamsInstructions() {
  ReduceWindowParams reduce_window{
      {1, 2}, {3, 4}, {5, 6}, {7, 8}, {{-1, 1}, {0, 9}}, SampleRegion(2, Combiner::kMaximum)};
  SelectAndScatterParams select_and_scatter{{2, 2},
                                            {1, 3},
                                            {{4, 5}},
                                            SampleRegion(3, Combiner::kGeneric),
                                            SampleRegion(4, Combiner::kAdd)};
  SortParams sort{
      -1, true,
      Comparator{SampleFused(7),
                 {SortKey{1, ComparisonDirection::kGt, ComparisonType::kTotalOrder}, SortKey{}}}};
  return {
      Make(Opcode::kPartitionId, std::monostate{}, "stablehlo.partition_id loc(\"f.py\":1:2)"),
      Make(Opcode::kFused, SampleFused(1), "stablehlo.add+stablehlo.select"),
      Make(Opcode::kConstant, ConstantParams{std::string("\0\x80\x7f\xff", 4)},
           "stablehlo.constant"),
      Make(Opcode::kTranspose, TransposeParams{{2, 0, 1}}, "stablehlo.transpose"),
      Make(Opcode::kSlice, SliceParams{{0, 1}, {4, 5}, {1, 2}}, "stablehlo.slice"),
      Make(Opcode::kDynamicSlice, DynamicSliceParams{{3, 1}}, "stablehlo.dynamic_slice"),
      Make(Opcode::kDynamicUpdateSlice, DynamicUpdateSliceParams{},
           "stablehlo.dynamic_update_slice"),
      Make(Opcode::kConcatenate, ConcatenateParams{1}, "stablehlo.concatenate"),
      Make(Opcode::kPad, PadParams{{-1, 2}, {3, -4}, {0, 1}}, "stablehlo.pad"),
      Make(Opcode::kReverse, ReverseParams{{0, 2}}, "stablehlo.reverse"),
      Make(Opcode::kReduce, ReduceParams{{1, 3}, SampleRegion(1, Combiner::kAdd)},
           "stablehlo.reduce"),
      Make(Opcode::kReduceWindow, reduce_window, "stablehlo.reduce_window"),
      Make(Opcode::kSelectAndScatter, select_and_scatter, "stablehlo.select_and_scatter"),
      Make(Opcode::kDotGeneral, DotGeneralParams{{0}, {1}, {2, 3}, {4, 5}},
           "stablehlo.dot_general"),
      Make(Opcode::kConvolution, SampleConvolution(), "stablehlo.convolution"),
      Make(Opcode::kGather, SampleGather(), "stablehlo.gather"),
      Make(Opcode::kScatter, SampleScatter(), "stablehlo.scatter"),
      Make(Opcode::kSort, sort, "stablehlo.sort"),
      Make(Opcode::kWhile, WhileParams{1, 2, 3}, "stablehlo.while"),
      Make(Opcode::kCase, CaseParams{{3, 4, 5}}, "stablehlo.case"),
      Make(Opcode::kCollective, SampleCollective(), "stablehlo.all_reduce"),
      Make(Opcode::kRngBitGenerator, RngBitGeneratorParams{RngAlgorithm::kPhilox},
           "stablehlo.rng_bit_generator"),
      Make(Opcode::kCustomCall, SampleCustomCall(), "stablehlo.custom_call"),
      Instruction{},  // Opcode kCopy, monostate, nothing else: the smallest instruction.
  };
}

// A computation named `name` with every field set; `instructions` as given.
Computation SampleComputation(const std::string& name, std::vector<Instruction> instructions) {
  Computation c;
  c.name = name;
  c.slot_types = {ArrayType{ElementType::kF32, {4}}, ArrayType{ElementType::kBF16, {2, 3}},
                  ArrayType{ElementType::kPred, {}}, ArrayType{ElementType::kF6E3M2FN, {kInt64Max}},
                  ArrayType{}};
  c.parameters = {0, 1};
  c.results = {2, 2, 0};
  c.instructions = std::move(instructions);
  c.places = {SlotPlace{SlotPlace::Kind::kParameter, 0}, SlotPlace{SlotPlace::Kind::kResult, 1},
              SlotPlace{SlotPlace::Kind::kAlias, 0}, SlotPlace{SlotPlace::Kind::kArena, 4096},
              SlotPlace{}};
  c.arena_bytes = int64_t{1} << 40;
  return c;
}

}  // namespace

DeviceProgram AddOneProgram() {
  FusedElementwise fused;
  fused.dims = {4};
  fused.inputs = {EwInput{ElementType::kF32, {1}}};
  EwStep one = Step(EwOp::kConstant, ElementType::kF32, -1);
  one.constant = F32Bytes(1.0f);
  fused.steps = {Step(EwOp::kInput, ElementType::kF32, 0), one,
                 Step(EwOp::kAdd, ElementType::kF32, 0, 1)};
  fused.outputs = {2};

  Computation main;
  main.name = "main";
  main.slot_types = {ArrayType{ElementType::kF32, {4}}, ArrayType{ElementType::kF32, {4}}};
  main.parameters = {0};
  main.results = {1};
  Instruction add;
  add.opcode = Opcode::kFused;
  add.operands = {0};
  add.results = {1};
  add.params = std::move(fused);
  add.origin = "stablehlo.constant+stablehlo.add loc(\"add_one.py\":3:10)";
  main.instructions = {std::move(add)};
  main.places = {SlotPlace{SlotPlace::Kind::kParameter, 0}, SlotPlace{SlotPlace::Kind::kResult, 0}};

  DeviceProgram program;
  program.name = "jit_add_one";
  program.computations = {std::move(main)};
  program.parameter_aliases = {-1};
  program.parameter_donatable = {false};
  return program;
}

DeviceProgram WhileLoopProgram() {
  const ArrayType s32{ElementType::kS32, {}};
  const ArrayType f32x2{ElementType::kF32, {2}};
  const ArrayType pred{ElementType::kPred, {}};

  // Entry: (i, x, limit) -> while(i, x; captured limit).
  Computation entry;
  entry.name = "main";
  entry.slot_types = {s32, f32x2, s32, s32, f32x2};
  entry.parameters = {0, 1, 2};
  entry.results = {3, 4};
  Instruction loop;
  loop.opcode = Opcode::kWhile;
  loop.operands = {0, 1, 2};
  loop.results = {3, 4};
  loop.params = WhileParams{1, 2, 1};
  loop.origin = "stablehlo.while loc(\"loop.py\":7:12)";
  entry.instructions = {std::move(loop)};
  entry.places = {SlotPlace{SlotPlace::Kind::kParameter, 0},
                  SlotPlace{SlotPlace::Kind::kParameter, 1},
                  SlotPlace{SlotPlace::Kind::kParameter, 2}, SlotPlace{SlotPlace::Kind::kResult, 0},
                  SlotPlace{SlotPlace::Kind::kResult, 1}};

  // Cond: (i, x, limit) -> i < limit.
  FusedElementwise less;
  less.inputs = {EwInput{ElementType::kS32, {}}, EwInput{ElementType::kS32, {}}};
  EwStep compare = Step(EwOp::kCompare, ElementType::kPred, 0, 1);
  compare.operand_type = ElementType::kS32;
  compare.attr = static_cast<int64_t>(ComparisonDirection::kLt);
  less.steps = {Step(EwOp::kInput, ElementType::kS32, 0), Step(EwOp::kInput, ElementType::kS32, 1),
                compare};
  less.outputs = {2};
  Computation cond;
  cond.name = "cond";
  cond.slot_types = {s32, f32x2, s32, pred};
  cond.parameters = {0, 1, 2};
  cond.results = {3};
  Instruction test;
  test.opcode = Opcode::kFused;
  test.operands = {0, 2};
  test.results = {3};
  test.params = std::move(less);
  test.origin = "stablehlo.compare";
  cond.instructions = {std::move(test)};
  cond.places = {SlotPlace{SlotPlace::Kind::kParameter, 0},
                 SlotPlace{SlotPlace::Kind::kParameter, 1},
                 SlotPlace{SlotPlace::Kind::kParameter, 2}, SlotPlace{SlotPlace::Kind::kResult, 0}};

  // Body: (i, x, limit) -> (i + 1, x * 2).
  FusedElementwise step;
  step.dims = {2};
  step.inputs = {EwInput{ElementType::kS32, {0}}, EwInput{ElementType::kF32, {1}}};
  EwStep one = Step(EwOp::kConstant, ElementType::kS32, -1);
  one.constant = std::string("\x01\0\0\0", 4);
  EwStep two = Step(EwOp::kConstant, ElementType::kF32, -1);
  two.constant = F32Bytes(2.0f);
  step.steps = {Step(EwOp::kInput, ElementType::kS32, 0),
                one,
                Step(EwOp::kAdd, ElementType::kS32, 0, 1),
                Step(EwOp::kInput, ElementType::kF32, 1),
                two,
                Step(EwOp::kMultiply, ElementType::kF32, 3, 4)};
  step.outputs = {2, 5};
  Computation body;
  body.name = "body";
  body.slot_types = {s32, f32x2, s32, s32, f32x2};
  body.parameters = {0, 1, 2};
  body.results = {3, 4};
  Instruction update;
  update.opcode = Opcode::kFused;
  update.operands = {0, 1};
  update.results = {3, 4};
  update.params = std::move(step);
  update.origin = "stablehlo.add+stablehlo.multiply";
  body.instructions = {std::move(update)};
  body.places = {SlotPlace{SlotPlace::Kind::kParameter, 0},
                 SlotPlace{SlotPlace::Kind::kParameter, 1},
                 SlotPlace{SlotPlace::Kind::kParameter, 2}, SlotPlace{SlotPlace::Kind::kResult, 0},
                 SlotPlace{SlotPlace::Kind::kResult, 1}};

  DeviceProgram program;
  program.name = "jit_loop";
  program.computations = {std::move(entry), std::move(cond), std::move(body)};
  program.parameter_aliases = {0, 1, -1};
  program.parameter_donatable = {true, true, false};
  return program;
}

DeviceProgram EveryParamsProgram() {
  DeviceProgram program;
  program.name = std::string("jit_every_params\0\xe2\x9c\x93", 20);
  program.num_replicas = 2;
  program.num_partitions = 4;
  program.computations = {SampleComputation("main", EveryParamsInstructions()),
                          SampleComputation("cond", {Instruction{}}), SampleComputation("body", {}),
                          Computation{}};
  program.parameter_aliases = {1, -1, kInt32Min};
  program.parameter_donatable = {true, false, true};
  return program;
}

}  // namespace sim
}  // namespace pjrtkit
