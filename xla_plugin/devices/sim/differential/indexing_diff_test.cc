// Differential cases of gather, scatter and sort (see README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/case_helpers.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

// Gather's dimension numbers and shapes.
struct Gather {
  std::vector<int64_t> operand, indices;
  std::vector<int64_t> offset_dims, collapsed, operand_batching, indices_batching, start_index_map;
  int64_t index_vector_dim;
  std::vector<int64_t> slice_sizes;
};

bool Contains(const std::vector<int64_t>& list, int64_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::vector<int64_t> GatherResult(const Gather& g) {
  std::vector<int64_t> batch, offsets;
  for (size_t d = 0; d < g.indices.size(); ++d) {
    if (static_cast<int64_t>(d) != g.index_vector_dim) batch.push_back(g.indices[d]);
  }
  for (size_t d = 0; d < g.operand.size(); ++d) {
    if (!Contains(g.collapsed, d) && !Contains(g.operand_batching, d)) {
      offsets.push_back(g.slice_sizes[d]);
    }
  }
  std::vector<int64_t> out(batch.size() + offsets.size());
  size_t b = 0, o = 0;
  for (size_t d = 0; d < out.size(); ++d) out[d] = Contains(g.offset_dims, d) ? offsets[o++] : batch[b++];
  return out;
}

std::string GatherAttributes(const Gather& g) {
  return "dimension_numbers = #stablehlo.gather<offset_dims = " + IntList(g.offset_dims) +
         ", collapsed_slice_dims = " + IntList(g.collapsed) +
         ", operand_batching_dims = " + IntList(g.operand_batching) +
         ", start_indices_batching_dims = " + IntList(g.indices_batching) +
         ", start_index_map = " + IntList(g.start_index_map) +
         ", index_vector_dim = " + std::to_string(g.index_vector_dim) +
         ">, slice_sizes = " + I64Array(g.slice_sizes) + ", indices_are_sorted = false";
}

const std::vector<ElementType>& IndexTypes() {
  static const auto* const types = new std::vector<ElementType>{
      ElementType::kS32, ElementType::kS64, ElementType::kU32, ElementType::kS8};
  return *types;
}

TEST(IndexingDiffTest, Gather) {
  const std::vector<Gather> gathers = {
      {{33, 17}, {5, 1}, {1}, {0}, {}, {}, {0}, 1, {1, 17}},             // rows (take)
      {{33, 17}, {7, 2}, {}, {0, 1}, {}, {}, {0, 1}, 1, {1, 1}},         // elements x[i, j]
      {{33, 17}, {4, 2}, {1, 2}, {}, {}, {}, {0, 1}, 1, {3, 5}},         // windows
      {{33, 17}, {6}, {0}, {1}, {}, {}, {1}, 1, {33, 1}},                // implicit index vector
      {{3, 10, 4}, {3, 5, 1}, {2}, {1}, {0}, {0}, {1}, 2, {1, 1, 4}},    // batching dims
      {{8, 9, 10}, {4, 2}, {1, 2}, {2}, {}, {}, {2, 0}, 1, {3, 4, 1}},   // permuted start map
      {{1200}, {300, 1}, {}, {0}, {}, {}, {0}, 1, {1}},                  // many indices
      {{33, 17}, {0, 1}, {1}, {0}, {}, {}, {0}, 1, {1, 17}},             // no indices
  };
  const std::vector<ElementType> types = {ElementType::kF32, ElementType::kBF16, ElementType::kS8,
                                          ElementType::kU64, ElementType::kC64, ElementType::kPred,
                                          ElementType::kF64};
  std::vector<DiffCase> cases;
  int variant = 0;
  for (ElementType t : types) {
    for (const Gather& g : gathers) {
      const ElementType index = IndexTypes()[variant++ % IndexTypes().size()];
      const std::vector<int64_t> result = GatherResult(g);
      DiffCase c;
      c.op = "gather";
      c.what = ShapeText(t, g.operand) + " indices " + ShapeText(index, g.indices) + " " +
               GatherAttributes(g);
      ValueGenerator values(SeedOf(c.op + c.what));
      ProgramBuilder b;
      const std::string operand = b.Parameter(ArrayType{t, g.operand});
      const std::string indices = b.Parameter(ArrayType{index, g.indices});
      c.program = b.Build({b.Op1("stablehlo.gather", {operand, indices}, ArrayType{t, result},
                                 GatherAttributes(g))});
      // Start indices may be out of range: gather clamps them (both, as the spec says).
      c.inputs = {values.Random(ArrayType{t, g.operand}, BitValues()),
                  values.Random(ArrayType{index, g.indices}, Range(IsUnsigned(index) ? 0 : -3, 40))};
      c.tolerances = {Exact()};
      cases.push_back(std::move(c));
    }
  }
  ExpectAgree("gather", cases);
}

// Scatter's dimension numbers and shapes; `rows` and `columns` give each update's start index
// limits (the update windows must stay inside the operand: out-of-bounds scatter indices are
// implementation-defined, the interpreter drops elements, XLA whole windows).
struct Scatter {
  std::vector<int64_t> operand, indices, updates;
  std::vector<int64_t> update_window_dims, inserted, input_batching, indices_batching, to_operand;
  int64_t index_vector_dim;
  std::vector<int64_t> start_limits;  // Start index k lies in [0, start_limits[k]].
  int64_t unique_group = 0;  // Unique indices: runs of this many vectors differ (0: all of them;
                             // with batching dimensions, the vectors of one batch).
};

std::string ScatterAttributes(const Scatter& s) {
  return "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = " +
         IntList(s.update_window_dims) + ", inserted_window_dims = " + IntList(s.inserted) +
         ", input_batching_dims = " + IntList(s.input_batching) +
         ", scatter_indices_batching_dims = " + IntList(s.indices_batching) +
         ", scatter_dims_to_operand_dims = " + IntList(s.to_operand) +
         ", index_vector_dim = " + std::to_string(s.index_vector_dim) +
         ">, indices_are_sorted = false, unique_indices = false";
}

// Indices for `s`: start vectors within the limits; all different when `unique` (the windows of
// these configurations then never overlap).
HostTensor ScatterIndices(ValueGenerator& values, const Scatter& s, ElementType type, bool unique) {
  const int64_t vector = s.index_vector_dim < static_cast<int64_t>(s.indices.size())
                             ? s.indices[s.index_vector_dim] : 1;
  int64_t count = 1;
  for (int64_t d : s.indices) count *= d;
  const int64_t vectors = vector == 0 ? 0 : count / vector;
  std::set<std::vector<int64_t>> seen;
  std::vector<std::vector<int64_t>> starts;
  while (static_cast<int64_t>(starts.size()) < vectors) {
    if (s.unique_group > 0 && static_cast<int64_t>(starts.size()) % s.unique_group == 0) {
      seen.clear();
    }
    std::vector<int64_t> start;
    for (int64_t k = 0; k < vector; ++k) start.push_back(values.Int(0, s.start_limits[k]));
    if (unique && !seen.insert(start).second) continue;
    starts.push_back(start);
  }
  // Lay the vectors out with the index vector dimension where it is (last or implicit here).
  std::vector<double> flat;
  for (const auto& start : starts) flat.insert(flat.end(), start.begin(), start.end());
  return ValueGenerator::FromValues(ArrayType{type, s.indices}, flat);
}

TEST(IndexingDiffTest, Scatter) {
  const std::vector<Scatter> scatters = {
      {{33, 17}, {5, 1}, {5, 17}, {1}, {0}, {}, {}, {0}, 1, {32}},                 // rows
      {{33, 17}, {7, 2}, {7}, {}, {0, 1}, {}, {}, {0, 1}, 1, {32, 16}},            // elements
      {{33, 17}, {4, 2}, {4, 3, 5}, {1, 2}, {}, {}, {}, {0, 1}, 1, {30, 12}},      // windows
      {{3, 10, 4}, {3, 5, 1}, {3, 5, 4}, {2}, {1}, {0}, {0}, {1}, 2, {9}, 5},      // batching
      {{8, 9, 10}, {4, 2}, {4, 3, 4}, {1, 2}, {2}, {}, {}, {2, 0}, 1, {9, 5}},     // permuted
      {{1200}, {300, 1}, {300}, {}, {0}, {}, {}, {0}, 1, {1199}},                  // many
      {{33, 17}, {0, 1}, {0, 17}, {1}, {0}, {}, {}, {0}, 1, {32}},                 // none
  };
  struct Combiner {
    const char* name;  // "replace": the update replaces the element (order matters: unique).
    std::vector<ElementType> types;
    bool unique;
  };
  const std::vector<Combiner> combiners = {
      {"add", {ElementType::kS32, ElementType::kU8, ElementType::kS64}, false},  // duplicates
      {"add", {ElementType::kF32, ElementType::kBF16, ElementType::kF64}, true},
      {"maximum", {ElementType::kF32, ElementType::kS16}, false},
      {"replace", {ElementType::kF32, ElementType::kC64, ElementType::kPred, ElementType::kU64}, true},
  };
  std::vector<DiffCase> cases;
  int variant = 0;
  for (const Combiner& combiner : combiners) {
    for (ElementType t : combiner.types) {
      for (const Scatter& s : scatters) {
        const ElementType index = IndexTypes()[variant++ % IndexTypes().size()];
        DiffCase c;
        c.op = std::string("scatter ") + combiner.name;
        c.what = ShapeText(t, s.operand) + " indices " + ShapeText(index, s.indices) +
                 (combiner.unique ? " unique " : " ") + ScatterAttributes(s);
        ValueGenerator values(SeedOf(c.op + c.what));
        std::string region;
        if (std::string(combiner.name) == "replace") {
          RegionBuilder r("u", {t, t});
          region = r.Build({r.Argument(1)});
        } else {
          region = BinaryRegion("u", std::string("stablehlo.") + combiner.name, t);
        }
        ProgramBuilder b;
        const std::string operand = b.Parameter(ArrayType{t, s.operand});
        const std::string indices = b.Parameter(ArrayType{index, s.indices});
        const std::string updates = b.Parameter(ArrayType{t, s.updates});
        c.program = b.Build({b.Op1("stablehlo.scatter", {operand, indices, updates},
                                   ArrayType{t, s.operand}, ScatterAttributes(s), {region})});
        const ValuePolicy data = IsFloat(t) ? AnyValues() : BitValues();
        c.inputs = {values.Random(ArrayType{t, s.operand}, data),
                    ScatterIndices(values, s, index, combiner.unique),
                    values.Random(ArrayType{t, s.updates}, data)};
        c.tolerances = {ExactFlushed()};
        cases.push_back(std::move(c));
      }
    }
  }
  ExpectAgree("scatter", cases);
}

std::string CompareOp(RegionBuilder& r, const std::string& a, const std::string& b,
                      const std::string& direction, ElementType type) {
  const std::string order = IsFloat(type) ? "FLOAT" : IsSigned(type) ? "SIGNED" : "UNSIGNED";
  return r.Op("stablehlo.compare", {a, b}, ElementType::kPred,
              "comparison_direction = " + ComparisonDirection(direction) +
                  ", compare_type = " + ComparisonType(order));
}

// A sort case: operands of `types` and `dims` sorted along `dimension` by `comparator`
// (given the region builder over the 2n scalar arguments, returns the pred).
struct Sort {
  const char* name;
  std::vector<ElementType> types;
  std::vector<int64_t> dims;
  int64_t dimension;
  bool stable;
  std::string (*comparator)(RegionBuilder& r, const std::vector<ElementType>& types);
  // Inputs: keys with ties (small integers, stable sorts), or all different (unstable sorts:
  // the order of equal keys is unspecified).
  bool distinct;
};

TEST(IndexingDiffTest, Sort) {
  auto less = [](RegionBuilder& r, const std::vector<ElementType>& types) {
    return CompareOp(r, r.Argument(0), r.Argument(1), "LT", types[0]);
  };
  auto greater = [](RegionBuilder& r, const std::vector<ElementType>& types) {
    return CompareOp(r, r.Argument(0), r.Argument(1), "GT", types[0]);
  };
  // JAX's float comparator: -0 read as +0 (select(x == 0, 0, x)), then a total order (the
  // interpreter ignores TOTALORDER and compares as FLOAT: the inputs have no NaN).
  auto jax_less = [](RegionBuilder& r, const std::vector<ElementType>& types) {
    const ElementType t = types[0];
    const std::string zero = r.Constant("0.0", t);
    auto canonical = [&](const std::string& x) {
      const std::string is_zero = CompareOp(r, x, zero, "EQ", t);
      return r.Op("stablehlo.select", {is_zero, zero, x}, t);
    };
    const std::string a = canonical(r.Argument(0)), b = canonical(r.Argument(1));
    return r.Op("stablehlo.compare", {a, b}, ElementType::kPred,
                "comparison_direction = " + ComparisonDirection("LT") +
                    ", compare_type = " + ComparisonType("TOTALORDER"));
  };
  // Lexicographic on the first two operands.
  auto lexicographic = [](RegionBuilder& r, const std::vector<ElementType>& types) {
    const std::string lt0 = CompareOp(r, r.Argument(0), r.Argument(1), "LT", types[0]);
    const std::string eq0 = CompareOp(r, r.Argument(0), r.Argument(1), "EQ", types[0]);
    const std::string lt1 = CompareOp(r, r.Argument(2), r.Argument(3), "LT", types[1]);
    return r.Op("stablehlo.or", {lt0, r.Op("stablehlo.and", {eq0, lt1}, ElementType::kPred)},
                ElementType::kPred);
  };
  const ElementType f32 = ElementType::kF32, s32 = ElementType::kS32;
  const std::vector<Sort> sorts = {
      {"f32 ascending", {f32}, {33, 17}, 1, false, less, true},
      {"f32 ascending dim 0", {f32}, {33, 17}, 0, false, less, true},
      {"f32 stable ties", {f32}, {33, 17}, 1, true, less, false},
      {"f32 jax comparator", {f32}, {33, 17}, 1, true, jax_less, false},
      {"bf16 jax comparator", {ElementType::kBF16}, {1200}, 0, true, jax_less, false},
      {"u8 descending", {ElementType::kU8}, {1200}, 0, true, greater, false},
      {"s64 ascending", {ElementType::kS64}, {3, 4, 5}, 1, false, less, true},
      {"f64 empty", {ElementType::kF64}, {0, 5}, 1, false, less, true},
      {"s32 keys, f32 values, stable", {s32, f32}, {33, 17}, 1, true, less, false},
      {"f16 keys, s32 values", {ElementType::kF16, s32}, {7, 40}, 1, false, less, true},
      {"lexicographic s8, u16, c64 payload", {ElementType::kS8, ElementType::kU16, ElementType::kC64},
       {33, 17}, 1, true, lexicographic, false},
      {"one element", {f32, s32}, {1}, 0, true, less, false},
  };
  std::vector<Sort> all = sorts;
  // Every numeric type: one operand with distinct keys (unstable), and as stable keys with ties
  // carrying an s32 payload.
  for (ElementType t : Types({IntegerTypes(), FloatTypes()})) {
    all.push_back({"ascending", {t}, {7, 17}, 1, false, less, true});
    all.push_back({"keys with ties, s32 values", {t, s32}, {7, 17}, 1, true, less, false});
  }
  std::vector<DiffCase> cases;
  for (const Sort& sort : all) {
    DiffCase c;
    c.op = "sort";
    c.what = std::string(sort.name) + " " + ShapeText(sort.types[0], sort.dims) + " dim " +
             std::to_string(sort.dimension) + (sort.stable ? " stable" : "");
    ValueGenerator values(SeedOf(c.op + c.what));
    std::vector<ElementType> region_types;
    for (ElementType t : sort.types) region_types.insert(region_types.end(), {t, t});
    RegionBuilder r("c", region_types);
    // Arguments come in pairs (lhs_k, rhs_k): the comparators read 0,1 and 2,3.
    const std::string pred = sort.comparator(r, sort.types);
    ProgramBuilder b;
    std::vector<std::string> operands;
    std::vector<ArrayType> results;
    for (size_t k = 0; k < sort.types.size(); ++k) {
      const ArrayType t{sort.types[k], sort.dims};
      operands.push_back(b.Parameter(t));
      results.push_back(t);
      if (k == 0 && sort.distinct) {
        c.inputs.push_back(values.Distinct(t, IsUnsigned(t.type) ? 0 : -1000, 1000));
      } else if (k < 2 && !IsComplex(sort.types[k])) {
        // Keys with ties (and -0 beside +0 for floats; no NaN, which FLOAT does not order).
        ValuePolicy keys = Range(IsUnsigned(sort.types[k]) ? 0 : -4, 4);
        keys.edges = true;
        c.inputs.push_back(values.Random(t, keys));
      } else {
        c.inputs.push_back(values.Random(t, BitValues()));
      }
    }
    c.program = b.Build(b.Op("stablehlo.sort", operands, results,
                             "dimension = " + std::to_string(sort.dimension) +
                                 " : i64, is_stable = " + (sort.stable ? "true" : "false"),
                             {r.Build({pred})}));
    c.tolerances = {Exact()};
    cases.push_back(std::move(c));
  }
  ExpectAgree("sort", cases);
}

}  // namespace
}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
