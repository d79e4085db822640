// Tests of gather: every case of gather_cases.inc (XLA:CPU's results, see gen_gather_cases.py)
// replayed for several element sizes, then each Check refusal.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/movement_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::ExpectInvalid;
using testing::FillPatterns;
using testing::HostArray;
using testing::WritePattern;

// One case: params, operand dims, start indices (type, dims, bit patterns), result dims and, per
// result element, the code of the operand element it holds (element e: e + 1; 0: zero bytes).
struct GatherCase {
  const char* name;
  GatherParams params;
  std::vector<int64_t> operand;
  ElementType index_type;
  std::vector<int64_t> index_dims;
  std::vector<uint64_t> index_values;
  std::vector<int64_t> result;
  std::vector<int64_t> expected;
};

#include "xla_plugin/devices/sim/kernels/gather_cases.inc"

const ElementType kElementTypes[] = {ElementType::kPred, ElementType::kS8,  ElementType::kBF16,
                                     ElementType::kF32,  ElementType::kU32, ElementType::kS64,
                                     ElementType::kF64,  ElementType::kC64, ElementType::kC128};

void RunCase(const GatherCase& c, ElementType type) {
  SCOPED_TRACE(std::string(c.name) + " on " + ElementTypeName(type));
  HostArray operand(type, c.operand), indices(c.index_type, c.index_dims), result(type, c.result);
  FillPatterns(&operand, 1);
  const int64_t index_bytes = indices.type.element_bytes();
  for (size_t i = 0; i < c.index_values.size(); ++i) {
    std::memcpy(indices.bytes() + i * index_bytes, &c.index_values[i],
                static_cast<size_t>(index_bytes));
  }
  std::memset(result.bytes(), 0x77, static_cast<size_t>(result.type.byte_size()));
  const Status check = CheckGather(c.params, {&operand.type, &indices.type}, {&result.type});
  ASSERT_TRUE(check.ok()) << check.ToString();
  ASSERT_TRUE(RunGather(c.params, {operand.arg(), indices.arg()}, {result.result()}).ok());
  const int64_t bytes = result.type.element_bytes();
  ASSERT_EQ(static_cast<size_t>(result.type.num_elements()), c.expected.size());
  std::vector<char> want(static_cast<size_t>(bytes));
  int mismatches = 0;
  for (size_t i = 0; i < c.expected.size() && mismatches < 5; ++i) {
    if (c.expected[i] == 0) {
      std::memset(want.data(), 0, want.size());
    } else {
      WritePattern(c.expected[i], bytes, type == ElementType::kPred, want.data());
    }
    if (std::memcmp(result.bytes() + i * bytes, want.data(), want.size()) != 0) {
      ADD_FAILURE() << "element " << i << " differs from the code " << c.expected[i];
      ++mismatches;
    }
  }
}

TEST(GatherTest, MatchesXlaCpuEveryElementSize) {
  int runs = 0;
  for (const GatherCase& c : kGatherCases) {
    for (ElementType type : kElementTypes) {
      RunCase(c, type);
      ++runs;
    }
  }
  EXPECT_EQ(runs, static_cast<int>(sizeof(kGatherCases) / sizeof(kGatherCases[0]) *
                                   sizeof(kElementTypes) / sizeof(kElementTypes[0])));
}

// A larger row gather (the x[i] fast path: each slice one memcpy) and an element gather
// (take_along_axis), checked against the definition.
TEST(GatherTest, LargeRowAndElementGathers) {
  const int64_t rows = 300, cols = 129, n = 1000;
  HostArray operand(ElementType::kF32, {rows, cols}), indices(ElementType::kS32, {n, 1});
  for (int64_t i = 0; i < rows * cols; ++i) operand.Set<float>(i, static_cast<float>(i));
  for (int64_t i = 0; i < n; ++i) indices.Set<int32_t>(i, static_cast<int32_t>((i * 37) % 350));
  HostArray result(ElementType::kF32, {n, cols});
  GatherParams rows_params{{1}, {0}, {}, {}, {0}, 1, {1, cols}, false};
  ASSERT_TRUE(CheckGather(rows_params, {&operand.type, &indices.type}, {&result.type}).ok());
  ASSERT_TRUE(RunGather(rows_params, {operand.arg(), indices.arg()}, {result.result()}).ok());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = std::min<int64_t>((i * 37) % 350, rows - 1);
    for (int64_t j = 0; j < cols; j += 17) {
      ASSERT_EQ(result.Get<float>(i * cols + j), static_cast<float>(row * cols + j));
    }
  }
  // take_along_axis on axis 1: indices [rows, cols, 1], batching dim 0.
  HostArray along(ElementType::kU16, {rows, cols, 1}), picked(ElementType::kF32, {rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) along.Set<uint16_t>(i, static_cast<uint16_t>(i % 131));
  GatherParams along_params{{}, {1}, {0}, {0}, {1}, 2, {1, 1}, false};
  ASSERT_TRUE(CheckGather(along_params, {&operand.type, &along.type}, {&picked.type}).ok());
  ASSERT_TRUE(RunGather(along_params, {operand.arg(), along.arg()}, {picked.result()}).ok());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t col = std::min<int64_t>((r * cols + j) % 131, cols - 1);
      ASSERT_EQ(picked.Get<float>(r * cols + j), static_cast<float>(r * cols + col));
    }
  }
}

ArrayType T(ElementType type, std::vector<int64_t> dims) {
  ArrayType t;
  t.type = type;
  t.dims = std::move(dims);
  return t;
}

// x[i] on f32[4,6] with s32[3,1] indices, and variations of it.
GatherParams RowParams() { return GatherParams{{1}, {0}, {}, {}, {0}, 1, {1, 6}, false}; }

TEST(GatherCheckTest, Refusals) {
  const ArrayType x = T(ElementType::kF32, {4, 6}), idx = T(ElementType::kS32, {3, 1}),
                  r = T(ElementType::kF32, {3, 6});
  EXPECT_TRUE(CheckGather(RowParams(), {&x, &idx}, {&r}).ok());
  ExpectInvalid(CheckGather(RowParams(), {&x}, {&r}), "gather: expected 2 operands, got 1");
  const ArrayType fidx = T(ElementType::kF32, {3, 1}), pidx = T(ElementType::kPred, {3, 1});
  ExpectInvalid(CheckGather(RowParams(), {&x, &fidx}, {&r}),
                "gather: start_indices has element type f32; expected an integer type");
  ExpectInvalid(CheckGather(RowParams(), {&x, &pidx}, {&r}),
                "gather: start_indices has element type pred");
  const ArrayType rh = T(ElementType::kF16, {3, 6});
  ExpectInvalid(CheckGather(RowParams(), {&x, &idx}, {&rh}),
                "gather: result has element type f16; expected f32");
  GatherParams p = RowParams();
  p.index_vector_dim = 3;
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: index_vector_dim 3 is out of range; expected [0, 2]");
  p = RowParams();
  p.collapsed_slice_dims = {2};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: collapsed_slice_dims [2] has 2; expected values in [0, 2)");
  p = RowParams();
  p.collapsed_slice_dims = {1, 0};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: collapsed_slice_dims [1,0] is not sorted");
  p = RowParams();
  p.operand_batching_dims = {0};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: dimension 0 is in both collapsed_slice_dims and operand_batching_dims");
  p = RowParams();
  p.operand_batching_dims = {1, 1};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}), "gather: operand_batching_dims [1,1] repeats 1");
  p = RowParams();
  p.start_indices_batching_dims = {1};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: start_indices_batching_dims [1] holds index_vector_dim 1");
  p = RowParams();
  p.start_indices_batching_dims = {0};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: start_indices_batching_dims [0] has 1 values; expected 0 (as "
                "operand_batching_dims)");
  p = RowParams();
  p.start_indices_batching_dims = {5};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: start_indices_batching_dims [5] has 5; expected values in [0, 2)");
  p = RowParams();
  p.start_index_map = {0, 0};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}), "gather: start_index_map [0,0] repeats 0");
  p = RowParams();
  p.start_index_map = {0, 1};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: start_index_map [0,1] has 2 values; expected 1 (the start indices' "
                "index_vector_dim size)");
  p = RowParams();
  p.offset_dims = {};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: offset_dims [], collapsed_slice_dims [0] and operand_batching_dims [] "
                "hold 1 dimensions together; expected 2 (the operand's rank)");
  const ArrayType x3 = T(ElementType::kF32, {4, 6, 5}), r3 = T(ElementType::kF32, {6, 3, 5});
  GatherParams unsorted{{2, 0}, {0}, {}, {}, {0}, 1, {1, 6, 5}, false};
  ExpectInvalid(CheckGather(unsorted, {&x3, &idx}, {&r3}),
                "gather: offset_dims [2,0] is not sorted; expected increasing values");
  const ArrayType idx4bit = T(ElementType::kS4, {3, 1});
  ExpectInvalid(CheckGather(RowParams(), {&x, &idx4bit}, {&r}),
                "gather: start_indices has element type s4; expected a type of whole bytes");
  p = RowParams();
  p.offset_dims = {2};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: offset_dims [2] has 2; expected values in [0, 2)");
  p = RowParams();
  p.slice_sizes = {1};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}), "gather: slice_sizes [1] has 1 values");
  p = RowParams();
  p.slice_sizes = {1, 7};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: slice_sizes [1,7] do not fit operand f32[4,6]");
  p = RowParams();
  p.slice_sizes = {-1, 6};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: slice_sizes [-1,6] do not fit operand f32[4,6]");
  p = RowParams();
  p.slice_sizes = {2, 6};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: slice_sizes [2,6] has 2 in collapsed or batching dimension 0; expected "
                "at most 1");
  p = RowParams();
  p.slice_sizes = {1, 5};
  ExpectInvalid(CheckGather(p, {&x, &idx}, {&r}),
                "gather: result has dimensions [3,6]; expected [3,5]");
  // Batching dimensions of different sizes; a batching dimension in start_index_map.
  const ArrayType idx4 = T(ElementType::kS32, {5, 1}), r4 = T(ElementType::kF32, {5});
  GatherParams b{{}, {1}, {0}, {0}, {1}, 1, {1, 1}, false};
  ExpectInvalid(CheckGather(b, {&x, &idx4}, {&r4}),
                "gather: operand batching dimension 0 has size 4; expected start_indices "
                "dimension 0's 5");
  b.start_index_map = {0};
  b.collapsed_slice_dims = {1};
  ExpectInvalid(CheckGather(b, {&x, &idx4}, {&r4}),
                "gather: start_index_map [0] holds batching dimension 0; expected no "
                "operand_batching_dims in it");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
