// SerializeProgram / DeserializeProgram: exact bytes, round trips of every field, determinism, and
// every kind of refused input with its message.
#include "xla_plugin/devices/sim/program/serialization.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/program/sample_programs.h"
#include "xla_plugin/devices/sim/program/wire_writer.h"

// ---- The largest single allocation (the "never allocates more than the bytes hold" checks) ----

namespace {
std::atomic<size_t> largest_allocation{0};
}  // namespace

void* operator new(size_t size) {
  size_t seen = largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !largest_allocation.compare_exchange_weak(seen, size)) {
  }
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }

namespace pjrtkit {
namespace sim {
namespace {

// ---- Field-by-field comparison: the path of every field that differs ----

using Diffs = std::vector<std::string>;

template <typename T>
void Same(const std::string& path, const T& a, const T& b, Diffs* diffs) {
  if (!(a == b)) diffs->push_back(path);
}

// Compares two vectors of structs element by element with Diff.
template <typename T>
void Elements(const std::string& path, const std::vector<T>& a, const std::vector<T>& b,
              Diffs* diffs);

void Diff(const std::string& p, const ArrayType& a, const ArrayType& b, Diffs* d) {
  Same(p + ".type", a.type, b.type, d);
  Same(p + ".dims", a.dims, b.dims, d);
}

void Diff(const std::string& p, const EwInput& a, const EwInput& b, Diffs* d) {
  Same(p + ".type", a.type, b.type, d);
  Same(p + ".strides", a.strides, b.strides, d);
}

void Diff(const std::string& p, const EwStep& a, const EwStep& b, Diffs* d) {
  Same(p + ".op", a.op, b.op, d);
  Same(p + ".type", a.type, b.type, d);
  Same(p + ".operand_type", a.operand_type, b.operand_type, d);
  for (int i = 0; i < 3; ++i) {
    Same(p + ".operands[" + std::to_string(i) + "]", a.operands[i], b.operands[i], d);
  }
  Same(p + ".attr", a.attr, b.attr, d);
  Same(p + ".constant", a.constant, b.constant, d);
}

void Diff(const std::string& p, const FusedElementwise& a, const FusedElementwise& b, Diffs* d) {
  Same(p + ".dims", a.dims, b.dims, d);
  Elements(p + ".inputs", a.inputs, b.inputs, d);
  Elements(p + ".steps", a.steps, b.steps, d);
  Same(p + ".outputs", a.outputs, b.outputs, d);
}

void Diff(const std::string& p, const ScalarComputation& a, const ScalarComputation& b, Diffs* d) {
  Diff(p + ".body", a.body, b.body, d);
  Same(p + ".combiner", a.combiner, b.combiner, d);
}

void Diff(const std::string& p, const SortKey& a, const SortKey& b, Diffs* d) {
  Same(p + ".operand", a.operand, b.operand, d);
  Same(p + ".direction", a.direction, b.direction, d);
  Same(p + ".type", a.type, b.type, d);
}

void Diff(const std::string& p, const Comparator& a, const Comparator& b, Diffs* d) {
  Diff(p + ".body", a.body, b.body, d);
  Elements(p + ".keys", a.keys, b.keys, d);
}

void Diff(const std::string&, const std::monostate&, const std::monostate&, Diffs*) {}
void Diff(const std::string&, const DynamicUpdateSliceParams&, const DynamicUpdateSliceParams&,
          Diffs*) {}

void Diff(const std::string& p, const ConstantParams& a, const ConstantParams& b, Diffs* d) {
  Same(p + ".bytes", a.bytes, b.bytes, d);
}

void Diff(const std::string& p, const TransposeParams& a, const TransposeParams& b, Diffs* d) {
  Same(p + ".permutation", a.permutation, b.permutation, d);
}

void Diff(const std::string& p, const SliceParams& a, const SliceParams& b, Diffs* d) {
  Same(p + ".start", a.start, b.start, d);
  Same(p + ".limit", a.limit, b.limit, d);
  Same(p + ".strides", a.strides, b.strides, d);
}

void Diff(const std::string& p, const DynamicSliceParams& a, const DynamicSliceParams& b,
          Diffs* d) {
  Same(p + ".sizes", a.sizes, b.sizes, d);
}

void Diff(const std::string& p, const ConcatenateParams& a, const ConcatenateParams& b, Diffs* d) {
  Same(p + ".dimension", a.dimension, b.dimension, d);
}

void Diff(const std::string& p, const PadParams& a, const PadParams& b, Diffs* d) {
  Same(p + ".low", a.low, b.low, d);
  Same(p + ".high", a.high, b.high, d);
  Same(p + ".interior", a.interior, b.interior, d);
}

void Diff(const std::string& p, const ReverseParams& a, const ReverseParams& b, Diffs* d) {
  Same(p + ".dimensions", a.dimensions, b.dimensions, d);
}

void Diff(const std::string& p, const ReduceParams& a, const ReduceParams& b, Diffs* d) {
  Same(p + ".dimensions", a.dimensions, b.dimensions, d);
  Diff(p + ".body", a.body, b.body, d);
}

void Diff(const std::string& p, const ReduceWindowParams& a, const ReduceWindowParams& b,
          Diffs* d) {
  Same(p + ".window_dimensions", a.window_dimensions, b.window_dimensions, d);
  Same(p + ".window_strides", a.window_strides, b.window_strides, d);
  Same(p + ".base_dilations", a.base_dilations, b.base_dilations, d);
  Same(p + ".window_dilations", a.window_dilations, b.window_dilations, d);
  Same(p + ".padding", a.padding, b.padding, d);
  Diff(p + ".body", a.body, b.body, d);
}

void Diff(const std::string& p, const SelectAndScatterParams& a, const SelectAndScatterParams& b,
          Diffs* d) {
  Same(p + ".window_dimensions", a.window_dimensions, b.window_dimensions, d);
  Same(p + ".window_strides", a.window_strides, b.window_strides, d);
  Same(p + ".padding", a.padding, b.padding, d);
  Diff(p + ".select", a.select, b.select, d);
  Diff(p + ".scatter", a.scatter, b.scatter, d);
}

void Diff(const std::string& p, const DotGeneralParams& a, const DotGeneralParams& b, Diffs* d) {
  Same(p + ".lhs_batching_dimensions", a.lhs_batching_dimensions, b.lhs_batching_dimensions, d);
  Same(p + ".rhs_batching_dimensions", a.rhs_batching_dimensions, b.rhs_batching_dimensions, d);
  Same(p + ".lhs_contracting_dimensions", a.lhs_contracting_dimensions,
       b.lhs_contracting_dimensions, d);
  Same(p + ".rhs_contracting_dimensions", a.rhs_contracting_dimensions,
       b.rhs_contracting_dimensions, d);
}

void Diff(const std::string& p, const ConvolutionParams& a, const ConvolutionParams& b, Diffs* d) {
  Same(p + ".window_strides", a.window_strides, b.window_strides, d);
  Same(p + ".padding", a.padding, b.padding, d);
  Same(p + ".lhs_dilation", a.lhs_dilation, b.lhs_dilation, d);
  Same(p + ".rhs_dilation", a.rhs_dilation, b.rhs_dilation, d);
  Same(p + ".window_reversal", a.window_reversal, b.window_reversal, d);
  Same(p + ".input_batch_dimension", a.input_batch_dimension, b.input_batch_dimension, d);
  Same(p + ".input_feature_dimension", a.input_feature_dimension, b.input_feature_dimension, d);
  Same(p + ".input_spatial_dimensions", a.input_spatial_dimensions, b.input_spatial_dimensions, d);
  Same(p + ".kernel_input_feature_dimension", a.kernel_input_feature_dimension,
       b.kernel_input_feature_dimension, d);
  Same(p + ".kernel_output_feature_dimension", a.kernel_output_feature_dimension,
       b.kernel_output_feature_dimension, d);
  Same(p + ".kernel_spatial_dimensions", a.kernel_spatial_dimensions, b.kernel_spatial_dimensions,
       d);
  Same(p + ".output_batch_dimension", a.output_batch_dimension, b.output_batch_dimension, d);
  Same(p + ".output_feature_dimension", a.output_feature_dimension, b.output_feature_dimension, d);
  Same(p + ".output_spatial_dimensions", a.output_spatial_dimensions, b.output_spatial_dimensions,
       d);
  Same(p + ".feature_group_count", a.feature_group_count, b.feature_group_count, d);
  Same(p + ".batch_group_count", a.batch_group_count, b.batch_group_count, d);
}

void Diff(const std::string& p, const GatherParams& a, const GatherParams& b, Diffs* d) {
  Same(p + ".offset_dims", a.offset_dims, b.offset_dims, d);
  Same(p + ".collapsed_slice_dims", a.collapsed_slice_dims, b.collapsed_slice_dims, d);
  Same(p + ".operand_batching_dims", a.operand_batching_dims, b.operand_batching_dims, d);
  Same(p + ".start_indices_batching_dims", a.start_indices_batching_dims,
       b.start_indices_batching_dims, d);
  Same(p + ".start_index_map", a.start_index_map, b.start_index_map, d);
  Same(p + ".index_vector_dim", a.index_vector_dim, b.index_vector_dim, d);
  Same(p + ".slice_sizes", a.slice_sizes, b.slice_sizes, d);
  Same(p + ".indices_are_sorted", a.indices_are_sorted, b.indices_are_sorted, d);
}

void Diff(const std::string& p, const ScatterParams& a, const ScatterParams& b, Diffs* d) {
  Same(p + ".update_window_dims", a.update_window_dims, b.update_window_dims, d);
  Same(p + ".inserted_window_dims", a.inserted_window_dims, b.inserted_window_dims, d);
  Same(p + ".input_batching_dims", a.input_batching_dims, b.input_batching_dims, d);
  Same(p + ".scatter_indices_batching_dims", a.scatter_indices_batching_dims,
       b.scatter_indices_batching_dims, d);
  Same(p + ".scatter_dims_to_operand_dims", a.scatter_dims_to_operand_dims,
       b.scatter_dims_to_operand_dims, d);
  Same(p + ".index_vector_dim", a.index_vector_dim, b.index_vector_dim, d);
  Same(p + ".indices_are_sorted", a.indices_are_sorted, b.indices_are_sorted, d);
  Same(p + ".unique_indices", a.unique_indices, b.unique_indices, d);
  Diff(p + ".update", a.update, b.update, d);
}

void Diff(const std::string& p, const SortParams& a, const SortParams& b, Diffs* d) {
  Same(p + ".dimension", a.dimension, b.dimension, d);
  Same(p + ".is_stable", a.is_stable, b.is_stable, d);
  Diff(p + ".comparator", a.comparator, b.comparator, d);
}

void Diff(const std::string& p, const WhileParams& a, const WhileParams& b, Diffs* d) {
  Same(p + ".cond", a.cond, b.cond, d);
  Same(p + ".body", a.body, b.body, d);
  Same(p + ".num_captured", a.num_captured, b.num_captured, d);
}

void Diff(const std::string& p, const CaseParams& a, const CaseParams& b, Diffs* d) {
  Same(p + ".branches", a.branches, b.branches, d);
}

void Diff(const std::string& p, const CollectiveParams& a, const CollectiveParams& b, Diffs* d) {
  Same(p + ".kind", a.kind, b.kind, d);
  Same(p + ".groups", a.groups, b.groups, d);
  Same(p + ".dimension", a.dimension, b.dimension, d);
  Same(p + ".concat_dimension", a.concat_dimension, b.concat_dimension, d);
  Same(p + ".split_count", a.split_count, b.split_count, d);
  Same(p + ".source_target_pairs", a.source_target_pairs, b.source_target_pairs, d);
  Diff(p + ".reduction", a.reduction, b.reduction, d);
}

void Diff(const std::string& p, const RngBitGeneratorParams& a, const RngBitGeneratorParams& b,
          Diffs* d) {
  Same(p + ".algorithm", a.algorithm, b.algorithm, d);
}

void Diff(const std::string& p, const CustomCallParams& a, const CustomCallParams& b, Diffs* d) {
  Same(p + ".target", a.target, b.target, d);
  Same(p + ".attributes.size", a.attributes.size(), b.attributes.size(), d);
  for (size_t i = 0; i < a.attributes.size() && i < b.attributes.size(); ++i) {
    const std::string q = p + ".attributes[" + std::to_string(i) + "]";
    Same(q + ".name", a.attributes[i].name, b.attributes[i].name, d);
    Same(q + ".kind", a.attributes[i].kind, b.attributes[i].kind, d);
    Same(q + ".type", a.attributes[i].type, b.attributes[i].type, d);
    Same(q + ".bytes", a.attributes[i].bytes, b.attributes[i].bytes, d);
  }
  Same(p + ".has_side_effect", a.has_side_effect, b.has_side_effect, d);
  Same(p + ".operand_orders", a.operand_orders, b.operand_orders, d);
  Same(p + ".result_orders", a.result_orders, b.result_orders, d);
  Same(p + ".aliases", a.aliases, b.aliases, d);
}

void Diff(const std::string& p, const InstructionParams& a, const InstructionParams& b, Diffs* d) {
  if (a.index() != b.index()) {
    d->push_back(p + " (alternative " + std::to_string(a.index()) + " vs " +
                 std::to_string(b.index()) + ")");
    return;
  }
  std::visit(
      [&](const auto& alternative) {
        using T = std::decay_t<decltype(alternative)>;
        Diff(p, alternative, std::get<T>(b), d);
      },
      a);
}

void Diff(const std::string& p, const Instruction& a, const Instruction& b, Diffs* d) {
  Same(p + ".opcode", a.opcode, b.opcode, d);
  Same(p + ".operands", a.operands, b.operands, d);
  Same(p + ".results", a.results, b.results, d);
  Diff(p + ".params", a.params, b.params, d);
  Same(p + ".origin", a.origin, b.origin, d);
}

void Diff(const std::string& p, const SlotPlace& a, const SlotPlace& b, Diffs* d) {
  Same(p + ".kind", a.kind, b.kind, d);
  Same(p + ".value", a.value, b.value, d);
}

void Diff(const std::string& p, const Computation& a, const Computation& b, Diffs* d) {
  Same(p + ".name", a.name, b.name, d);
  Elements(p + ".slot_types", a.slot_types, b.slot_types, d);
  Same(p + ".parameters", a.parameters, b.parameters, d);
  Same(p + ".results", a.results, b.results, d);
  Elements(p + ".instructions", a.instructions, b.instructions, d);
  Elements(p + ".places", a.places, b.places, d);
  Same(p + ".arena_bytes", a.arena_bytes, b.arena_bytes, d);
}

void Diff(const std::string& p, const DeviceProgram& a, const DeviceProgram& b, Diffs* d) {
  Same(p + ".name", a.name, b.name, d);
  Same(p + ".num_replicas", a.num_replicas, b.num_replicas, d);
  Same(p + ".num_partitions", a.num_partitions, b.num_partitions, d);
  Elements(p + ".computations", a.computations, b.computations, d);
  Same(p + ".parameter_aliases", a.parameter_aliases, b.parameter_aliases, d);
  Same(p + ".parameter_donatable", a.parameter_donatable, b.parameter_donatable, d);
  Same(p + ".parameter_shardings", a.parameter_shardings, b.parameter_shardings, d);
  Same(p + ".result_shardings", a.result_shardings, b.result_shardings, d);
}

template <typename T>
void Elements(const std::string& path, const std::vector<T>& a, const std::vector<T>& b,
              Diffs* diffs) {
  if (a.size() != b.size()) {
    diffs->push_back(path + ".size()");
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    Diff(path + "[" + std::to_string(i) + "]", a[i], b[i], diffs);
  }
}

// Every field path where `a` and `b` differ.
Diffs ProgramDiff(const DeviceProgram& a, const DeviceProgram& b) {
  Diffs diffs;
  Diff("program", a, b, &diffs);
  return diffs;
}

// ---- Building inputs by hand ----

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// A valid header (or one with `version`) in front of `payload`.
std::string WithHeader(std::string_view payload, uint32_t version = kProgramFormatVersion) {
  WireWriter w;
  w.Raw(kProgramMagic);
  w.Fixed32(version);
  w.Fixed64(payload.size());
  w.Fixed64(Fnv1a64(payload));
  w.Raw(payload);
  return w.Release();
}

std::string PayloadOf(const std::string& bytes) { return bytes.substr(kProgramHeaderBytes); }

// The payload of a program "p" (1 x 1) with one computation "c" (no slots) whose instructions are
// written by `write_instructions` (count included), then empty aliases and donations.
std::string ProgramPayload(const std::function<void(WireWriter&)>& write_instructions) {
  WireWriter w;
  w.String("p");
  w.Int64(1);
  w.Int64(1);
  w.Varint(1);  // computations
  w.String("c");
  w.Varint(0);  // slot_types
  w.Varint(0);  // parameters
  w.Varint(0);  // results
  write_instructions(w);
  w.Varint(0);  // places
  w.Int64(0);   // arena_bytes
  w.Varint(0);  // parameter_aliases
  w.Varint(0);  // parameter_donatable
  w.Varint(0);  // parameter_shardings
  w.Varint(0);  // result_shardings
  return w.Release();
}

// ProgramPayload with one instruction: `opcode`, no operands or results, params alternative
// `index` whose fields `write_params` writes, origin "o".
std::string OneInstructionPayload(uint64_t opcode, uint64_t index,
                                  const std::function<void(WireWriter&)>& write_params) {
  return ProgramPayload([&](WireWriter& w) {
    w.Varint(1);
    w.Varint(opcode);
    w.Varint(0);
    w.Varint(0);
    w.Varint(index);
    write_params(w);
    w.String("o");
  });
}

// The message DeserializeProgram gives for `bytes`, checking it is INVALID_ARGUMENT.
std::string Refusal(std::string_view bytes) {
  StatusOr<DeviceProgram> program = DeserializeProgram(bytes);
  if (program.ok()) return "<accepted>";
  EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(program.status().message().empty());
  return program.status().message();
}

// ---- Round trips ----

void ExpectRoundTrip(const DeviceProgram& program) {
  const std::string bytes = SerializeProgram(program);
  StatusOr<DeviceProgram> back = DeserializeProgram(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const Diffs diffs = ProgramDiff(program, *back);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " fields differ, the first: " << diffs.front();
  EXPECT_EQ(SerializeProgram(*back), bytes);
}

TEST(SerializationTest, ExactBytesOfASmallProgram) {
  DeviceProgram program;
  program.name = "p";
  Computation c;
  c.name = "m";
  c.slot_types = {ArrayType{ElementType::kF32, {-1, 300}}};
  c.parameters = {0};
  c.results = {0};
  Instruction copy;
  copy.opcode = Opcode::kCopy;
  copy.params = ConcatenateParams{-2};
  copy.origin = "o";
  c.instructions = {copy};
  c.places = {SlotPlace{SlotPlace::Kind::kParameter, 0}};
  c.arena_bytes = 64;
  program.computations = {c};
  program.parameter_aliases = {-1};
  program.parameter_donatable = {true};
  program.result_shardings = {std::string("\x08\x04", 2)};  // xla.OpSharding MANUAL.
  const std::string payload(
      "\x01p"                          // name
      "\x02\x02"                       // num_replicas 1, num_partitions 1 (zigzag)
      "\x01"                           // 1 computation
      "\x01m"                          // name
      "\x01\x0b\x02\x01\xd8\x04"       // slot_types: f32 (11), dims {-1, 300}
      "\x01\x00\x01\x00"               // parameters {0}, results {0}
      "\x01\x02\x00\x00\x07\x03\x01o"  // copy (2), no operands or results, params 7: -2, "o"
      "\x01\x01\x00"                   // places: kParameter 0
      "\x80\x01"                       // arena_bytes 64
      "\x01\x01\x01\x01"               // parameter_aliases {-1}, parameter_donatable {true}
      "\x00"                           // parameter_shardings {}
      "\x01\x02\x08\x04",              // result_shardings {"\x08\x04"}
      39);
  const std::string bytes = SerializeProgram(program);
  EXPECT_EQ(bytes, WithHeader(payload));
  EXPECT_EQ(bytes.substr(0, 12), std::string("PJRTKIT-SIM\0", 12));
  EXPECT_EQ(bytes.substr(12, 4), std::string("\x03\0\0\0", 4));
  EXPECT_EQ(bytes.substr(16, 8), std::string("\x27\0\0\0\0\0\0\0", 8));
  ExpectRoundTrip(program);
}

TEST(SerializationTest, EveryParamsProgramRoundTripsFieldByField) {
  const DeviceProgram program = EveryParamsProgram();
  std::set<size_t> alternatives;
  for (const Instruction& instruction : program.computations[0].instructions) {
    alternatives.insert(instruction.params.index());
  }
  EXPECT_EQ(alternatives.size(), std::variant_size_v<InstructionParams>);
  ExpectRoundTrip(program);
}

TEST(SerializationTest, SamplesAndDefaultProgramRoundTrip) {
  ExpectRoundTrip(AddOneProgram());
  ExpectRoundTrip(WhileLoopProgram());
  ExpectRoundTrip(DeviceProgram{});
}

// The comparison is sensitive: changing any one field of the sample is noticed.
TEST(SerializationTest, ProgramDiffSeesEveryChange) {
  const DeviceProgram program = EveryParamsProgram();
  DeviceProgram changed = program;
  std::get<ConvolutionParams>(changed.computations[0].instructions[14].params).window_reversal[1] =
      true;
  std::get<FusedElementwise>(changed.computations[0].instructions[1].params).steps[1].operands[2] =
      5;
  EXPECT_EQ(ProgramDiff(program, changed),
            (Diffs{"program.computations[0].instructions[1].params.steps[1].operands[2]",
                   "program.computations[0].instructions[14].params.window_reversal"}));
  EXPECT_NE(SerializeProgram(program), SerializeProgram(changed));
}

// Vectors of default-constructed elements at the end of the payload: the smallest encoding of
// each element fits the lower bound the reader uses to refuse counts.
TEST(SerializationTest, SmallestElementsRoundTrip) {
  std::vector<DeviceProgram> programs;
  DeviceProgram base;
  base.computations.resize(1);
  auto with = [&](const std::function<void(Computation&)>& change) {
    DeviceProgram program = base;
    change(program.computations.back());
    programs.push_back(program);
  };
  with([](Computation& c) { c.slot_types.resize(20); });
  with([](Computation& c) { c.instructions.resize(20); });
  with([](Computation& c) { c.places.resize(20); });
  auto with_params = [&](InstructionParams params) {
    with([&](Computation& c) {
      c.instructions = {Instruction{Opcode::kCopy, {}, {}, params, ""}};
    });
  };
  FusedElementwise inputs;
  inputs.inputs.resize(20);
  with_params(inputs);
  FusedElementwise steps;
  steps.steps.resize(20);
  with_params(steps);
  SortParams sort;
  sort.comparator.keys.resize(20);
  with_params(sort);
  CollectiveParams collective;
  collective.groups.resize(20);
  with_params(collective);
  ConvolutionParams convolution;
  convolution.padding.resize(20);
  with_params(convolution);
  DeviceProgram many = base;
  many.computations.resize(20);
  programs.push_back(many);
  for (const DeviceProgram& program : programs) ExpectRoundTrip(program);
}

TEST(SerializationTest, DeterministicBytes) {
  const std::string first = SerializeProgram(EveryParamsProgram());
  EXPECT_EQ(SerializeProgram(EveryParamsProgram()), first);
  const DeviceProgram program = EveryParamsProgram();
  EXPECT_EQ(SerializeProgram(program), SerializeProgram(program));
  const DeviceProgram copy = program;
  EXPECT_EQ(SerializeProgram(copy), first);
}

// DeserializeProgram decodes; what the program means is ValidateProgram's business.
TEST(SerializationTest, DecodesSemanticallyInvalidPrograms) {
  DeviceProgram program;
  Instruction dot;
  dot.opcode = Opcode::kDotGeneral;  // With monostate params and slots that do not exist.
  dot.operands = {7, -3};
  program.computations = {Computation{}};
  program.computations[0].instructions = {dot};
  program.num_replicas = -5;
  ExpectRoundTrip(program);
}

// ---- The header ----

TEST(SerializationTest, RefusesOtherMagic) {
  const std::string bytes = SerializeProgram(AddOneProgram());
  EXPECT_EQ(Refusal("HloModuleProto..."),
            "not a serialized sim executable: the bytes do not start with \"PJRTKIT-SIM\\0\"");
  std::string other = bytes;
  other[11] = 'X';  // The magic's '\0'.
  EXPECT_EQ(Refusal(other),
            "not a serialized sim executable: the bytes do not start with \"PJRTKIT-SIM\\0\"");
  EXPECT_EQ(Refusal("PJRTKIT-SIM"),  // 11 bytes of it: a prefix.
            "serialized sim executable: truncated: 11 bytes, shorter than the 32-byte header");
}

TEST(SerializationTest, RefusesOtherVersionsNamingBoth) {
  const std::string payload = PayloadOf(SerializeProgram(AddOneProgram()));
  EXPECT_EQ(Refusal(WithHeader(payload, 1)),  // Before programs kept their shardings.
            "serialized sim executable: format version 1, but this plugin reads version 3 only: "
            "recompile the program with this plugin");
  EXPECT_EQ(Refusal(WithHeader(payload, 2)),  // Before custom calls.
            "serialized sim executable: format version 2, but this plugin reads version 3 only: "
            "recompile the program with this plugin");
  EXPECT_EQ(Refusal(WithHeader(payload, 4)),
            "serialized sim executable: format version 4, but this plugin reads version 3 only: "
            "recompile the program with this plugin");
  EXPECT_EQ(Refusal(WithHeader(payload, 0)),
            "serialized sim executable: format version 0, but this plugin reads version 3 only: "
            "recompile the program with this plugin");
  EXPECT_EQ(Refusal(WithHeader(payload, 0x03000000)),  // A big-endian 3.
            "serialized sim executable: format version 50331648, but this plugin reads version "
            "3 only: recompile the program with this plugin");
}

TEST(SerializationTest, RefusesEveryFlippedPayloadByteAsCorrupted) {
  const std::string bytes = SerializeProgram(EveryParamsProgram());
  for (size_t i = kProgramHeaderBytes; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80}) {
      std::string corrupted = bytes;
      corrupted[i] = static_cast<char>(corrupted[i] ^ flip);
      const std::string message = Refusal(corrupted);
      ASSERT_EQ(
          message.rfind("serialized sim executable: corrupted: the payload's checksum is 0x", 0),
          0u)
          << "byte " << i << ": " << message;
    }
  }
  std::string corrupted = bytes;
  corrupted[24] ^= 0x10;  // The stored checksum itself.
  EXPECT_NE(Refusal(corrupted).find("corrupted"), std::string::npos);
}

TEST(SerializationTest, RefusesEveryTruncation) {
  const std::string bytes = SerializeProgram(EveryParamsProgram());
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::string message = Refusal(std::string_view(bytes).substr(0, size));
    ASSERT_NE(message.find("truncated"), std::string::npos) << size << ": " << message;
  }
  EXPECT_EQ(Refusal(bytes.substr(0, 40)),
            "serialized sim executable: truncated: the header announces a " +
                std::to_string(bytes.size() - kProgramHeaderBytes) +
                "-byte payload, 8 bytes follow it");
}

// A payload cut short with a header that matches it: the decoder itself finds the end.
TEST(SerializationTest, RefusesEveryTruncatedPayloadWithAValidHeader) {
  const std::string payload = PayloadOf(SerializeProgram(EveryParamsProgram()));
  for (size_t size = 0; size < payload.size(); ++size) {
    const std::string message = Refusal(WithHeader(payload.substr(0, size)));
    ASSERT_EQ(message.rfind("serialized sim executable: at payload byte ", 0), 0u)
        << size << ": " << message;
  }
  EXPECT_EQ(Refusal(WithHeader("")),
            "serialized sim executable: at payload byte 0 (name): truncated: 1 more bytes needed, "
            "0 left");
}

TEST(SerializationTest, RefusesTrailingBytes) {
  const std::string bytes = SerializeProgram(AddOneProgram());
  const size_t payload_size = bytes.size() - kProgramHeaderBytes;
  EXPECT_EQ(Refusal(bytes + "xy"), "serialized sim executable: 2 trailing bytes after the " +
                                       std::to_string(payload_size) + "-byte payload");
  EXPECT_EQ(Refusal(WithHeader(PayloadOf(bytes) + "z")),
            "serialized sim executable: at payload byte " + std::to_string(payload_size) +
                ": 1 trailing bytes after the program");
}

// ---- Sizes and counts the bytes cannot hold: refused before anything is allocated ----

// The refusal of `bytes`, which must allocate no block larger than 1 KiB on the way.
std::string RefusalWithoutLargeAllocations(const std::string& bytes) {
  largest_allocation = 0;
  StatusOr<DeviceProgram> program = DeserializeProgram(bytes);
  const size_t largest = largest_allocation;
  EXPECT_LE(largest, 1024u) << "largest allocation while reading " << bytes.size() << " bytes";
  EXPECT_FALSE(program.ok());
  return program.ok() ? "<accepted>" : program.status().message();
}

TEST(SerializationTest, RefusesHugeCountsWithoutAllocating) {
  // The allocation hook sees what the reader allocates: 100 computations are one block.
  DeviceProgram hundred;
  hundred.computations.resize(100);
  const std::string bytes = SerializeProgram(hundred);
  largest_allocation = 0;
  ASSERT_TRUE(DeserializeProgram(bytes).ok());
  EXPECT_GE(largest_allocation, 100 * sizeof(Computation));

  constexpr uint64_t kHuge = uint64_t{1} << 40;
  WireWriter computations;
  computations.String("p");
  computations.Int64(1);
  computations.Int64(1);
  computations.Varint(kHuge);  // computations
  EXPECT_EQ(RefusalWithoutLargeAllocations(WithHeader(computations.bytes())),
            "serialized sim executable: at payload byte 4 (computations): count 1099511627776 "
            "does not fit in the 0 bytes left (each element takes at least 7)");

  WireWriter dims;
  dims.String("p");
  dims.Int64(1);
  dims.Int64(1);
  dims.Varint(1);
  dims.String("c");
  dims.Varint(1);  // slot_types
  dims.Enum(ElementType::kF32);
  dims.Varint(~uint64_t{0});  // dims: 2^64 - 1
  dims.Raw(std::string(80, '\0'));
  EXPECT_EQ(RefusalWithoutLargeAllocations(WithHeader(dims.bytes())),
            "serialized sim executable: at payload byte 9 (computations[0].slot_types[0].dims): "
            "count 18446744073709551615 does not fit in the 80 bytes left (each element takes at "
            "least 1)");

  WireWriter name;
  name.Varint(kHuge);
  name.Raw(std::string(100, 'x'));
  EXPECT_EQ(RefusalWithoutLargeAllocations(WithHeader(name.bytes())),
            "serialized sim executable: at payload byte 0 (name): string of 1099511627776 bytes "
            "does not fit in the 100 bytes left");

  const std::string groups = OneInstructionPayload(20, 20, [](WireWriter& w) {
    w.Enum(CollectiveKind::kAllGather);
    w.Varint(3);
    w.Varint(0);
    w.Varint(kHuge);
  });
  EXPECT_EQ(RefusalWithoutLargeAllocations(WithHeader(groups)),
            "serialized sim executable: at payload byte 18 "
            "(computations[0].instructions[0].CollectiveParams.groups[1]): count 1099511627776 "
            "does not fit in the 8 bytes left (each element takes at least 1)");
}

// ---- Values out of range ----

TEST(SerializationTest, RefusesEnumValuesOutOfRange) {
  EXPECT_EQ(Refusal(WithHeader(OneInstructionPayload(kNumOpcodes, 0, [](WireWriter&) {}))),
            "serialized sim executable: at payload byte 11 (computations[0].instructions[0]."
            "opcode): enum value 25 out of range [0, 25)");
  const std::string element_type = ProgramPayload([](WireWriter& w) {
    w.Varint(1);
    w.Varint(static_cast<uint64_t>(Opcode::kFused));
    w.Varint(0);
    w.Varint(0);
    w.Varint(1);  // FusedElementwise
    w.Varint(0);  // dims
    w.Varint(1);  // inputs
    w.Varint(kMaxElementType + 1);
  });
  EXPECT_EQ(Refusal(WithHeader(element_type)),
            "serialized sim executable: at payload byte 17 (computations[0].instructions[0]."
            "FusedElementwise.inputs[0].type): enum value 34 out of range [0, 34)");
  const std::string combiner = OneInstructionPayload(10, 10, [](WireWriter& w) {
    w.Varint(0);                             // dimensions
    w.Raw(std::string_view("\0\0\0\0", 4));  // body: an empty FusedElementwise
    w.Varint(9);                             // combiner
  });
  EXPECT_NE(Refusal(WithHeader(combiner))
                .find("(computations[0].instructions[0].ReduceParams.body.combiner): enum value 9 "
                      "out of range [0, 9)"),
            std::string::npos);
  const std::string rng = OneInstructionPayload(23, 21, [](WireWriter& w) { w.Varint(3); });
  EXPECT_NE(Refusal(WithHeader(rng))
                .find("RngBitGeneratorParams.algorithm): enum value 3 out of "
                      "range [0, 3)"),
            std::string::npos);
  const std::string sort_key = OneInstructionPayload(17, 17, [](WireWriter& w) {
    w.Int64(0);
    w.Bool(false);
    w.Raw(std::string_view("\0\0\0\0", 4));  // comparator body
    w.Varint(1);                             // keys
    w.Int32(0);
    w.Varint(6);  // direction
  });
  EXPECT_NE(Refusal(WithHeader(sort_key))
                .find("SortParams.comparator.keys[0].direction): enum "
                      "value 6 out of range [0, 6)"),
            std::string::npos);
  const std::string place = ProgramPayload([](WireWriter& w) {
    w.Varint(0);  // no instructions
    w.Varint(1);  // then: one place of kind 4 (the caller writes places 0 afterwards)
    w.Varint(4);
  });
  EXPECT_NE(Refusal(WithHeader(place))
                .find("(computations[0].places[0].kind): enum value 4 out "
                      "of range [0, 4)"),
            std::string::npos);
}

TEST(SerializationTest, RefusesParamsAlternativeOutOfRange) {
  EXPECT_EQ(Refusal(WithHeader(OneInstructionPayload(2, 23, [](WireWriter&) {}))),
            "serialized sim executable: at payload byte 14 (computations[0].instructions[0]."
            "params): params alternative index 23 out of range [0, 23)");
}

TEST(SerializationTest, RefusesNonBoolsAndIntsOutOfRange) {
  const std::string reversal = OneInstructionPayload(14, 14, [](WireWriter& w) {
    w.Varint(0);
    w.Varint(0);
    w.Varint(0);
    w.Varint(0);
    w.Varint(2);  // window_reversal: {true, 2}
    w.Varint(1);
    w.Varint(2);
  });
  EXPECT_NE(Refusal(WithHeader(reversal))
                .find("(computations[0].instructions[0].ConvolutionParams.window_reversal[1]): "
                      "value 2 is not a bool (0 or 1)"),
            std::string::npos);
  WireWriter alias;
  alias.String("p");
  alias.Int64(1);
  alias.Int64(1);
  alias.Varint(0);
  alias.Varint(1);
  alias.Int64(int64_t{1} << 31);
  alias.Varint(0);
  EXPECT_EQ(Refusal(WithHeader(alias.bytes())),
            "serialized sim executable: at payload byte 6 (parameter_aliases[0]): value "
            "2147483648 does not fit in int32");
}

TEST(SerializationTest, RefusesNonCanonicalAndOverlongVarints) {
  EXPECT_EQ(Refusal(WithHeader(std::string("\x81\x00p", 3))),
            "serialized sim executable: at payload byte 0 (name): varint not in its shortest form");
  EXPECT_EQ(Refusal(WithHeader(std::string(10, '\xff') + std::string(1, '\x01'))),
            "serialized sim executable: at payload byte 0 (name): varint does not fit in 64 bits");
}

// A tripwire: on libstdc++ x86-64, a struct the format stores changed size. Serialize its new
// field (serialization.cc), set it in sample_programs.cc, compare it in ProgramDiff above, bump
// kProgramFormatVersion, then update the size here. (A field that fits into padding does not
// change the size: review op_params.h changes against serialization.cc too.)
TEST(SerializationTest, StoredStructsKeepTheirSizes) {
#if defined(__GLIBCXX__) && defined(__x86_64__)
  EXPECT_EQ(sizeof(ArrayType), 32u);
  EXPECT_EQ(sizeof(EwInput), 32u);
  EXPECT_EQ(sizeof(EwStep), 64u);
  EXPECT_EQ(sizeof(FusedElementwise), 96u);
  EXPECT_EQ(sizeof(ScalarComputation), 104u);
  EXPECT_EQ(sizeof(SortKey), 8u);
  EXPECT_EQ(sizeof(Comparator), 120u);
  EXPECT_EQ(sizeof(ConstantParams), 32u);
  EXPECT_EQ(sizeof(TransposeParams), 24u);
  EXPECT_EQ(sizeof(SliceParams), 72u);
  EXPECT_EQ(sizeof(DynamicSliceParams), 24u);
  EXPECT_EQ(sizeof(DynamicUpdateSliceParams), 1u);
  EXPECT_EQ(sizeof(ConcatenateParams), 8u);
  EXPECT_EQ(sizeof(PadParams), 72u);
  EXPECT_EQ(sizeof(ReverseParams), 24u);
  EXPECT_EQ(sizeof(ReduceParams), 128u);
  EXPECT_EQ(sizeof(ReduceWindowParams), 224u);
  EXPECT_EQ(sizeof(SelectAndScatterParams), 280u);
  EXPECT_EQ(sizeof(DotGeneralParams), 96u);
  EXPECT_EQ(sizeof(ConvolutionParams), 272u);
  EXPECT_EQ(sizeof(GatherParams), 160u);
  EXPECT_EQ(sizeof(ScatterParams), 240u);
  EXPECT_EQ(sizeof(SortParams), 136u);
  EXPECT_EQ(sizeof(WhileParams), 12u);
  EXPECT_EQ(sizeof(CaseParams), 24u);
  EXPECT_EQ(sizeof(CollectiveParams), 184u);
  EXPECT_EQ(sizeof(RngBitGeneratorParams), 1u);
  EXPECT_EQ(sizeof(Instruction), 376u);
  EXPECT_EQ(sizeof(SlotPlace), 16u);
  EXPECT_EQ(sizeof(Computation), 160u);
  EXPECT_EQ(sizeof(DeviceProgram), 184u);
#else
  GTEST_SKIP() << "sizes recorded for libstdc++ on x86-64 only";
#endif
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
