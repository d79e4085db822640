// Tests of rng_bit_generator against XLA:CPU's bits (rng_bit_generator_cases.inc, from
// gen_rng_bit_generator_cases.py), then each Check refusal.
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

// One case: algorithm, state, output shape and type, XLA:CPU's new state and bits (each
// zero-extended to 64 bits).
struct RngCase {
  RngAlgorithm algorithm;
  std::vector<uint64_t> state;
  std::vector<int64_t> shape;
  ElementType type;
  std::vector<uint64_t> new_state;
  std::vector<uint64_t> bits;
};

#include "xla_plugin/devices/sim/kernels/rng_bit_generator_cases.inc"

std::string Describe(const RngCase& c) {
  ArrayType t;
  t.type = c.type;
  t.dims = c.shape;
  return "algorithm " + std::to_string(static_cast<int>(c.algorithm)) + ", state size " +
         std::to_string(c.state.size()) + ", state[1] " + std::to_string(c.state[1]) + ", " +
         t.ToString();
}

TEST(RngBitGeneratorTest, MatchesXlaCpu) {
  int runs = 0;
  for (const RngCase& c : kRngCases) {
    SCOPED_TRACE(Describe(c));
    HostArray state(ElementType::kU64, {static_cast<int64_t>(c.state.size())});
    for (size_t i = 0; i < c.state.size(); ++i) state.Set<uint64_t>(i, c.state[i]);
    HostArray new_state(ElementType::kU64, state.type.dims), bits(c.type, c.shape);
    RngBitGeneratorParams params{c.algorithm};
    ASSERT_TRUE(CheckRngBitGenerator(params, {&state.type}, {&new_state.type, &bits.type}).ok());
    ASSERT_TRUE(
        RunRngBitGenerator(params, {state.arg()}, {new_state.result(), bits.result()}).ok());
    for (size_t i = 0; i < c.new_state.size(); ++i) {
      EXPECT_EQ(new_state.Get<uint64_t>(i), c.new_state[i]) << "state word " << i;
    }
    const int64_t bytes = bits.type.element_bytes();
    ASSERT_EQ(static_cast<size_t>(bits.type.num_elements()), c.bits.size());
    for (size_t i = 0; i < c.bits.size(); ++i) {
      uint64_t got = 0;
      std::memcpy(&got, bits.bytes() + i * bytes, static_cast<size_t>(bytes));
      ASSERT_EQ(got, c.bits[i]) << "element " << i;
    }
    ++runs;
  }
  EXPECT_EQ(runs, static_cast<int>(sizeof(kRngCases) / sizeof(kRngCases[0])));
}

// The new state may be written over the old one.
TEST(RngBitGeneratorTest, StateInPlace) {
  const RngCase& c = kRngCases[0];
  HostArray state(ElementType::kU64, {static_cast<int64_t>(c.state.size())});
  for (size_t i = 0; i < c.state.size(); ++i) state.Set<uint64_t>(i, c.state[i]);
  HostArray bits(c.type, c.shape);
  RngBitGeneratorParams params{c.algorithm};
  ArrayResult in_place{&state.type, state.bytes()};
  ASSERT_TRUE(RunRngBitGenerator(params, {state.arg()}, {in_place, bits.result()}).ok());
  for (size_t i = 0; i < c.new_state.size(); ++i) EXPECT_EQ(state.Get<uint64_t>(i), c.new_state[i]);
}

ArrayType T(ElementType type, std::vector<int64_t> dims) {
  ArrayType t;
  t.type = type;
  t.dims = std::move(dims);
  return t;
}

TEST(RngBitGeneratorCheckTest, Refusals) {
  const ArrayType s2 = T(ElementType::kU64, {2}), s3 = T(ElementType::kU64, {3}),
                  s4 = T(ElementType::kU64, {4}), u32x4 = T(ElementType::kU32, {4}),
                  bits = T(ElementType::kU32, {3, 5});
  const RngBitGeneratorParams threefry{RngAlgorithm::kThreeFry}, philox{RngAlgorithm::kPhilox},
      default_alg{RngAlgorithm::kDefault};
  EXPECT_TRUE(CheckRngBitGenerator(threefry, {&s2}, {&s2, &bits}).ok());
  EXPECT_TRUE(CheckRngBitGenerator(philox, {&s3}, {&s3, &bits}).ok());
  EXPECT_TRUE(CheckRngBitGenerator(default_alg, {&s3}, {&s3, &bits}).ok());
  ExpectInvalid(CheckRngBitGenerator(threefry, {&s2}, {&s2}),
                "rng_bit_generator: expected 2 results, got 1");
  ExpectInvalid(CheckRngBitGenerator(threefry, {}, {&s2, &bits}),
                "rng_bit_generator: expected 1 operands, got 0");
  ExpectInvalid(CheckRngBitGenerator(RngBitGeneratorParams{static_cast<RngAlgorithm>(7)}, {&s2},
                                     {&s2, &bits}),
                "rng_bit_generator: algorithm 7 is unknown; expected DEFAULT, THREE_FRY or PHILOX");
  ExpectInvalid(CheckRngBitGenerator(threefry, {&s3}, {&s3, &bits}),
                "rng_bit_generator: state is u64[3]; expected u64[2] for THREE_FRY");
  ExpectInvalid(CheckRngBitGenerator(philox, {&s4}, {&s4, &bits}),
                "rng_bit_generator: state is u64[4]; expected u64[2] or u64[3] for PHILOX");
  ExpectInvalid(CheckRngBitGenerator(default_alg, {&u32x4}, {&u32x4, &bits}),
                "rng_bit_generator: state is u32[4]; expected u64[2] or u64[3] for DEFAULT");
  ExpectInvalid(CheckRngBitGenerator(philox, {&s2}, {&s3, &bits}),
                "rng_bit_generator: result 0 (the new state) is u64[3]; expected u64[2]");
  for (ElementType bad : {ElementType::kPred, ElementType::kC64, ElementType::kC128}) {
    const ArrayType b = T(bad, {2});
    ExpectInvalid(CheckRngBitGenerator(philox, {&s2}, {&s2, &b}),
                  std::string("rng_bit_generator: result 1 (the bits) has element type ") +
                      ElementTypeName(bad) +
                      "; expected an integer or floating-point type of 8, 16, 32 or 64 bits");
  }
  const ArrayType u4 = T(ElementType::kU4, {2});
  ExpectInvalid(CheckRngBitGenerator(philox, {&s2}, {&s2, &u4}),
                "rng_bit_generator: result 1 (the bits) has element type u4; expected a type of "
                "whole bytes");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
