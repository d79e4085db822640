// The reduction kernels against XLA:CPU's results (testdata/reduction_cases.inc, generated from
// JAX by testdata/gen_reduction_cases.py). Every case runs as the compiler would build it (with
// the combiner it recognized) and again with the combiner cleared (the engine path), so typed
// loops and bodies are checked against the same values. Tolerances: 0 means bit-exact (NaN
// matching NaN); float sums use rtol per element (|got - want| <= rtol * max(1, |want|)): 1e-6 for
// f32 over at most ~30 elements, 1e-5 for f32 over up to 2000, 1e-12 for f64, since the kernels
// sum pairwise where XLA sums sequentially.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/testdata/reduction_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::Buffer;
using testing::TestArray;
using testing::TestBody;

struct ReduceCase {
  const char* name;
  std::vector<int64_t> dimensions;
  TestBody body;
  std::vector<TestArray> operands;
  std::vector<TestArray> results;
  double rtol;
};

struct ReduceWindowCase {
  const char* name;
  std::vector<int64_t> window_dimensions, window_strides, base_dilations, window_dilations;
  std::vector<std::pair<int64_t, int64_t>> padding;
  TestBody body;
  std::vector<TestArray> operands;
  std::vector<TestArray> results;
  double rtol;
};

struct SelectAndScatterCase {
  const char* name;
  std::vector<int64_t> window_dimensions, window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  TestBody select;
  TestBody scatter;
  std::vector<TestArray> operands;
  std::vector<TestArray> results;
  double rtol;
};

struct ScatterCase {
  const char* name;
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching_dims,
      scatter_indices_batching_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim;
  bool indices_are_sorted, unique_indices;
  TestBody update;
  std::vector<TestArray> operands;
  std::vector<TestArray> results;
  double rtol;
};

#include "xla_plugin/devices/sim/kernels/testdata/reduction_cases.inc"

// Runs `run` (Check + Run of one kernel) and compares every result with the table's.
template <typename Case, typename CheckFn, typename RunFn>
void RunCase(const Case& c, CheckFn check, RunFn run, const char* path) {
  SCOPED_TRACE(std::string(c.name) + " (" + path + ")");
  std::vector<Buffer> operands = testing::MakeBuffers(c.operands);
  std::vector<Buffer> results = testing::MakeResultBuffers(c.results);
  const Status checked = check(testing::Types(operands), testing::Types(results));
  ASSERT_TRUE(checked.ok()) << checked.ToString();
  const Status ran = run(testing::Args(operands), testing::Results(results));
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(testing::Compare(results[i], c.results[i], c.rtol), "") << "result " << i;
  }
}

ReduceParams MakeParams(const ReduceCase& c, bool generic) {
  ReduceParams p;
  p.dimensions = c.dimensions;
  p.body = testing::MakeComputation(c.body);
  if (generic) p.body.combiner = Combiner::kGeneric;
  return p;
}

TEST(ReduceGoldenTest, MatchesXlaCpu) {
  ASSERT_GE(kReduceCases().size(), 100u);
  for (const ReduceCase& c : kReduceCases()) {
    for (bool generic : {false, true}) {
      if (generic && c.body.combiner == Combiner::kGeneric) continue;
      const ReduceParams p = MakeParams(c, generic);
      RunCase(
          c, [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckReduce(p, o, r); },
          [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
            return RunReduce(p, o, r);
          },
          generic ? "engine" : "as compiled");
    }
  }
}

ReduceWindowParams MakeParams(const ReduceWindowCase& c, bool generic) {
  ReduceWindowParams p;
  p.window_dimensions = c.window_dimensions;
  p.window_strides = c.window_strides;
  p.base_dilations = c.base_dilations;
  p.window_dilations = c.window_dilations;
  p.padding = c.padding;
  p.body = testing::MakeComputation(c.body);
  if (generic) p.body.combiner = Combiner::kGeneric;
  return p;
}

TEST(ReduceWindowGoldenTest, MatchesXlaCpu) {
  ASSERT_GE(kReduceWindowCases().size(), 40u);
  for (const ReduceWindowCase& c : kReduceWindowCases()) {
    for (bool generic : {false, true}) {
      if (generic && c.body.combiner == Combiner::kGeneric) continue;
      const ReduceWindowParams p = MakeParams(c, generic);
      RunCase(
          c, [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckReduceWindow(p, o, r); },
          [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
            return RunReduceWindow(p, o, r);
          },
          generic ? "engine" : "as compiled");
    }
  }
}

SelectAndScatterParams MakeParams(const SelectAndScatterCase& c, bool generic) {
  SelectAndScatterParams p;
  p.window_dimensions = c.window_dimensions;
  p.window_strides = c.window_strides;
  p.padding = c.padding;
  p.select = testing::MakeComputation(c.select);
  p.scatter = testing::MakeComputation(c.scatter);
  if (generic) p.scatter.combiner = Combiner::kGeneric;
  return p;
}

TEST(SelectAndScatterGoldenTest, MatchesXlaCpu) {
  ASSERT_GE(kSelectAndScatterCases().size(), 14u);
  for (const SelectAndScatterCase& c : kSelectAndScatterCases()) {
    for (bool generic : {false, true}) {
      if (generic && c.scatter.combiner == Combiner::kGeneric) continue;
      const SelectAndScatterParams p = MakeParams(c, generic);
      RunCase(
          c,
          [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckSelectAndScatter(p, o, r); },
          [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
            return RunSelectAndScatter(p, o, r);
          },
          generic ? "engine" : "as compiled");
    }
  }
}

ScatterParams MakeParams(const ScatterCase& c, bool generic) {
  ScatterParams p;
  p.update_window_dims = c.update_window_dims;
  p.inserted_window_dims = c.inserted_window_dims;
  p.input_batching_dims = c.input_batching_dims;
  p.scatter_indices_batching_dims = c.scatter_indices_batching_dims;
  p.scatter_dims_to_operand_dims = c.scatter_dims_to_operand_dims;
  p.index_vector_dim = c.index_vector_dim;
  p.indices_are_sorted = c.indices_are_sorted;
  p.unique_indices = c.unique_indices;
  p.update = testing::MakeComputation(c.update);
  if (generic) p.update.combiner = Combiner::kGeneric;
  return p;
}

TEST(ScatterGoldenTest, MatchesXlaCpu) {
  ASSERT_GE(kScatterCases().size(), 40u);
  for (const ScatterCase& c : kScatterCases()) {
    for (bool generic : {false, true}) {
      if (generic && c.update.combiner == Combiner::kGeneric) continue;
      const ScatterParams p = MakeParams(c, generic);
      RunCase(
          c, [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckScatter(p, o, r); },
          [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
            return RunScatter(p, o, r);
          },
          generic ? "engine" : "as compiled");
    }
  }
}

// In place: the result is the input's buffer (the buffer plan aliased them).
TEST(ScatterGoldenTest, InPlaceMatchesXlaCpu) {
  for (const ScatterCase& c : kScatterCases()) {
    SCOPED_TRACE(c.name);
    const ScatterParams p = MakeParams(c, false);
    std::vector<Buffer> operands = testing::MakeBuffers(c.operands);
    std::vector<ArrayArg> args = testing::Args(operands);
    std::vector<ArrayResult> results;
    const size_t n = c.results.size();
    for (size_t i = 0; i < n; ++i) {
      results.push_back(ArrayResult{&operands[i].type(), operands[i].data()});
    }
    ASSERT_TRUE(RunScatter(p, args, results).ok());
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(testing::Compare(operands[i], c.results[i], c.rtol), "") << "result " << i;
    }
  }
}

// The same scatters with index_vector_dim moved: first (indices transposed) and, for index
// vectors of size 1, implicit (index_vector_dim = rank, the trailing 1 dropped).
TEST(ScatterGoldenTest, IndexVectorDimVariants) {
  int ran = 0;
  for (const ScatterCase& c : kScatterCases()) {
    const TestArray& idx = c.operands[c.results.size()];
    if (idx.dims.size() != 2 || c.index_vector_dim != 1 || !c.input_batching_dims.empty()) {
      continue;
    }
    SCOPED_TRACE(c.name);
    std::vector<Buffer> operands = testing::MakeBuffers(c.operands);
    const size_t n = c.results.size();
    const int64_t rows = idx.dims[0], cols = idx.dims[1];
    const int64_t bytes = operands[n].type().element_bytes();
    // Transposed indices, index_vector_dim 0.
    Buffer transposed(idx.type, {cols, rows});
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < cols; ++k) {
        std::memcpy(static_cast<char*>(transposed.data()) + (k * rows + r) * bytes,
                    static_cast<const char*>(operands[n].data()) + (r * cols + k) * bytes, bytes);
      }
    }
    std::vector<ScatterParams> variants;
    std::vector<Buffer> indices;
    ScatterParams first = MakeParams(c, false);
    first.index_vector_dim = 0;
    variants.push_back(first);
    indices.push_back(std::move(transposed));
    if (cols == 1) {
      ScatterParams implicit = MakeParams(c, false);
      implicit.index_vector_dim = 1;
      variants.push_back(implicit);
      indices.emplace_back(idx.type, std::vector<int64_t>{rows}, operands[n].data());
    }
    for (size_t v = 0; v < variants.size(); ++v) {
      std::vector<ArrayArg> args = testing::Args(operands);
      args[n] = indices[v].arg();
      ArrayTypes types = testing::Types(operands);
      types[n] = &indices[v].type();
      std::vector<Buffer> results = testing::MakeResultBuffers(c.results);
      const Status checked = CheckScatter(variants[v], types, testing::Types(results));
      ASSERT_TRUE(checked.ok()) << checked.ToString();
      ASSERT_TRUE(RunScatter(variants[v], args, testing::Results(results)).ok());
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(testing::Compare(results[i], c.results[i], c.rtol), "") << "variant " << v;
      }
      ++ran;
    }
  }
  EXPECT_GE(ran, 30);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
