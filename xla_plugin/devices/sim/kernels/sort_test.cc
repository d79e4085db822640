// Tests of sort: every case of sort_cases.inc (XLA:CPU's results, see gen_sort_cases.py) through
// the comparator's keys and through its body, comparators that are no strict weak order, and
// each Check refusal.
#include <algorithm>
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
using testing::HostArray;

// One case: comparator name, dimension, stability, operand dims and types, and per operand the
// input and XLA:CPU's sorted bit patterns (one word per element; two for 16-byte elements).
struct SortCase {
  const char* name;
  const char* comparator;
  int64_t dimension;
  bool is_stable;
  std::vector<int64_t> dims;
  std::vector<ElementType> types;
  std::vector<std::vector<uint64_t>> inputs;
  std::vector<std::vector<uint64_t>> expected;
};

#include "xla_plugin/devices/sim/kernels/sort_cases.inc"

// Builds comparator bodies in the encoding fused_elementwise.h's engine reads (the one place to
// adapt if that encoding changes): kInput attr = input index; kCompare attr = direction |
// comparison type << 8; kConstant holds the element's bytes.
class ComparatorBuilder {
 public:
  explicit ComparatorBuilder(const std::vector<ElementType>& types) {
    for (ElementType t : types) {
      body_.inputs.push_back(EwInput{t, {}});
      body_.inputs.push_back(EwInput{t, {}});
    }
  }
  int Input(int i) {
    EwStep s{EwOp::kInput, body_.inputs[i].type};
    s.attr = i;
    return Add(s);
  }
  int Constant(ElementType t, uint64_t bits) {
    EwStep s{EwOp::kConstant, t};
    const int bytes = ElementTypeBits(t) / 8;
    s.constant.assign(reinterpret_cast<const char*>(&bits), bytes);
    return Add(s);
  }
  int Compare(ComparisonDirection d, int a, int b, ComparisonType ct) {
    EwStep s{EwOp::kCompare, ElementType::kPred, body_.steps[a].type, {a, b, -1}};
    s.attr = static_cast<int64_t>(d) | (static_cast<int64_t>(ct) << 8);
    return Add(s);
  }
  int Binary(EwOp op, int a, int b) {
    return Add(EwStep{op, body_.steps[a].type, ElementType::kInvalid, {a, b, -1}});
  }
  int Select(int p, int a, int b) {
    return Add(EwStep{EwOp::kSelect, body_.steps[a].type, ElementType::kInvalid, {p, a, b}});
  }
  FusedElementwise Finish(int out) {
    body_.outputs = {out};
    return body_;
  }

 private:
  int Add(const EwStep& step) {
    body_.steps.push_back(step);
    return static_cast<int>(body_.steps.size()) - 1;
  }
  FusedElementwise body_;
};

// JAX's float canonicalization: -0.0 -> +0.0, NaN -> +NaN.
int Canonical(ComparatorBuilder* b, int x, ElementType t) {
  uint64_t nan = 0;
  switch (t) {
    case ElementType::kF16:
      nan = 0x7e00;
      break;
    case ElementType::kBF16:
      nan = 0x7fc0;
      break;
    case ElementType::kF32:
      nan = 0x7fc00000;
      break;
    default:
      nan = 0x7ff8000000000000ull;
  }
  const int zero = b->Constant(t, 0), qnan = b->Constant(t, nan);
  const int y =
      b->Select(b->Compare(ComparisonDirection::kEq, x, zero, ComparisonType::kFloat), zero, x);
  return b->Select(b->Compare(ComparisonDirection::kNe, x, x, ComparisonType::kFloat), qnan, y);
}

// The named comparator (gen_sort_cases.py's) as keys and as a body, for operands of `types`.
Comparator MakeComparator(const std::string& name, const std::vector<ElementType>& types) {
  using D = ComparisonDirection;
  using C = ComparisonType;
  Comparator comparator;
  ComparatorBuilder b(types);
  if (name == "sum_s32_lt") {
    const int l = b.Binary(EwOp::kAdd, b.Input(0), b.Input(2));
    const int r = b.Binary(EwOp::kAdd, b.Input(1), b.Input(3));
    comparator.body = b.Finish(b.Compare(D::kLt, l, r, C::kSigned));
    return comparator;
  }
  struct K {
    int operand;
    D direction;
    C type;
    bool canonicalize;
  };
  std::vector<K> keys;
  if (name == "jax_float_lt") keys = {{0, D::kLt, C::kTotalOrder, true}};
  if (name == "jax_float_then_s32") {
    keys = {{0, D::kLt, C::kTotalOrder, true}, {1, D::kLt, C::kSigned, false}};
  }
  if (name == "signed_lt") keys = {{0, D::kLt, C::kSigned, false}};
  if (name == "signed_gt") keys = {{0, D::kGt, C::kSigned, false}};
  if (name == "unsigned_lt") keys = {{0, D::kLt, C::kUnsigned, false}};
  if (name == "total_lt") keys = {{0, D::kLt, C::kTotalOrder, false}};
  if (name == "float_lt") keys = {{0, D::kLt, C::kFloat, false}};
  if (name == "float_gt") keys = {{0, D::kGt, C::kFloat, false}};
  if (name == "s32_lt_then_f32_gt") {
    keys = {{0, D::kLt, C::kSigned, false}, {1, D::kGt, C::kFloat, false}};
  }
  EXPECT_FALSE(keys.empty()) << "unknown comparator " << name;
  std::vector<std::pair<int, int>> terms;  // (cmp, eq) per key.
  for (const K& k : keys) {
    comparator.keys.push_back(SortKey{k.operand, k.direction, k.type, k.canonicalize});
    int x = b.Input(2 * k.operand), y = b.Input(2 * k.operand + 1);
    if (k.canonicalize) {
      x = Canonical(&b, x, types[k.operand]);
      y = Canonical(&b, y, types[k.operand]);
    }
    terms.push_back({b.Compare(k.direction, x, y, k.type), b.Compare(D::kEq, x, y, k.type)});
  }
  int result = terms.back().first;
  for (int i = static_cast<int>(terms.size()) - 2; i >= 0; --i) {
    result = b.Binary(EwOp::kOr, terms[i].first, b.Binary(EwOp::kAnd, terms[i].second, result));
  }
  comparator.body = b.Finish(result);
  return comparator;
}

// Fills arrays of the case's types from word lists.
HostArray FromWords(ElementType type, const std::vector<int64_t>& dims,
                    const std::vector<uint64_t>& words) {
  HostArray array(type, dims);
  const int64_t bytes = array.type.element_bytes();
  const int64_t per_word = bytes < 8 ? bytes : 8;
  for (size_t w = 0; w < words.size(); ++w) {
    std::memcpy(array.bytes() + w * per_word, &words[w], static_cast<size_t>(per_word));
  }
  return array;
}

void RunCase(const SortCase& c, bool use_keys) {
  SCOPED_TRACE(std::string(c.name) + (use_keys ? " through keys" : " through the body"));
  std::vector<HostArray> inputs, outputs;
  for (size_t i = 0; i < c.types.size(); ++i) {
    inputs.push_back(FromWords(c.types[i], c.dims, c.inputs[i]));
    outputs.emplace_back(c.types[i], c.dims);
  }
  SortParams params{c.dimension, c.is_stable, MakeComparator(c.comparator, c.types)};
  if (!use_keys) params.comparator.keys.clear();
  std::vector<ArrayArg> args;
  std::vector<ArrayResult> results;
  ArrayTypes operand_types, result_types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back(inputs[i].arg());
    results.push_back(outputs[i].result());
    operand_types.push_back(&inputs[i].type);
    result_types.push_back(&outputs[i].type);
  }
  const Status check = CheckSort(params, operand_types, result_types);
  ASSERT_TRUE(check.ok()) << check.ToString();
  ASSERT_TRUE(RunSort(params, args, results).ok());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostArray want = FromWords(c.types[i], c.dims, c.expected[i]);
    const int64_t bytes = want.type.element_bytes();
    for (int64_t e = 0; e < want.type.num_elements(); ++e) {
      ASSERT_EQ(std::memcmp(outputs[i].bytes() + e * bytes, want.bytes() + e * bytes, bytes), 0)
          << "operand " << i << " element " << e;
    }
  }
}

TEST(SortTest, MatchesXlaCpuThroughKeysAndBody) {
  int runs = 0;
  for (const SortCase& c : kSortCases) {
    if (!MakeComparator(c.comparator, c.types).keys.empty()) {
      RunCase(c, /*use_keys=*/true);
      ++runs;
    }
    RunCase(c, /*use_keys=*/false);
    ++runs;
  }
  EXPECT_GT(runs, static_cast<int>(sizeof(kSortCases) / sizeof(kSortCases[0])));
}

// A comparator that is no strict weak order (always true; <=) still sorts into a permutation of
// the row, never outside it.
TEST(SortTest, InconsistentComparatorsStayInsideTheRow) {
  const int64_t n = 257;
  HostArray keys(ElementType::kS32, {3, n}), payload(ElementType::kU16, {3, n});
  for (int64_t i = 0; i < 3 * n; ++i) {
    keys.Set<int32_t>(i, static_cast<int32_t>((i * 7919) % 13));
    payload.Set<uint16_t>(i, static_cast<uint16_t>(i));
  }
  const std::vector<ElementType> types = {ElementType::kS32, ElementType::kU16};
  for (int variant = 0; variant < 2; ++variant) {
    ComparatorBuilder b(types);
    const int out = variant == 0 ? b.Constant(ElementType::kPred, 1)
                                 : b.Compare(ComparisonDirection::kLe, b.Input(0), b.Input(1),
                                             ComparisonType::kSigned);
    SortParams params{1, variant == 1, Comparator{b.Finish(out), {}}};
    HostArray sorted_keys(ElementType::kS32, {3, n}), sorted_payload(ElementType::kU16, {3, n});
    ASSERT_TRUE(
        CheckSort(params, {&keys.type, &payload.type}, {&sorted_keys.type, &sorted_payload.type})
            .ok());
    ASSERT_TRUE(RunSort(params, {keys.arg(), payload.arg()},
                        {sorted_keys.result(), sorted_payload.result()})
                    .ok());
    for (int64_t row = 0; row < 3; ++row) {
      std::vector<int64_t> seen;
      for (int64_t k = 0; k < n; ++k) {
        const uint16_t p = sorted_payload.Get<uint16_t>(row * n + k);
        seen.push_back(p);
        EXPECT_EQ(sorted_keys.Get<int32_t>(row * n + k), keys.Get<int32_t>(p));
      }
      std::sort(seen.begin(), seen.end());
      for (int64_t k = 0; k < n; ++k) EXPECT_EQ(seen[k], row * n + k);
    }
  }
}

// The keys path on a large row matches the body path (merge passes well beyond the runs).
TEST(SortTest, LargeRowKeysEqualBody) {
  const int64_t n = 5000;
  HostArray x(ElementType::kF32, {n}), idx(ElementType::kS32, {n});
  for (int64_t i = 0; i < n; ++i) {
    x.Set<float>(i, static_cast<float>((i * 2654435761u) % 977) - 400.0f);
    idx.Set<int32_t>(i, static_cast<int32_t>(i));
  }
  const std::vector<ElementType> types = {ElementType::kF32, ElementType::kS32};
  HostArray a0(ElementType::kF32, {n}), a1(ElementType::kS32, {n}), b0(ElementType::kF32, {n}),
      b1(ElementType::kS32, {n});
  SortParams params{0, true, MakeComparator("jax_float_lt", types)};
  ASSERT_TRUE(RunSort(params, {x.arg(), idx.arg()}, {a0.result(), a1.result()}).ok());
  params.comparator.keys.clear();
  ASSERT_TRUE(RunSort(params, {x.arg(), idx.arg()}, {b0.result(), b1.result()}).ok());
  EXPECT_EQ(std::memcmp(a1.bytes(), b1.bytes(), n * 4), 0);
  for (int64_t i = 1; i < n; ++i) {
    ASSERT_LE(a0.Get<float>(i - 1), a0.Get<float>(i));
    if (a0.Get<float>(i - 1) == a0.Get<float>(i)) {
      ASSERT_LT(a1.Get<int32_t>(i - 1), a1.Get<int32_t>(i));  // Stable.
    }
  }
}

ArrayType T(ElementType type, std::vector<int64_t> dims) {
  ArrayType t;
  t.type = type;
  t.dims = std::move(dims);
  return t;
}

TEST(SortCheckTest, Refusals) {
  const ArrayType f = T(ElementType::kF32, {2, 3}), s = T(ElementType::kS32, {2, 3}),
                  scalar = T(ElementType::kF32, {}), c = T(ElementType::kC64, {2, 3}),
                  u = T(ElementType::kU8, {2, 3});
  const Comparator fs =
      MakeComparator("jax_float_then_s32", {ElementType::kF32, ElementType::kS32});
  SortParams p{1, true, fs};
  EXPECT_TRUE(CheckSort(p, {&f, &s}, {&f, &s}).ok());
  p.dimension = -2;
  EXPECT_TRUE(CheckSort(p, {&f, &s}, {&f, &s}).ok());
  ExpectInvalid(CheckSort(p, {}, {}), "sort: expected at least 1 operand, got 0");
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f}), "sort: expected 2 results, got 1");
  const ArrayType s3 = T(ElementType::kS32, {3, 2});
  ExpectInvalid(CheckSort(p, {&f, &s3}, {&f, &s3}),
                "sort: operand 1 has dimensions [3,2]; expected operand 0's [2,3]");
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &u}),
                "sort: result 1 is u8[2,3]; expected s32[2,3] (operand 1's type)");
  p.dimension = 2;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: dimension 2 is out of range; expected [-2, 2)");
  p.dimension = -3;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}), "sort: dimension -3 is out of range");
  SortParams one{0, true, MakeComparator("float_lt", {ElementType::kF32})};
  ExpectInvalid(CheckSort(one, {&scalar}, {&scalar}),
                "sort: dimension 0 is out of range; expected [0, 0)");
  // Keys.
  p = SortParams{0, true, fs};
  p.comparator.keys[1].operand = 2;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: key 1 compares operand 2; expected an operand in [0, 2)");
  p = SortParams{0, true, fs};
  p.comparator.keys[0].direction = ComparisonDirection::kLe;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}), "sort: key 0 has direction 4; expected LT or GT");
  p = SortParams{0, true, fs};
  p.comparator.keys[1].type = ComparisonType::kUnsigned;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: key 1 has comparison type 4 for operand 1 of s32; expected SIGNED for "
                "signed integers");
  p = SortParams{0, true, fs};
  p.comparator.keys[0].type = ComparisonType::kSigned;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: key 0 has comparison type 3 for operand "
                "0 of f32");
  p = SortParams{0, true, fs};
  p.comparator.keys[1].canonicalize = true;
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}), "sort: key 1 canonicalizes without TOTALORDER");
  SortParams complex_keys{0, true, MakeComparator("float_lt", {ElementType::kC64})};
  ExpectInvalid(CheckSort(complex_keys, {&c}, {&c}),
                "sort: key 0 has comparison type 1 for operand 0 of c64");
  // The body's signature.
  p = SortParams{0, true, fs};
  p.comparator.keys.resize(1);
  ExpectInvalid(CheckSort(p, {&f}, {&f}),
                "sort: the comparator takes 4 inputs; expected 2 (lhs and rhs of each operand)");
  p.comparator.keys.clear();
  ExpectInvalid(CheckSort(p, {&s, &s}, {&s, &s}),
                "sort: comparator input 0 is f32 with strides []; expected a s32 scalar (operand "
                "0's type, no strides)");
  p = SortParams{0, true, fs};
  p.comparator.body.inputs[3].strides = {1};
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: comparator input 3 is s32 with strides [1]; expected a s32 scalar");
  p = SortParams{0, true, fs};
  p.comparator.body.dims = {4};
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: the comparator's dims are [4]; expected [] (a computation on scalars)");
  p = SortParams{0, true, fs};
  p.comparator.body.outputs.push_back(0);
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: the comparator returns 2 values; expected 1 pred");
  p = SortParams{0, true, fs};
  p.comparator.body.outputs = {0};
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: the comparator's output is step 0 of type f32; expected a pred step");
  p.comparator.body.outputs = {1000};
  ExpectInvalid(CheckSort(p, {&f, &s}, {&f, &s}),
                "sort: the comparator's output is step 1000 (no such step); expected a pred step");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
