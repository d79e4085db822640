// The sim program format (the header is described in serialization.h).
//
// Payload: each struct's fields in declaration order, written by a Write/Read pair of functions
// below, which are the format's specification:
//   - unsigned counts, lengths and enum values: LEB128 varints in their shortest form;
//   - signed integers (int64_t, int32_t, Slot): zigzag varints (int32 fields refused outside
//     int32's range); bool: one byte, 0 or 1;
//   - strings: a length, then the bytes; vectors: a count, then the elements;
//   - fixed arrays (EwStep::operands[3]): the elements, no count;
//   - InstructionParams: the std::variant index (a varint, see kParamsNames), then the fields of
//     that alternative (nothing for std::monostate).
// The format has no recursive structure (computations refer to each other by index, regions are
// FusedElementwise bodies of fixed depth), so the reader's call depth is fixed by this file.
// The encoding is canonical: a program has exactly one encoding, and any other byte sequence is
// refused, so SerializeProgram(DeserializeProgram(bytes)) == bytes whenever the read succeeds
// (tests/fuzz/serialization_fuzzer.cc checks this).
//
// Format version history policy:
//   - Bump kProgramFormatVersion (serialization.h) whenever the layout changes: a field added,
//     removed, reordered or retyped in any struct written here, an enum value renumbered or added
//     (ElementType, Opcode, EwOp, ...), an InstructionParams alternative added or moved, or the
//     meaning of a value changed. Add a line below.
//   - DeserializeProgram reads only the current version. Older (or newer) bytes are refused with a
//     message naming both versions and asking to recompile: serialized sim executables are caches
//     of a compilation (JAX's persistent cache, jax.export keeps the StableHLO), never the only
//     copy of a program, so no migration code is kept.
//   - To add a field: one line in its Write function, one in its Read function, a non-default
//     value in sample_programs.cc, a line in serialization_test.cc's ProgramDiff, and the bump.
//
// Versions:
//   1: the first format (DeviceProgram, Computation, Instruction with 22 params alternatives,
//      SlotPlace, ArrayType, FusedElementwise, ScalarComputation, Comparator and SortKey).
#include "xla_plugin/devices/sim/program/serialization.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "xla_plugin/devices/sim/program/wire_reader.h"
#include "xla_plugin/devices/sim/program/wire_writer.h"

namespace pjrtkit {
namespace sim {
namespace {

// The number of values of each enum the format stores (the last enumerator + 1). Adding an
// enumerator after the last one needs a change here and a version bump.
constexpr int kNumElementTypes = kMaxElementType + 1;
constexpr int kNumEwOps = static_cast<int>(EwOp::kClamp) + 1;
constexpr int kNumComparisonDirections = static_cast<int>(ComparisonDirection::kLt) + 1;
constexpr int kNumComparisonTypes = static_cast<int>(ComparisonType::kUnsigned) + 1;
constexpr int kNumCombiners = static_cast<int>(Combiner::kReplace) + 1;
constexpr int kNumCollectiveKinds = static_cast<int>(CollectiveKind::kCollectiveBroadcast) + 1;
constexpr int kNumRngAlgorithms = static_cast<int>(RngAlgorithm::kPhilox) + 1;
constexpr int kNumSlotPlaceKinds = static_cast<int>(SlotPlace::Kind::kAlias) + 1;

// The smallest encoding of one element of each struct stored in a vector (one byte per varint,
// count and string length; nothing for empty vectors): a lower bound WireReader::Count uses to
// refuse counts the bytes cannot hold. Too large a bound would refuse valid programs; the tests
// round-trip default-constructed elements, which take exactly these sizes.
constexpr size_t kMinStringBytes = 1;       // length.
constexpr size_t kMinArrayTypeBytes = 2;    // type, dims.
constexpr size_t kMinEwInputBytes = 2;      // type, strides.
constexpr size_t kMinEwStepBytes = 8;       // op, type, operand_type, operands[3], attr, constant.
constexpr size_t kMinSortKeyBytes = 3;      // operand, direction, type.
constexpr size_t kMinInstructionBytes = 5;  // opcode, operands, results, params index, origin.
constexpr size_t kMinSlotPlaceBytes = 2;    // kind, value.
constexpr size_t kMinComputationBytes = 7;  // name, 5 vectors, arena_bytes.
constexpr size_t kMinInt64VectorBytes = 1;  // count.

// InstructionParams' alternatives by variant index, as the format stores them: the index is part
// of the format, so an alternative may only be appended (with a version bump), never moved.
constexpr const char* kParamsNames[] = {
    "monostate",                 // 0
    "FusedElementwise",          // 1
    "ConstantParams",            // 2
    "TransposeParams",           // 3
    "SliceParams",               // 4
    "DynamicSliceParams",        // 5
    "DynamicUpdateSliceParams",  // 6
    "ConcatenateParams",         // 7
    "PadParams",                 // 8
    "ReverseParams",             // 9
    "ReduceParams",              // 10
    "ReduceWindowParams",        // 11
    "SelectAndScatterParams",    // 12
    "DotGeneralParams",          // 13
    "ConvolutionParams",         // 14
    "GatherParams",              // 15
    "ScatterParams",             // 16
    "SortParams",                // 17
    "WhileParams",               // 18
    "CaseParams",                // 19
    "CollectiveParams",          // 20
    "RngBitGeneratorParams",     // 21
    "CustomCallParams",          // 22
};
constexpr size_t kNumParamsAlternatives = std::variant_size_v<InstructionParams>;
static_assert(kNumParamsAlternatives == std::size(kParamsNames),
              "InstructionParams changed: name the new alternative in kParamsNames, add it to "
              "ReadParams, and bump kProgramFormatVersion");

// True when alternative `I` of InstructionParams is `T` (pins the stored indices below).
template <size_t I, typename T>
constexpr bool kParamsAt = std::is_same_v<std::variant_alternative_t<I, InstructionParams>, T>;
static_assert(kParamsAt<0, std::monostate> && kParamsAt<1, FusedElementwise> &&
                  kParamsAt<2, ConstantParams> && kParamsAt<3, TransposeParams> &&
                  kParamsAt<4, SliceParams> && kParamsAt<5, DynamicSliceParams> &&
                  kParamsAt<6, DynamicUpdateSliceParams> && kParamsAt<7, ConcatenateParams> &&
                  kParamsAt<8, PadParams> && kParamsAt<9, ReverseParams> &&
                  kParamsAt<10, ReduceParams> && kParamsAt<11, ReduceWindowParams> &&
                  kParamsAt<12, SelectAndScatterParams> && kParamsAt<13, DotGeneralParams> &&
                  kParamsAt<14, ConvolutionParams> && kParamsAt<15, GatherParams> &&
                  kParamsAt<16, ScatterParams> && kParamsAt<17, SortParams> &&
                  kParamsAt<18, WhileParams> && kParamsAt<19, CaseParams> &&
                  kParamsAt<20, CollectiveParams> && kParamsAt<21, RngBitGeneratorParams> &&
                  kParamsAt<22, CustomCallParams>,
              "InstructionParams' alternatives moved: the stored variant index changes meaning; "
              "append new alternatives at the end and bump kProgramFormatVersion");

// FNV-1a, 64 bits: the payload's checksum (catches corruption, not tampering).
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string Hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) text += kDigits[(value >> shift) & 0xf];
  return text;
}

// ---- ArrayType, FusedElementwise ----

void Write(WireWriter& w, const ArrayType& t) {
  w.Enum(t.type);
  w.Int64s(t.dims);
}
void Read(WireReader& r, ArrayType* t) {
  r.Enum("type", kNumElementTypes, &t->type);
  r.Int64s("dims", &t->dims);
}

void Write(WireWriter& w, const EwInput& input) {
  w.Enum(input.type);
  w.Int64s(input.strides);
}
void Read(WireReader& r, EwInput* input) {
  r.Enum("type", kNumElementTypes, &input->type);
  r.Int64s("strides", &input->strides);
}

void Write(WireWriter& w, const EwStep& step) {
  w.Enum(step.op);
  w.Enum(step.type);
  w.Enum(step.operand_type);
  for (int32_t operand : step.operands) w.Int32(operand);
  w.Int64(step.attr);
  w.String(step.constant);
}
void Read(WireReader& r, EwStep* step) {
  r.Enum("op", kNumEwOps, &step->op);
  r.Enum("type", kNumElementTypes, &step->type);
  r.Enum("operand_type", kNumElementTypes, &step->operand_type);
  for (int32_t& operand : step->operands) r.Int32("operands", &operand);
  r.Int64("attr", &step->attr);
  r.String("constant", &step->constant);
}

void Write(WireWriter& w, const FusedElementwise& fused) {
  w.Int64s(fused.dims);
  w.Vector(fused.inputs, [](WireWriter& w, const EwInput& input) { Write(w, input); });
  w.Vector(fused.steps, [](WireWriter& w, const EwStep& step) { Write(w, step); });
  w.Int32s(fused.outputs);
}
void Read(WireReader& r, FusedElementwise* fused) {
  r.Int64s("dims", &fused->dims);
  r.Vector("inputs", kMinEwInputBytes, &fused->inputs,
           [](WireReader& r, EwInput* input) { Read(r, input); });
  r.Vector("steps", kMinEwStepBytes, &fused->steps,
           [](WireReader& r, EwStep* step) { Read(r, step); });
  r.Int32s("outputs", &fused->outputs);
}

// ---- Regions ----

void Write(WireWriter& w, const ScalarComputation& computation) {
  Write(w, computation.body);
  w.Enum(computation.combiner);
}
void Read(WireReader& r, ScalarComputation* computation) {
  {
    WireReader::Scope scope(r, "body");
    Read(r, &computation->body);
  }
  r.Enum("combiner", kNumCombiners, &computation->combiner);
}

// A ScalarComputation field (reduce's body, scatter's update, ...), named in messages.
void ReadField(WireReader& r, const char* field, ScalarComputation* computation) {
  WireReader::Scope scope(r, field);
  Read(r, computation);
}

void Write(WireWriter& w, const SortKey& key) {
  w.Int32(key.operand);
  w.Enum(key.direction);
  w.Enum(key.type);
}
void Read(WireReader& r, SortKey* key) {
  r.Int32("operand", &key->operand);
  r.Enum("direction", kNumComparisonDirections, &key->direction);
  r.Enum("type", kNumComparisonTypes, &key->type);
}

void Write(WireWriter& w, const Comparator& comparator) {
  Write(w, comparator.body);
  w.Vector(comparator.keys, [](WireWriter& w, const SortKey& key) { Write(w, key); });
}
void Read(WireReader& r, Comparator* comparator) {
  {
    WireReader::Scope scope(r, "body");
    Read(r, &comparator->body);
  }
  r.Vector("keys", kMinSortKeyBytes, &comparator->keys,
           [](WireReader& r, SortKey* key) { Read(r, key); });
}

// ---- The params of each opcode (InstructionParams' alternatives, in index order) ----

void Write(WireWriter&, const std::monostate&) {}
void Read(WireReader&, std::monostate*) {}

void Write(WireWriter& w, const ConstantParams& p) { w.String(p.bytes); }
void Read(WireReader& r, ConstantParams* p) { r.String("bytes", &p->bytes); }

void Write(WireWriter& w, const TransposeParams& p) { w.Int64s(p.permutation); }
void Read(WireReader& r, TransposeParams* p) { r.Int64s("permutation", &p->permutation); }

void Write(WireWriter& w, const SliceParams& p) {
  w.Int64s(p.start);
  w.Int64s(p.limit);
  w.Int64s(p.strides);
}
void Read(WireReader& r, SliceParams* p) {
  r.Int64s("start", &p->start);
  r.Int64s("limit", &p->limit);
  r.Int64s("strides", &p->strides);
}

void Write(WireWriter& w, const DynamicSliceParams& p) { w.Int64s(p.sizes); }
void Read(WireReader& r, DynamicSliceParams* p) { r.Int64s("sizes", &p->sizes); }

void Write(WireWriter&, const DynamicUpdateSliceParams&) {}
void Read(WireReader&, DynamicUpdateSliceParams*) {}

void Write(WireWriter& w, const ConcatenateParams& p) { w.Int64(p.dimension); }
void Read(WireReader& r, ConcatenateParams* p) { r.Int64("dimension", &p->dimension); }

void Write(WireWriter& w, const PadParams& p) {
  w.Int64s(p.low);
  w.Int64s(p.high);
  w.Int64s(p.interior);
}
void Read(WireReader& r, PadParams* p) {
  r.Int64s("low", &p->low);
  r.Int64s("high", &p->high);
  r.Int64s("interior", &p->interior);
}

void Write(WireWriter& w, const ReverseParams& p) { w.Int64s(p.dimensions); }
void Read(WireReader& r, ReverseParams* p) { r.Int64s("dimensions", &p->dimensions); }

void Write(WireWriter& w, const ReduceParams& p) {
  w.Int64s(p.dimensions);
  Write(w, p.body);
}
void Read(WireReader& r, ReduceParams* p) {
  r.Int64s("dimensions", &p->dimensions);
  ReadField(r, "body", &p->body);
}

void Write(WireWriter& w, const ReduceWindowParams& p) {
  w.Int64s(p.window_dimensions);
  w.Int64s(p.window_strides);
  w.Int64s(p.base_dilations);
  w.Int64s(p.window_dilations);
  w.Int64Pairs(p.padding);
  Write(w, p.body);
}
void Read(WireReader& r, ReduceWindowParams* p) {
  r.Int64s("window_dimensions", &p->window_dimensions);
  r.Int64s("window_strides", &p->window_strides);
  r.Int64s("base_dilations", &p->base_dilations);
  r.Int64s("window_dilations", &p->window_dilations);
  r.Int64Pairs("padding", &p->padding);
  ReadField(r, "body", &p->body);
}

void Write(WireWriter& w, const SelectAndScatterParams& p) {
  w.Int64s(p.window_dimensions);
  w.Int64s(p.window_strides);
  w.Int64Pairs(p.padding);
  Write(w, p.select);
  Write(w, p.scatter);
}
void Read(WireReader& r, SelectAndScatterParams* p) {
  r.Int64s("window_dimensions", &p->window_dimensions);
  r.Int64s("window_strides", &p->window_strides);
  r.Int64Pairs("padding", &p->padding);
  ReadField(r, "select", &p->select);
  ReadField(r, "scatter", &p->scatter);
}

void Write(WireWriter& w, const DotGeneralParams& p) {
  w.Int64s(p.lhs_batching_dimensions);
  w.Int64s(p.rhs_batching_dimensions);
  w.Int64s(p.lhs_contracting_dimensions);
  w.Int64s(p.rhs_contracting_dimensions);
}
void Read(WireReader& r, DotGeneralParams* p) {
  r.Int64s("lhs_batching_dimensions", &p->lhs_batching_dimensions);
  r.Int64s("rhs_batching_dimensions", &p->rhs_batching_dimensions);
  r.Int64s("lhs_contracting_dimensions", &p->lhs_contracting_dimensions);
  r.Int64s("rhs_contracting_dimensions", &p->rhs_contracting_dimensions);
}

void Write(WireWriter& w, const ConvolutionParams& p) {
  w.Int64s(p.window_strides);
  w.Int64Pairs(p.padding);
  w.Int64s(p.lhs_dilation);
  w.Int64s(p.rhs_dilation);
  w.Bools(p.window_reversal);
  w.Int64(p.input_batch_dimension);
  w.Int64(p.input_feature_dimension);
  w.Int64s(p.input_spatial_dimensions);
  w.Int64(p.kernel_input_feature_dimension);
  w.Int64(p.kernel_output_feature_dimension);
  w.Int64s(p.kernel_spatial_dimensions);
  w.Int64(p.output_batch_dimension);
  w.Int64(p.output_feature_dimension);
  w.Int64s(p.output_spatial_dimensions);
  w.Int64(p.feature_group_count);
  w.Int64(p.batch_group_count);
}
void Read(WireReader& r, ConvolutionParams* p) {
  r.Int64s("window_strides", &p->window_strides);
  r.Int64Pairs("padding", &p->padding);
  r.Int64s("lhs_dilation", &p->lhs_dilation);
  r.Int64s("rhs_dilation", &p->rhs_dilation);
  r.Bools("window_reversal", &p->window_reversal);
  r.Int64("input_batch_dimension", &p->input_batch_dimension);
  r.Int64("input_feature_dimension", &p->input_feature_dimension);
  r.Int64s("input_spatial_dimensions", &p->input_spatial_dimensions);
  r.Int64("kernel_input_feature_dimension", &p->kernel_input_feature_dimension);
  r.Int64("kernel_output_feature_dimension", &p->kernel_output_feature_dimension);
  r.Int64s("kernel_spatial_dimensions", &p->kernel_spatial_dimensions);
  r.Int64("output_batch_dimension", &p->output_batch_dimension);
  r.Int64("output_feature_dimension", &p->output_feature_dimension);
  r.Int64s("output_spatial_dimensions", &p->output_spatial_dimensions);
  r.Int64("feature_group_count", &p->feature_group_count);
  r.Int64("batch_group_count", &p->batch_group_count);
}

void Write(WireWriter& w, const GatherParams& p) {
  w.Int64s(p.offset_dims);
  w.Int64s(p.collapsed_slice_dims);
  w.Int64s(p.operand_batching_dims);
  w.Int64s(p.start_indices_batching_dims);
  w.Int64s(p.start_index_map);
  w.Int64(p.index_vector_dim);
  w.Int64s(p.slice_sizes);
  w.Bool(p.indices_are_sorted);
}
void Read(WireReader& r, GatherParams* p) {
  r.Int64s("offset_dims", &p->offset_dims);
  r.Int64s("collapsed_slice_dims", &p->collapsed_slice_dims);
  r.Int64s("operand_batching_dims", &p->operand_batching_dims);
  r.Int64s("start_indices_batching_dims", &p->start_indices_batching_dims);
  r.Int64s("start_index_map", &p->start_index_map);
  r.Int64("index_vector_dim", &p->index_vector_dim);
  r.Int64s("slice_sizes", &p->slice_sizes);
  r.Bool("indices_are_sorted", &p->indices_are_sorted);
}

void Write(WireWriter& w, const ScatterParams& p) {
  w.Int64s(p.update_window_dims);
  w.Int64s(p.inserted_window_dims);
  w.Int64s(p.input_batching_dims);
  w.Int64s(p.scatter_indices_batching_dims);
  w.Int64s(p.scatter_dims_to_operand_dims);
  w.Int64(p.index_vector_dim);
  w.Bool(p.indices_are_sorted);
  w.Bool(p.unique_indices);
  Write(w, p.update);
}
void Read(WireReader& r, ScatterParams* p) {
  r.Int64s("update_window_dims", &p->update_window_dims);
  r.Int64s("inserted_window_dims", &p->inserted_window_dims);
  r.Int64s("input_batching_dims", &p->input_batching_dims);
  r.Int64s("scatter_indices_batching_dims", &p->scatter_indices_batching_dims);
  r.Int64s("scatter_dims_to_operand_dims", &p->scatter_dims_to_operand_dims);
  r.Int64("index_vector_dim", &p->index_vector_dim);
  r.Bool("indices_are_sorted", &p->indices_are_sorted);
  r.Bool("unique_indices", &p->unique_indices);
  ReadField(r, "update", &p->update);
}

void Write(WireWriter& w, const SortParams& p) {
  w.Int64(p.dimension);
  w.Bool(p.is_stable);
  Write(w, p.comparator);
}
void Read(WireReader& r, SortParams* p) {
  r.Int64("dimension", &p->dimension);
  r.Bool("is_stable", &p->is_stable);
  WireReader::Scope scope(r, "comparator");
  Read(r, &p->comparator);
}

void Write(WireWriter& w, const WhileParams& p) {
  w.Int32(p.cond);
  w.Int32(p.body);
  w.Int32(p.num_captured);
}
void Read(WireReader& r, WhileParams* p) {
  r.Int32("cond", &p->cond);
  r.Int32("body", &p->body);
  r.Int32("num_captured", &p->num_captured);
}

void Write(WireWriter& w, const CaseParams& p) { w.Int32s(p.branches); }
void Read(WireReader& r, CaseParams* p) { r.Int32s("branches", &p->branches); }

void Write(WireWriter& w, const CollectiveParams& p) {
  w.Enum(p.kind);
  w.Vector(p.groups, [](WireWriter& w, const std::vector<int64_t>& group) { w.Int64s(group); });
  w.Int64(p.dimension);
  w.Int64(p.concat_dimension);
  w.Int64(p.split_count);
  w.Int64Pairs(p.source_target_pairs);
  Write(w, p.reduction);
}
void Read(WireReader& r, CollectiveParams* p) {
  r.Enum("kind", kNumCollectiveKinds, &p->kind);
  r.Vector("groups", kMinInt64VectorBytes, &p->groups,
           [](WireReader& r, std::vector<int64_t>* group) { r.Int64s("", group); });
  r.Int64("dimension", &p->dimension);
  r.Int64("concat_dimension", &p->concat_dimension);
  r.Int64("split_count", &p->split_count);
  r.Int64Pairs("source_target_pairs", &p->source_target_pairs);
  ReadField(r, "reduction", &p->reduction);
}

void Write(WireWriter& w, const RngBitGeneratorParams& p) { w.Enum(p.algorithm); }
void Read(WireReader& r, RngBitGeneratorParams* p) {
  r.Enum("algorithm", kNumRngAlgorithms, &p->algorithm);
}

void Write(WireWriter& w, const FfiAttribute& a) {
  w.String(a.name);
  w.Enum(a.kind);
  w.Enum(a.type);
  w.String(a.bytes);
}
void Read(WireReader& r, FfiAttribute* a) {
  r.String("name", &a->name);
  r.Enum("kind", 2, &a->kind);
  r.Enum("type", kMaxElementType + 1, &a->type);
  r.String("bytes", &a->bytes);
}
constexpr size_t kMinFfiAttributeBytes = 4;  // Two empty strings and two enums.

void Write(WireWriter& w, const CustomCallParams& p) {
  w.String(p.target);
  w.Vector(p.attributes, [](WireWriter& w, const FfiAttribute& a) { Write(w, a); });
  w.Bool(p.has_side_effect);
  w.Vector(p.operand_orders, [](WireWriter& w, const std::vector<int32_t>& o) { w.Int32s(o); });
  w.Vector(p.result_orders, [](WireWriter& w, const std::vector<int32_t>& o) { w.Int32s(o); });
  w.Int64Pairs(p.aliases);
}
void Read(WireReader& r, CustomCallParams* p) {
  r.String("target", &p->target);
  r.Vector("attributes", kMinFfiAttributeBytes, &p->attributes,
           [](WireReader& r, FfiAttribute* a) { Read(r, a); });
  r.Bool("has_side_effect", &p->has_side_effect);
  r.Vector("operand_orders", 1, &p->operand_orders,
           [](WireReader& r, std::vector<int32_t>* o) { r.Int32s("", o); });
  r.Vector("result_orders", 1, &p->result_orders,
           [](WireReader& r, std::vector<int32_t>* o) { r.Int32s("", o); });
  r.Int64Pairs("aliases", &p->aliases);
}

// ---- Instruction, Computation, DeviceProgram ----

void WriteParams(WireWriter& w, const InstructionParams& params) {
  w.Varint(params.index());
  std::visit([&w](const auto& alternative) { Write(w, alternative); }, params);
}

// Reads the alternative `index` names into `params`.
void ReadAlternative(WireReader& r, size_t index, InstructionParams* params) {
  // clang-format off
  switch (index) {
    case 0: return Read(r, &params->emplace<0>());
    case 1: return Read(r, &params->emplace<1>());
    case 2: return Read(r, &params->emplace<2>());
    case 3: return Read(r, &params->emplace<3>());
    case 4: return Read(r, &params->emplace<4>());
    case 5: return Read(r, &params->emplace<5>());
    case 6: return Read(r, &params->emplace<6>());
    case 7: return Read(r, &params->emplace<7>());
    case 8: return Read(r, &params->emplace<8>());
    case 9: return Read(r, &params->emplace<9>());
    case 10: return Read(r, &params->emplace<10>());
    case 11: return Read(r, &params->emplace<11>());
    case 12: return Read(r, &params->emplace<12>());
    case 13: return Read(r, &params->emplace<13>());
    case 14: return Read(r, &params->emplace<14>());
    case 15: return Read(r, &params->emplace<15>());
    case 16: return Read(r, &params->emplace<16>());
    case 17: return Read(r, &params->emplace<17>());
    case 18: return Read(r, &params->emplace<18>());
    case 19: return Read(r, &params->emplace<19>());
    case 20: return Read(r, &params->emplace<20>());
    case 21: return Read(r, &params->emplace<21>());
    case 22: return Read(r, &params->emplace<22>());
  }
  // clang-format on
}
static_assert(kNumParamsAlternatives == 23, "ReadAlternative needs a case per alternative");

void ReadParams(WireReader& r, InstructionParams* params) {
  const uint64_t index = r.Varint("params");
  if (!r.ok()) return;
  if (index >= kNumParamsAlternatives) {
    r.Fail("params", "params alternative index " + std::to_string(index) + " out of range [0, " +
                         std::to_string(kNumParamsAlternatives) + ")");
    return;
  }
  WireReader::Scope scope(r, kParamsNames[index]);
  ReadAlternative(r, static_cast<size_t>(index), params);
}

void Write(WireWriter& w, const Instruction& instruction) {
  w.Enum(instruction.opcode);
  w.Int32s(instruction.operands);
  w.Int32s(instruction.results);
  WriteParams(w, instruction.params);
  w.String(instruction.origin);
}
void Read(WireReader& r, Instruction* instruction) {
  r.Enum("opcode", kNumOpcodes, &instruction->opcode);
  r.Int32s("operands", &instruction->operands);
  r.Int32s("results", &instruction->results);
  ReadParams(r, &instruction->params);
  r.String("origin", &instruction->origin);
}

void Write(WireWriter& w, const SlotPlace& place) {
  w.Enum(place.kind);
  w.Int64(place.value);
}
void Read(WireReader& r, SlotPlace* place) {
  r.Enum("kind", kNumSlotPlaceKinds, &place->kind);
  r.Int64("value", &place->value);
}

void Write(WireWriter& w, const Computation& c) {
  w.String(c.name);
  w.Vector(c.slot_types, [](WireWriter& w, const ArrayType& type) { Write(w, type); });
  w.Int32s(c.parameters);
  w.Int32s(c.results);
  w.Vector(c.instructions, [](WireWriter& w, const Instruction& i) { Write(w, i); });
  w.Vector(c.places, [](WireWriter& w, const SlotPlace& place) { Write(w, place); });
  w.Int64(c.arena_bytes);
}
void Read(WireReader& r, Computation* c) {
  r.String("name", &c->name);
  r.Vector("slot_types", kMinArrayTypeBytes, &c->slot_types,
           [](WireReader& r, ArrayType* type) { Read(r, type); });
  r.Int32s("parameters", &c->parameters);
  r.Int32s("results", &c->results);
  r.Vector("instructions", kMinInstructionBytes, &c->instructions,
           [](WireReader& r, Instruction* i) { Read(r, i); });
  r.Vector("places", kMinSlotPlaceBytes, &c->places,
           [](WireReader& r, SlotPlace* place) { Read(r, place); });
  r.Int64("arena_bytes", &c->arena_bytes);
}

void Write(WireWriter& w, const DeviceProgram& program) {
  w.String(program.name);
  w.Int64(program.num_replicas);
  w.Int64(program.num_partitions);
  w.Vector(program.computations, [](WireWriter& w, const Computation& c) { Write(w, c); });
  w.Int32s(program.parameter_aliases);
  w.Bools(program.parameter_donatable);
  w.Vector(program.parameter_shardings, [](WireWriter& w, const std::string& s) { w.String(s); });
  w.Vector(program.result_shardings, [](WireWriter& w, const std::string& s) { w.String(s); });
}
void Read(WireReader& r, DeviceProgram* program) {
  r.String("name", &program->name);
  r.Int64("num_replicas", &program->num_replicas);
  r.Int64("num_partitions", &program->num_partitions);
  r.Vector("computations", kMinComputationBytes, &program->computations,
           [](WireReader& r, Computation* c) { Read(r, c); });
  r.Int32s("parameter_aliases", &program->parameter_aliases);
  r.Bools("parameter_donatable", &program->parameter_donatable);
  r.Vector("parameter_shardings", kMinStringBytes, &program->parameter_shardings,
           [](WireReader& r, std::string* s) { r.String("sharding", s); });
  r.Vector("result_shardings", kMinStringBytes, &program->result_shardings,
           [](WireReader& r, std::string* s) { r.String("sharding", s); });
}

// ---- The header ----

constexpr char kErrorPrefix[] = "serialized sim executable: ";

// The payload of `bytes` once its header is checked.
StatusOr<std::string_view> CheckHeader(std::string_view bytes) {
  const size_t magic_bytes = std::min(bytes.size(), kProgramMagic.size());
  if (bytes.substr(0, magic_bytes) != kProgramMagic.substr(0, magic_bytes)) {
    return InvalidArgument(
        "not a serialized sim executable: the bytes do not start with \"PJRTKIT-SIM\\0\"");
  }
  if (bytes.size() < kProgramHeaderBytes) {
    return InvalidArgument(
        std::string(kErrorPrefix) + "truncated: " + std::to_string(bytes.size()) +
        " bytes, shorter than the " + std::to_string(kProgramHeaderBytes) + "-byte header");
  }
  WireReader header(bytes.substr(kProgramMagic.size(), kProgramHeaderBytes - kProgramMagic.size()));
  const uint32_t version = header.Fixed32("version");
  const uint64_t payload_bytes = header.Fixed64("payload_length");
  const uint64_t checksum = header.Fixed64("checksum");
  if (version != kProgramFormatVersion) {
    return InvalidArgument(std::string(kErrorPrefix) + "format version " + std::to_string(version) +
                           ", but this plugin reads version " +
                           std::to_string(kProgramFormatVersion) +
                           " only: recompile the program with this plugin");
  }
  const std::string_view payload = bytes.substr(kProgramHeaderBytes);
  if (payload_bytes > payload.size()) {
    return InvalidArgument(std::string(kErrorPrefix) + "truncated: the header announces a " +
                           std::to_string(payload_bytes) + "-byte payload, " +
                           std::to_string(payload.size()) + " bytes follow it");
  }
  if (payload_bytes < payload.size()) {
    return InvalidArgument(
        std::string(kErrorPrefix) + std::to_string(payload.size() - payload_bytes) +
        " trailing bytes after the " + std::to_string(payload_bytes) + "-byte payload");
  }
  const uint64_t actual = Fnv1a64(payload);
  if (actual != checksum) {
    return InvalidArgument(std::string(kErrorPrefix) + "corrupted: the payload's checksum is " +
                           Hex(actual) + ", the header says " + Hex(checksum));
  }
  return payload;
}

}  // namespace

std::string SerializeProgram(const DeviceProgram& program) {
  WireWriter payload;
  Write(payload, program);
  WireWriter out;
  out.Raw(kProgramMagic);
  out.Fixed32(kProgramFormatVersion);
  out.Fixed64(payload.bytes().size());
  out.Fixed64(Fnv1a64(payload.bytes()));
  out.Raw(payload.bytes());
  return out.Release();
}

StatusOr<DeviceProgram> DeserializeProgram(std::string_view bytes) {
  PJRTKIT_ASSIGN_OR_RETURN(const std::string_view payload, CheckHeader(bytes));
  WireReader reader(payload);
  DeviceProgram program;
  Read(reader, &program);
  reader.ExpectEnd("the program");
  if (!reader.ok()) return InvalidArgument(kErrorPrefix + reader.status().message());
  return program;
}

}  // namespace sim
}  // namespace pjrtkit
