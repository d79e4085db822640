// Tests of the data movement kernels: every case of data_movement_cases.inc (XLA:CPU's results,
// see gen_data_movement_cases.py) replayed for every element size, then each Check refusal.
#include "xla_plugin/devices/sim/kernels/data_movement.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/movement_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::ExpectInvalid;
using testing::FillPatterns;
using testing::HostArray;
using testing::MakeIndexScalar;
using testing::WritePattern;

enum class MoveKind {
  kCopy,
  kTranspose,
  kSlice,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kConcatenate,
  kPad,
  kReverse
};

// One generated case: the op, its array operands' dims, the result's dims, the op's params (per
// op: permutation | start, limit, strides | sizes | - | dimension | low, high, interior |
// dimensions), the start indices (type, bit patterns) and, per result element, the code of the
// operand element it holds (operand a, element e: a * 100000 + e; -1: the padding value).
struct MovementCase {
  MoveKind kind;
  const char* name;
  std::vector<std::vector<int64_t>> operands;
  std::vector<int64_t> result;
  std::vector<std::vector<int64_t>> params;
  ElementType index_type;
  std::vector<uint64_t> index_values;
  std::vector<int64_t> expected;
};

#include "xla_plugin/devices/sim/kernels/data_movement_cases.inc"

// Element types of every size the device stores, with a representative of each class.
const ElementType kElementTypes[] = {
    ElementType::kPred, ElementType::kS8,  ElementType::kU8,  ElementType::kF8E4M3FN,
    ElementType::kS16,  ElementType::kU16, ElementType::kF16, ElementType::kBF16,
    ElementType::kS32,  ElementType::kU32, ElementType::kF32, ElementType::kS64,
    ElementType::kU64,  ElementType::kF64, ElementType::kC64, ElementType::kC128,
};

// Checks and runs `c` on arrays of `type`; `in_place` runs dynamic_update_slice into its operand.
void RunCase(const MovementCase& c, ElementType type, bool in_place) {
  SCOPED_TRACE(std::string(c.name) + " on " + ElementTypeName(type) +
               (in_place ? " in place" : ""));
  std::vector<HostArray> arrays;
  for (size_t a = 0; a < c.operands.size(); ++a) {
    arrays.emplace_back(type, c.operands[a]);
    FillPatterns(&arrays.back(), static_cast<int64_t>(a) * 100000);
  }
  if (c.kind == MoveKind::kPad) {
    arrays.emplace_back(type, std::vector<int64_t>{});
    FillPatterns(&arrays.back(), -1);
  }
  for (uint64_t bits : c.index_values) arrays.push_back(MakeIndexScalar(c.index_type, bits));
  HostArray result(type, c.result);
  std::vector<ArrayArg> args;
  ArrayTypes types;
  for (const HostArray& a : arrays) {
    args.push_back(a.arg());
    types.push_back(&a.type);
  }
  std::vector<ArrayResult> results = {result.result()};
  if (in_place) results[0].data = const_cast<void*>(args[0].data);
  const ArrayTypes result_types = {&result.type};
  Status check, run;
  switch (c.kind) {
    case MoveKind::kCopy:
      check = CheckCopy(types, result_types);
      if (check.ok()) run = RunCopy(args, results);
      break;
    case MoveKind::kTranspose: {
      TransposeParams p{c.params[0]};
      check = CheckTranspose(p, types, result_types);
      if (check.ok()) run = RunTranspose(p, args, results);
      break;
    }
    case MoveKind::kSlice: {
      SliceParams p{c.params[0], c.params[1], c.params[2]};
      check = CheckSlice(p, types, result_types);
      if (check.ok()) run = RunSlice(p, args, results);
      break;
    }
    case MoveKind::kDynamicSlice: {
      DynamicSliceParams p{c.params[0]};
      check = CheckDynamicSlice(p, types, result_types);
      if (check.ok()) run = RunDynamicSlice(p, args, results);
      break;
    }
    case MoveKind::kDynamicUpdateSlice: {
      DynamicUpdateSliceParams p;
      check = CheckDynamicUpdateSlice(p, types, result_types);
      if (check.ok()) run = RunDynamicUpdateSlice(p, args, results);
      break;
    }
    case MoveKind::kConcatenate: {
      ConcatenateParams p{c.params[0][0]};
      check = CheckConcatenate(p, types, result_types);
      if (check.ok()) run = RunConcatenate(p, args, results);
      break;
    }
    case MoveKind::kPad: {
      PadParams p{c.params[0], c.params[1], c.params[2]};
      check = CheckPad(p, types, result_types);
      if (check.ok()) run = RunPad(p, args, results);
      break;
    }
    case MoveKind::kReverse: {
      ReverseParams p{c.params[0]};
      check = CheckReverse(p, types, result_types);
      if (check.ok()) run = RunReverse(p, args, results);
      break;
    }
  }
  ASSERT_TRUE(check.ok()) << check.ToString();
  ASSERT_TRUE(run.ok()) << run.ToString();
  const char* out = static_cast<const char*>(results[0].data);
  const int64_t bytes = result.type.element_bytes();
  ASSERT_EQ(static_cast<size_t>(result.type.num_elements()), c.expected.size());
  std::vector<char> want(static_cast<size_t>(bytes));
  int mismatches = 0;
  for (size_t i = 0; i < c.expected.size() && mismatches < 5; ++i) {
    WritePattern(c.expected[i], bytes, type == ElementType::kPred, want.data());
    if (std::memcmp(out + i * bytes, want.data(), static_cast<size_t>(bytes)) != 0) {
      ADD_FAILURE() << "element " << i << " differs from the code " << c.expected[i];
      ++mismatches;
    }
  }
}

TEST(DataMovementTest, GeneratedCasesEveryElementSize) {
  int runs = 0;
  for (const MovementCase& c : kMovementCases) {
    for (ElementType type : kElementTypes) {
      RunCase(c, type, /*in_place=*/false);
      ++runs;
    }
  }
  EXPECT_EQ(runs, static_cast<int>(sizeof(kMovementCases) / sizeof(kMovementCases[0]) *
                                   sizeof(kElementTypes) / sizeof(kElementTypes[0])));
}

TEST(DataMovementTest, DynamicUpdateSliceInPlace) {
  int runs = 0;
  for (const MovementCase& c : kMovementCases) {
    if (c.kind != MoveKind::kDynamicUpdateSlice) continue;
    for (ElementType type : kElementTypes) {
      RunCase(c, type, /*in_place=*/true);
      ++runs;
    }
  }
  EXPECT_GT(runs, 0);
}

// Checks -----------------------------------------------------------------------------------------

ArrayType T(ElementType type, std::vector<int64_t> dims) {
  ArrayType t;
  t.type = type;
  t.dims = std::move(dims);
  return t;
}

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kS32 = ElementType::kS32;

TEST(DataMovementCheckTest, Copy) {
  const ArrayType a = T(kF32, {2, 3}), b = T(kF32, {6}), c = T(ElementType::kF16, {6}),
                  d = T(kF32, {5}), s4 = T(ElementType::kS4, {6}),
                  token = T(ElementType::kToken, {});
  EXPECT_TRUE(CheckCopy({&a}, {&b}).ok());
  ExpectInvalid(CheckCopy({&a}, {&c}), "copy: result has element type f16; expected f32");
  ExpectInvalid(CheckCopy({&a}, {&d}),
                "copy: result f32[5] has 5 elements; expected 6 (operand f32[2,3])");
  ExpectInvalid(CheckCopy({&a, &a}, {&b}), "copy: expected 1 operands, got 2");
  ExpectInvalid(CheckCopy({&a}, {}), "copy: expected 1 results, got 0");
  ExpectInvalid(CheckCopy({nullptr}, {&b}), "copy: operand 0 has no type");
  ExpectInvalid(CheckCopy({&a}, {nullptr}), "copy: result 0 has no type");
  ExpectInvalid(CheckCopy({&s4}, {&s4}),
                "copy: operand has element type s4; expected a type of "
                "whole bytes");
  ExpectInvalid(CheckCopy({&token}, {&token}), "copy: operand has element type token");
  const ArrayType bad_enum = T(static_cast<ElementType>(99), {1});
  ExpectInvalid(CheckCopy({&bad_enum}, {&bad_enum}), "has element type element type 99");
  const ArrayType negative = T(kF32, {2, -1});
  ExpectInvalid(CheckCopy({&negative}, {&negative}),
                "copy: operand has dimensions [2,-1]; expected every dimension >= 0");
  const ArrayType huge = T(kF32, {int64_t{1} << 40, int64_t{1} << 30});
  ExpectInvalid(CheckCopy({&huge}, {&huge}), "has more bytes than int64 counts");
  // Empty, but its strides would overflow.
  const ArrayType huge_empty = T(kF32, {0, int64_t{1} << 40, int64_t{1} << 30});
  ExpectInvalid(CheckCopy({&huge_empty}, {&huge_empty}),
                "copy: operand f32[0,1099511627776,1073741824] has more bytes than int64 counts "
                "(counting its nonzero dimensions)");
}

TEST(DataMovementCheckTest, Transpose) {
  const ArrayType a = T(kF32, {2, 3, 4}), r = T(kF32, {4, 2, 3});
  EXPECT_TRUE(CheckTranspose({{2, 0, 1}}, {&a}, {&r}).ok());
  ExpectInvalid(CheckTranspose({{2, 0}}, {&a}, {&r}),
                "transpose: permutation [2,0] has 2 values; expected 3 (the operand's rank)");
  ExpectInvalid(CheckTranspose({{2, 0, 0}}, {&a}, {&r}),
                "transpose: permutation [2,0,0] repeats 0; expected unique values");
  ExpectInvalid(CheckTranspose({{3, 0, 1}}, {&a}, {&r}),
                "transpose: permutation [3,0,1] has 3; expected values in [0, 3)");
  ExpectInvalid(CheckTranspose({{1, 0, 2}}, {&a}, {&r}),
                "transpose: result has dimensions [4,2,3]; expected [3,2,4]");
  const ArrayType ri = T(kS32, {4, 2, 3});
  ExpectInvalid(CheckTranspose({{2, 0, 1}}, {&a}, {&ri}),
                "transpose: result has element type s32; expected f32");
}

TEST(DataMovementCheckTest, Slice) {
  const ArrayType a = T(kF32, {5, 6}), r = T(kF32, {2, 3});
  EXPECT_TRUE(CheckSlice({{1, 0}, {3, 6}, {1, 2}}, {&a}, {&r}).ok());
  ExpectInvalid(CheckSlice({{1}, {3, 6}, {1, 2}}, {&a}, {&r}),
                "slice: start [1] has 1 values; expected 2");
  ExpectInvalid(CheckSlice({{1, 0}, {3}, {1, 2}}, {&a}, {&r}), "slice: limit [3] has 1 values");
  ExpectInvalid(CheckSlice({{1, 0}, {3, 6}, {1}}, {&a}, {&r}), "slice: strides [1] has 1 values");
  ExpectInvalid(CheckSlice({{-1, 0}, {3, 6}, {1, 2}}, {&a}, {&r}),
                "slice: dimension 0 has start -1 and limit 3; expected 0 <= start <= limit <= 5");
  ExpectInvalid(CheckSlice({{4, 0}, {3, 6}, {1, 2}}, {&a}, {&r}),
                "slice: dimension 0 has start 4 and limit 3");
  ExpectInvalid(CheckSlice({{1, 0}, {3, 7}, {1, 2}}, {&a}, {&r}),
                "slice: dimension 1 has start 0 and limit 7; expected 0 <= start <= limit <= 6");
  ExpectInvalid(CheckSlice({{1, 0}, {3, 6}, {1, 0}}, {&a}, {&r}),
                "slice: strides [1,0] has 0; expected strides >= 1");
  ExpectInvalid(CheckSlice({{1, 0}, {3, 6}, {1, 1}}, {&a}, {&r}),
                "slice: result has dimensions [2,3]; expected [2,6]");
  const int64_t big = INT64_MAX;
  const ArrayType one = T(kF32, {2, 1});
  EXPECT_TRUE(CheckSlice({{1, 0}, {3, 6}, {1, big}}, {&a}, {&one}).ok());
}

TEST(DataMovementCheckTest, DynamicSlice) {
  const ArrayType a = T(kF32, {5, 6}), r = T(kF32, {2, 3}), i = T(kS32, {}),
                  u = T(ElementType::kU64, {}), f = T(kF32, {}), v = T(kS32, {1}),
                  p = T(ElementType::kPred, {});
  EXPECT_TRUE(CheckDynamicSlice({{2, 3}}, {&a, &i, &u}, {&r}).ok());
  ExpectInvalid(CheckDynamicSlice({{2, 3}}, {}, {&r}),
                "dynamic_slice: expected an operand and its start indices, got 0 operands");
  ExpectInvalid(CheckDynamicSlice({{2, 3}}, {&a, &i}, {&r}),
                "dynamic_slice: expected 3 operands, got 2");
  ExpectInvalid(CheckDynamicSlice({{2, 3}}, {&a, &i, &f}, {&r}),
                "dynamic_slice: start index 1 (operand 2) is f32[]; expected an integer scalar");
  ExpectInvalid(CheckDynamicSlice({{2, 3}}, {&a, &v, &i}, {&r}),
                "dynamic_slice: start index 0 (operand 1) is s32[1]; expected an integer scalar");
  ExpectInvalid(CheckDynamicSlice({{2, 3}}, {&a, &p, &i}, {&r}),
                "start index 0 (operand 1) is pred[]");
  ExpectInvalid(CheckDynamicSlice({{2}}, {&a, &i, &i}, {&r}),
                "dynamic_slice: sizes [2] has 1 values; expected 2");
  ExpectInvalid(CheckDynamicSlice({{2, 7}}, {&a, &i, &i}, {&r}),
                "dynamic_slice: sizes [2,7] do not fit operand f32[5,6]");
  ExpectInvalid(CheckDynamicSlice({{-1, 3}}, {&a, &i, &i}, {&r}),
                "dynamic_slice: sizes [-1,3] do not fit operand f32[5,6]");
  ExpectInvalid(CheckDynamicSlice({{3, 3}}, {&a, &i, &i}, {&r}),
                "dynamic_slice: result has dimensions [2,3]; expected [3,3]");
}

TEST(DataMovementCheckTest, DynamicUpdateSlice) {
  const ArrayType a = T(kF32, {5, 6}), up = T(kF32, {2, 3}), i = T(ElementType::kU8, {}),
                  big = T(kF32, {6, 3}), r1 = T(kF32, {2}), h = T(ElementType::kF16, {2, 3});
  EXPECT_TRUE(CheckDynamicUpdateSlice({}, {&a, &up, &i, &i}, {&a}).ok());
  ExpectInvalid(CheckDynamicUpdateSlice({}, {}, {&a}),
                "dynamic_update_slice: expected an operand, an update and start indices, got 0");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &up, &i}, {&a}),
                "dynamic_update_slice: expected 4 operands, got 3");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &big, &i, &i}, {&a}),
                "dynamic_update_slice: update f32[6,3] does not fit operand f32[5,6]");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &r1, &i, &i}, {&a}),
                "dynamic_update_slice: update f32[2] does not fit operand f32[5,6]");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &h, &i, &i}, {&a}),
                "dynamic_update_slice: update has element type f16; expected f32");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &up, &i, &up}, {&a}),
                "dynamic_update_slice: start index 1 (operand 3) is f32[2,3]");
  ExpectInvalid(CheckDynamicUpdateSlice({}, {&a, &up, &i, &i}, {&big}),
                "dynamic_update_slice: result has dimensions [6,3]; expected [5,6]");
}

TEST(DataMovementCheckTest, Concatenate) {
  const ArrayType a = T(kF32, {2, 3}), b = T(kF32, {2, 4}), r = T(kF32, {2, 7}),
                  c = T(kF32, {3, 4}), h = T(ElementType::kF16, {2, 4}), s = T(kF32, {});
  EXPECT_TRUE(CheckConcatenate({1}, {&a, &b}, {&r}).ok());
  ExpectInvalid(CheckConcatenate({1}, {}, {&r}), "concatenate: expected at least 1 operand, got 0");
  ExpectInvalid(CheckConcatenate({2}, {&a, &b}, {&r}),
                "concatenate: dimension 2 is out of range; expected [0, 2)");
  ExpectInvalid(CheckConcatenate({0}, {&s}, {&s}),
                "concatenate: dimension 0 is out of range; expected [0, 0)");
  ExpectInvalid(CheckConcatenate({1}, {&a, &c}, {&r}),
                "concatenate: operand 1 has dimensions [3,4]; expected operand 0's [2,3] except "
                "in dimension 1");
  ExpectInvalid(CheckConcatenate({1}, {&a, &h}, {&r}),
                "concatenate: operand 1 has element type f16; expected f32");
  ExpectInvalid(CheckConcatenate({1}, {&a, &a}, {&r}),
                "concatenate: result has dimensions [2,7]; expected [2,6]");
  const ArrayType huge1 = T(ElementType::kPred, {INT64_MAX / 2 + 1}),
                  huge2 = T(ElementType::kPred, {INT64_MAX / 2 + 1});
  ExpectInvalid(CheckConcatenate({0}, {&huge1, &huge2}, {&huge1}),
                "concatenate: the result's dimension 0 overflows int64");
}

TEST(DataMovementCheckTest, Pad) {
  const ArrayType a = T(kF32, {2, 3}), v = T(kF32, {}), r = T(kF32, {5, 9}), vv = T(kF32, {1}),
                  vh = T(ElementType::kF16, {});
  EXPECT_TRUE(CheckPad({{0, 1}, {2, 1}, {1, 2}}, {&a, &v}, {&r}).ok());
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1, 2}}, {&a}, {&r}), "pad: expected 2 operands, got 1");
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1, 2}}, {&a, &vv}, {&r}),
                "pad: padding value is f32[1]; expected a scalar");
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1, 2}}, {&a, &vh}, {&r}),
                "pad: padding value has element type f16; expected f32");
  ExpectInvalid(CheckPad({{0}, {2, 1}, {1, 2}}, {&a, &v}, {&r}), "pad: low [0] has 1 values");
  ExpectInvalid(CheckPad({{0, 1}, {2}, {1, 2}}, {&a, &v}, {&r}), "pad: high [2] has 1 values");
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1}}, {&a, &v}, {&r}), "pad: interior [1] has 1 values");
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1, -2}}, {&a, &v}, {&r}),
                "pad: interior [1,-2] has -2; expected interior >= 0");
  ExpectInvalid(CheckPad({{0, -5}, {2, 1}, {1, 0}}, {&a, &v}, {&r}),
                "pad: dimension 1 of operand f32[2,3] with low -5, high 1 and interior 0 has no "
                "valid size");
  ExpectInvalid(CheckPad({{0, INT64_MAX}, {2, INT64_MAX}, {1, 0}}, {&a, &v}, {&r}),
                "pad: dimension 1 of operand f32[2,3] with low 9223372036854775807");
  ExpectInvalid(CheckPad({{0, 1}, {2, 1}, {1, 1}}, {&a, &v}, {&r}),
                "pad: result has dimensions [5,9]; expected [5,7]");
}

TEST(DataMovementCheckTest, Reverse) {
  const ArrayType a = T(kF32, {2, 3}), r = T(kF32, {3, 2});
  EXPECT_TRUE(CheckReverse({{1, 0}}, {&a}, {&a}).ok());
  ExpectInvalid(CheckReverse({{2}}, {&a}, {&a}),
                "reverse: dimensions [2] has 2; expected values in [0, 2)");
  ExpectInvalid(CheckReverse({{0, 0}}, {&a}, {&a}),
                "reverse: dimensions [0,0] repeats 0; expected unique values");
  ExpectInvalid(CheckReverse({{0}}, {&a}, {&r}),
                "reverse: result has dimensions [3,2]; expected [2,3]");
}

// A huge interior padding on a dimension of one element takes no room and must not overflow.
TEST(DataMovementTest, PadHugeInteriorOnUnitDimension) {
  HostArray operand(kS32, {1, 2}), value(kS32, {}), result(kS32, {3, 2});
  operand.Set<int32_t>(0, 7);
  operand.Set<int32_t>(1, 8);
  value.Set<int32_t>(0, -1);
  PadParams p{{1, 0}, {1, 0}, {INT64_MAX, 0}};
  ASSERT_TRUE(CheckPad(p, {&operand.type, &value.type}, {&result.type}).ok());
  ASSERT_TRUE(RunPad(p, {operand.arg(), value.arg()}, {result.result()}).ok());
  const int32_t want[] = {-1, -1, 7, 8, -1, -1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(result.Get<int32_t>(i), want[i]) << i;
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
