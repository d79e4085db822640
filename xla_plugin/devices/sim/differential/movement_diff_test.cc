// Differential cases of the data movement ops (see README.md): broadcast_in_dim, reshape,
// transpose, iota, slice, dynamic_slice, dynamic_update_slice, concatenate, pad and reverse. They
// move bits: every element type, every value (denormals and NaN payloads included), exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/case_helpers.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

// The types data movement is tested on: every type the sim holds (one float8 type stands for
// the 1-byte floats).
std::vector<ElementType> MovementTypes() {
  return Types({AllTypes(), {ElementType::kF8E4M3FN}});
}

// One operand of a case: its shape, and the policy of its values (data: every bit pattern).
struct Operand {
  std::vector<int64_t> dims;
  ElementType type = ElementType::kInvalid;  // kInvalid: the case's element type.
  ValuePolicy policy = BitValues();
};

// A case of one op `op` with `operands` and a result of `result_dims`, in element type `type`.
DiffCase MovementCase(const std::string& op, ElementType type, const std::vector<Operand>& operands,
                      const std::vector<int64_t>& result_dims, const std::string& attributes,
                      const std::string& label) {
  DiffCase c;
  c.op = op;
  c.what = ShapeText(type, operands.empty() ? result_dims : operands[0].dims) + " " + label;
  ValueGenerator values(SeedOf(c.op + c.what));
  ProgramBuilder b;
  std::vector<std::string> names;
  for (const Operand& operand : operands) {
    const ArrayType t{operand.type == ElementType::kInvalid ? type : operand.type, operand.dims};
    names.push_back(b.Parameter(t));
    c.inputs.push_back(values.Random(t, operand.policy));
  }
  c.program = b.Build({b.Op1("stablehlo." + op, names, ArrayType{type, result_dims}, attributes)});
  c.tolerances = {Exact()};
  return c;
}

TEST(MovementDiffTest, BroadcastReshapeTranspose) {
  struct Config {
    const char* op;
    std::vector<int64_t> in, out;
    std::string attributes;
  };
  auto dims = [](std::vector<int64_t> d) { return "broadcast_dimensions = " + I64Array(d); };
  auto perm = [](std::vector<int64_t> p) { return "permutation = " + I64Array(p); };
  const std::vector<Config> configs = {
      {"broadcast_in_dim", {17}, {33, 17}, dims({1})},
      {"broadcast_in_dim", {33, 1}, {33, 17, 4}, dims({0, 1})},
      {"broadcast_in_dim", {}, {7, 5}, dims({})},
      {"broadcast_in_dim", {3, 4}, {4, 5, 3}, dims({2, 0})},
      {"broadcast_in_dim", {1200}, {2, 1200}, dims({1})},
      {"broadcast_in_dim", {0, 3}, {2, 0, 3}, dims({1, 2})},
      {"reshape", {33, 17}, {561}, ""},
      {"reshape", {561}, {3, 11, 17}, ""},
      {"reshape", {4, 6}, {2, 12}, ""},
      {"reshape", {1, 17, 1}, {17}, ""},
      {"reshape", {0, 5}, {5, 0}, ""},
      {"transpose", {33, 17}, {17, 33}, perm({1, 0})},
      {"transpose", {3, 4, 5}, {5, 3, 4}, perm({2, 0, 1})},
      {"transpose", {3, 4, 5}, {4, 5, 3}, perm({1, 2, 0})},
      {"transpose", {2, 40, 30}, {2, 30, 40}, perm({0, 2, 1})},
      {"transpose", {0, 3}, {3, 0}, perm({1, 0})},
  };
  std::vector<DiffCase> cases;
  for (ElementType t : MovementTypes()) {
    for (const Config& config : configs) {
      cases.push_back(MovementCase(config.op, t, {{config.in}}, config.out, config.attributes,
                                   "-> " + ShapeText(t, config.out) + " " + config.attributes));
    }
  }
  ExpectAgree("broadcast_in_dim, reshape, transpose", cases);
}

TEST(MovementDiffTest, Iota) {
  std::vector<DiffCase> cases;
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> shapes = {
      {{33, 17}, 0}, {{33, 17}, 1}, {{300}, 0}, {{2, 3, 70}, 2}, {{0, 4}, 1}};
  for (ElementType t : Types({IntegerTypes(), FloatTypes(), {ElementType::kF8E4M3FN}})) {
    for (const auto& [dims, dimension] : shapes) {
      // s8 and u8 iotas past their range wrap on both; bf16, f16 and float8 round.
      cases.push_back(MovementCase("iota", t, {}, dims,
                                   "iota_dimension = " + std::to_string(dimension) + " : i64",
                                   "dim " + std::to_string(dimension)));
    }
  }
  ExpectAgree("iota", cases);
}

TEST(MovementDiffTest, Slice) {
  struct Config {
    std::vector<int64_t> in, start, limit, strides;
  };
  const std::vector<Config> configs = {
      {{33, 17}, {1, 2}, {30, 17}, {1, 1}},   {{33, 17}, {0, 1}, {33, 16}, {3, 4}},
      {{1200}, {5}, {1199}, {7}},             {{33, 17}, {5, 0}, {5, 17}, {1, 1}},
      {{3, 4, 5}, {1, 0, 2}, {3, 4, 5}, {1, 3, 2}}, {{0, 5}, {0, 1}, {0, 4}, {1, 2}},
  };
  std::vector<DiffCase> cases;
  for (ElementType t : MovementTypes()) {
    for (const Config& config : configs) {
      std::vector<int64_t> out;
      for (size_t d = 0; d < config.in.size(); ++d) {
        const int64_t span = config.limit[d] - config.start[d];
        out.push_back(span <= 0 ? 0 : (span + config.strides[d] - 1) / config.strides[d]);
      }
      const std::string attributes = "start_indices = " + I64Array(config.start) +
                                     ", limit_indices = " + I64Array(config.limit) +
                                     ", strides = " + I64Array(config.strides);
      cases.push_back(MovementCase("slice", t, {{config.in}}, out, attributes, attributes));
    }
  }
  ExpectAgree("slice", cases);
}

TEST(MovementDiffTest, DynamicSliceAndUpdate) {
  std::vector<DiffCase> cases;
  // Start indices anywhere in [-5, 40]: out-of-range starts are clamped (specified by both).
  const std::vector<ElementType> index_types = {ElementType::kS32, ElementType::kS64,
                                                ElementType::kU32, ElementType::kS8};
  struct Config {
    std::vector<int64_t> in, sizes;
  };
  const std::vector<Config> configs = {
      {{33, 17}, {5, 4}}, {{33, 17}, {33, 1}}, {{1200}, {1100}}, {{3, 4, 5}, {2, 4, 1}},
      {{33, 17}, {0, 3}}, {{7}, {7}}};
  int variant = 0;
  for (ElementType t : MovementTypes()) {
    for (const Config& config : configs) {
      const ElementType index = index_types[variant++ % index_types.size()];
      ValuePolicy starts = Range(IsUnsigned(index) ? 0 : -5, 40);
      std::vector<Operand> operands = {{config.in}};
      for (size_t d = 0; d < config.in.size(); ++d) operands.push_back({{}, index, starts});
      cases.push_back(MovementCase("dynamic_slice", t, operands, config.sizes,
                                   "slice_sizes = " + I64Array(config.sizes),
                                   "sizes " + IntList(config.sizes) + " " + TypeName(index)));
      std::vector<Operand> update = {{config.in}, {config.sizes}};
      for (size_t d = 0; d < config.in.size(); ++d) update.push_back({{}, index, starts});
      cases.push_back(MovementCase("dynamic_update_slice", t, update, config.in, "",
                                   "update " + IntList(config.sizes) + " " + TypeName(index)));
    }
  }
  ExpectAgree("dynamic_slice, dynamic_update_slice", cases);
}

TEST(MovementDiffTest, Concatenate) {
  struct Config {
    std::vector<std::vector<int64_t>> ins;
    int64_t dimension;
  };
  const std::vector<Config> configs = {
      {{{33, 17}, {5, 17}}, 0},        {{{33, 17}, {33, 1}, {33, 4}}, 1},
      {{{1200}, {7}}, 0},              {{{3, 0}, {3, 4}, {3, 0}}, 1},
      {{{2, 3, 4}, {2, 3, 4}}, 2},     {{{0, 5}, {0, 5}}, 0},
  };
  std::vector<DiffCase> cases;
  for (ElementType t : MovementTypes()) {
    for (const Config& config : configs) {
      std::vector<Operand> operands;
      std::vector<int64_t> out = config.ins[0];
      out[config.dimension] = 0;
      std::string label = "dim " + std::to_string(config.dimension);
      for (const auto& in : config.ins) {
        operands.push_back({in});
        out[config.dimension] += in[config.dimension];
        label += " " + IntList(in);
      }
      cases.push_back(MovementCase("concatenate", t, operands, out,
                                   "dimension = " + std::to_string(config.dimension) + " : i64",
                                   label));
    }
  }
  ExpectAgree("concatenate", cases);
}

TEST(MovementDiffTest, PadAndReverse) {
  struct PadConfig {
    std::vector<int64_t> in, low, high, interior;
  };
  const std::vector<PadConfig> pads = {
      {{7, 5}, {1, -2}, {-1, 3}, {2, 0}},   {{33, 17}, {2, 3}, {4, 5}, {0, 1}},
      {{1200}, {-3}, {-4}, {1}},           {{3, 4, 5}, {0, -1, 1}, {1, 0, -2}, {1, 1, 0}},
      {{0, 3}, {1, 0}, {2, 1}, {0, 2}},    {{5}, {-5}, {0}, {0}},
  };
  std::vector<DiffCase> cases;
  for (ElementType t : MovementTypes()) {
    for (const PadConfig& pad : pads) {
      std::vector<int64_t> out;
      for (size_t d = 0; d < pad.in.size(); ++d) {
        const int64_t n = pad.in[d];
        out.push_back(pad.low[d] + pad.high[d] + n + (n > 0 ? (n - 1) * pad.interior[d] : 0));
      }
      const std::string attributes = "edge_padding_low = " + I64Array(pad.low) +
                                     ", edge_padding_high = " + I64Array(pad.high) +
                                     ", interior_padding = " + I64Array(pad.interior);
      cases.push_back(MovementCase("pad", t, {{pad.in}, {{}}}, out, attributes, attributes));
    }
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> reverses = {
        {{33, 17}, {0}}, {{33, 17}, {1}}, {{33, 17}, {0, 1}}, {{3, 4, 5}, {0, 2}},
        {{1200}, {0}},   {{}, {}},        {{0, 4}, {1}}};
    for (const auto& [in, dimensions] : reverses) {
      cases.push_back(MovementCase("reverse", t, {{in}}, in, "dimensions = " + I64Array(dimensions),
                                   "dims " + IntList(dimensions)));
    }
  }
  ExpectAgree("pad, reverse", cases);
}

}  // namespace
}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
