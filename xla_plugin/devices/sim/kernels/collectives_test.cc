// Collectives on 4 participants, each on its own thread, meeting through the runtime's Rendezvous.
#include "xla_plugin/devices/sim/kernels/collectives.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/collective_combine.h"
#include "xla_plugin/devices/sim/kernels/testing/contraction_test_util.h"
#include "xla_plugin/devices/sim/runtime/rendezvous.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int kParticipants = 4;

using testing::Reduction;

template <typename T>
std::vector<unsigned char> ToBytes(const std::vector<T>& values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> FromBytes(const std::vector<unsigned char>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// One collective on every participant: operand types are the same on all (SPMD), data differs.
class Collective {
 public:
  Collective(CollectiveParams params, std::vector<ArrayType> operand_types,
             std::vector<ArrayType> result_types)
      : params_(std::move(params)),
        operand_types_(std::move(operand_types)),
        result_types_(std::move(result_types)),
        operands_(kParticipants, std::vector<std::vector<unsigned char>>(operand_types_.size())),
        results_(kParticipants) {}

  // Sets participant r's operand i.
  void SetOperand(int r, size_t i, std::vector<unsigned char> bytes) {
    operands_[r][i] = std::move(bytes);
  }

  // Checks, then runs on kParticipants threads through one Rendezvous; returns each status.
  std::vector<Status> Run() {
    ArrayTypes ops, res;
    for (const ArrayType& t : operand_types_) ops.push_back(&t);
    for (const ArrayType& t : result_types_) res.push_back(&t);
    const Status check = CheckCollective(params_, kParticipants, ops, res);
    EXPECT_TRUE(check.ok()) << check.ToString();
    Rendezvous rendezvous(kParticipants);
    std::vector<Status> statuses(kParticipants);
    std::vector<std::thread> threads;
    for (int r = 0; r < kParticipants; ++r) {
      threads.emplace_back([&, r] { statuses[r] = RunOne(r, &rendezvous); });
    }
    for (std::thread& t : threads) t.join();
    return statuses;
  }

  // Runs and expects every participant to succeed.
  void RunOk() {
    for (const Status& s : Run()) EXPECT_TRUE(s.ok()) << s.ToString();
  }

  // Participant r's result i.
  const std::vector<unsigned char>& Result(int r, size_t i) const { return results_[r][i]; }
  template <typename T>
  std::vector<T> ResultAs(int r, size_t i) const {
    return FromBytes<T>(results_[r][i]);
  }

  // Runs participant r's part with its own step counter (which must end at 1).
  Status RunOne(int r, Rendezvous* rendezvous) {
    std::vector<ArrayArg> args;
    for (size_t i = 0; i < operand_types_.size(); ++i) {
      EXPECT_EQ(operands_[r][i].size(), static_cast<size_t>(operand_types_[i].byte_size()));
      args.push_back({&operand_types_[i], operands_[r][i].data()});
    }
    results_[r].clear();
    std::vector<ArrayResult> outs;
    for (const ArrayType& t : result_types_) {
      results_[r].emplace_back(static_cast<size_t>(t.byte_size()), 0xEE);
    }
    for (size_t i = 0; i < result_types_.size(); ++i) {
      outs.push_back({&result_types_[i], results_[r][i].data()});
    }
    int64_t step = 0;
    CollectiveContext context{r, kParticipants, rendezvous, &step};
    const Status status = RunCollective(params_, context, args, outs);
    EXPECT_EQ(step, 1);
    return status;
  }

 private:
  CollectiveParams params_;
  std::vector<ArrayType> operand_types_, result_types_;
  std::vector<std::vector<std::vector<unsigned char>>> operands_;  // [participant][operand].
  std::vector<std::vector<std::vector<unsigned char>>> results_;   // [participant][result].
};

using Groups = std::vector<std::vector<int64_t>>;

const Groups kLayouts[] = {{}, {{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}, {{3, 2, 1, 0}}};

// The group of participant r (empty groups: all, in order).
std::vector<int64_t> GroupOf(const Groups& groups, int r) {
  if (groups.empty()) return {0, 1, 2, 3};
  for (const auto& g : groups) {
    for (int64_t id : g) {
      if (id == r) return g;
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// all_reduce

TEST(AllReduceTest, SumF32FoldsInGroupOrderOnEveryLayout) {
  // Values whose f32 sum depends on the order: every member must fold ((x0 + x1) + x2) + x3 in
  // group order.
  const float values[kParticipants] = {1e8f, 1.0f, -1e8f, 3.0f};
  for (const Groups& groups : {Groups{}, Groups{{0, 1}, {2, 3}}, Groups{{0, 2}, {1, 3}},
                               Groups{{3, 2, 1, 0}}, Groups{{2, 0, 3, 1}}, Groups{{0}, {1, 2, 3}},
                               Groups{{0}, {1}, {2}, {3}}}) {
    CollectiveParams p;
    p.kind = CollectiveKind::kAllReduce;
    p.groups = groups;
    p.reduction = Reduction(Combiner::kAdd, ElementType::kF32);
    const ArrayType type{ElementType::kF32, {3}};
    Collective c(p, {type}, {type});
    for (int r = 0; r < kParticipants; ++r) {
      c.SetOperand(r, 0, ToBytes(std::vector<float>{values[r], float(r), -values[r]}));
    }
    c.RunOk();
    for (int r = 0; r < kParticipants; ++r) {
      const std::vector<int64_t> g = GroupOf(groups, r);
      float a = values[g[0]], b = float(g[0]), d = -values[g[0]];
      for (size_t j = 1; j < g.size(); ++j) {
        a += values[g[j]];
        b += float(g[j]);
        d += -values[g[j]];
      }
      EXPECT_EQ(c.ResultAs<float>(r, 0), (std::vector<float>{a, b, d}))
          << "participant " << r << " layout of " << groups.size() << " groups";
    }
  }
}

TEST(AllReduceTest, VariadicOperandsOfDifferentShapes) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllReduce;
  p.groups = {{0, 2}, {1, 3}};
  p.reduction = Reduction(Combiner::kMaximum, ElementType::kS32);
  const ArrayType a{ElementType::kS32, {2, 2}}, b{ElementType::kS32, {}}, e{ElementType::kS32, {0}};
  Collective c(p, {a, b, e}, {a, b, e});
  for (int r = 0; r < kParticipants; ++r) {
    c.SetOperand(r, 0, ToBytes(std::vector<int32_t>{r, -r, 10 * r, 7}));
    c.SetOperand(r, 1, ToBytes(std::vector<int32_t>{100 - r}));
    c.SetOperand(r, 2, {});
  }
  c.RunOk();
  for (int r = 0; r < kParticipants; ++r) {
    const int hi = r % 2 == 0 ? 2 : 3, lo = r % 2 == 0 ? 0 : 1;
    EXPECT_EQ(c.ResultAs<int32_t>(r, 0), (std::vector<int32_t>{hi, -lo, 10 * hi, 7}));
    EXPECT_EQ(c.ResultAs<int32_t>(r, 1), (std::vector<int32_t>{100 - lo}));
    EXPECT_TRUE(c.Result(r, 2).empty());
  }
}

// Runs an all_reduce of one element per participant (values[r]) over all four and returns the
// result participant 0 sees (every participant must see the same bytes).
template <typename T>
T AllReduceOne(Combiner combiner, ElementType type, const std::vector<T>& values) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllReduce;
  p.reduction = Reduction(combiner, type);
  const ArrayType t{type, {1}};
  Collective c(p, {t}, {t});
  for (int r = 0; r < kParticipants; ++r) c.SetOperand(r, 0, ToBytes(std::vector<T>{values[r]}));
  c.RunOk();
  for (int r = 1; r < kParticipants; ++r) EXPECT_EQ(c.Result(r, 0), c.Result(0, 0));
  return c.ResultAs<T>(0, 0)[0];
}

TEST(AllReduceTest, EveryElementClassAndCombiner) {
  using P = uint8_t;
  EXPECT_EQ(AllReduceOne<P>(Combiner::kAdd, ElementType::kPred, {0, 1, 0, 0}), 1);
  EXPECT_EQ(AllReduceOne<P>(Combiner::kAnd, ElementType::kPred, {1, 1, 0, 1}), 0);
  EXPECT_EQ(AllReduceOne<P>(Combiner::kMultiply, ElementType::kPred, {1, 1, 1, 1}), 1);
  EXPECT_EQ(AllReduceOne<P>(Combiner::kXor, ElementType::kPred, {1, 1, 1, 0}), 1);
  EXPECT_EQ(AllReduceOne<int8_t>(Combiner::kAdd, ElementType::kS8, {100, 100, 50, 6}), 0);
  EXPECT_EQ(AllReduceOne<int8_t>(Combiner::kMultiply, ElementType::kS8, {16, 16, 2, 1}), 0);
  EXPECT_EQ(AllReduceOne<int16_t>(Combiner::kMinimum, ElementType::kS16, {3, -7, 5, 0}), -7);
  EXPECT_EQ(AllReduceOne<uint16_t>(Combiner::kMultiply, ElementType::kU16, {65535, 65535, 1, 1}),
            1);
  EXPECT_EQ(AllReduceOne<int32_t>(Combiner::kMaximum, ElementType::kS32, {-5, -2, -9, -3}), -2);
  EXPECT_EQ(AllReduceOne<uint32_t>(Combiner::kMaximum, ElementType::kU32,
                                   {1, 0x80000000u, 7, 2}),
            0x80000000u);
  EXPECT_EQ(AllReduceOne<int64_t>(Combiner::kAdd, ElementType::kS64,
                                  {std::numeric_limits<int64_t>::max(), 1, 0, 0}),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(AllReduceOne<uint64_t>(Combiner::kMinimum, ElementType::kU64, {9, 4, ~0ull, 5}), 4u);
  EXPECT_EQ(AllReduceOne<uint8_t>(Combiner::kOr, ElementType::kU8, {1, 2, 4, 8}), 15);
  EXPECT_EQ(AllReduceOne<uint32_t>(Combiner::kXor, ElementType::kU32, {1, 3, 7, 15}), 10u);
  EXPECT_EQ(AllReduceOne<double>(Combiner::kMultiply, ElementType::kF64, {1.5, 2, -1, 4}), -12);
  EXPECT_EQ(AllReduceOne<float>(Combiner::kMinimum, ElementType::kF32, {3, -1, 2, 0}), -1);
  EXPECT_EQ(AllReduceOne<std::complex<float>>(Combiner::kAdd, ElementType::kC64,
                                              {{1, 2}, {3, 4}, {-1, 0}, {0, -1}}),
            std::complex<float>(3, 5));
  EXPECT_EQ(AllReduceOne<std::complex<double>>(Combiner::kAdd, ElementType::kC128,
                                               {{1, 2}, {3, 4}, {-1, 0}, {0, -1}}),
            std::complex<double>(3, 5));
  EXPECT_EQ(AllReduceOne<int32_t>(Combiner::kReplace, ElementType::kS32, {1, 2, 3, 4}), 4);
}

TEST(AllReduceTest, FloatMaximumPropagatesNanAndOrdersSignedZeros) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(AllReduceOne<double>(Combiner::kMaximum, ElementType::kF64,
                                              {1, nan, 3, 2})));
  EXPECT_TRUE(std::isnan(AllReduceOne<float>(Combiner::kMinimum, ElementType::kF32,
                                             {1, 2, 3, std::nanf("")})));
  EXPECT_FALSE(std::signbit(AllReduceOne<float>(Combiner::kMaximum, ElementType::kF32,
                                                {-0.0f, 0.0f, -0.0f, -1.0f})));
  EXPECT_TRUE(std::signbit(AllReduceOne<double>(Combiner::kMinimum, ElementType::kF64,
                                                {0.0, -0.0, 0.0, 1.0})));
}

TEST(AllReduceTest, LowPrecisionAndComplexMultiplyTakeTheScalarComputationPath) {
  // bf16: 1 + 2^-8 rounds to 1 at every step (to nearest even); f16 maximum; c64 multiply.
  EXPECT_FALSE(CombineInPlace(Combiner::kAdd, ElementType::kBF16, 0, nullptr, nullptr));
  EXPECT_EQ(AllReduceOne<uint16_t>(Combiner::kAdd, ElementType::kBF16,
                                   {0x3F80, 0x3B80, 0x3B80, 0x3B80}),
            0x3F80);  // 1 + 3 * 2^-8 folded: stays 1.0.
  EXPECT_EQ(AllReduceOne<uint16_t>(Combiner::kMaximum, ElementType::kF16,
                                   {0x3C00, 0x4000, 0xC000, 0x3800}),
            0x4000);  // max(1, 2, -2, 0.5) = 2.
  EXPECT_EQ(AllReduceOne<std::complex<float>>(Combiner::kMultiply, ElementType::kC64,
                                              {{0, 1}, {0, 1}, {2, 0}, {1, 1}}),
            std::complex<float>(-2, -2));  // i * i * 2 * (1 + i).
}

// ---------------------------------------------------------------------------------------------
// all_gather, reduce_scatter, all_to_all

TEST(AllGatherTest, VariadicAlongEachDimensionOnEveryLayout) {
  for (const Groups& groups : kLayouts) {
    for (int64_t dim : {0, 1}) {
      CollectiveParams p;
      p.kind = CollectiveKind::kAllGather;
      p.groups = groups;
      p.dimension = dim;
      const int64_t n = groups.empty() || groups.size() == 1 ? 4 : 2;
      const ArrayType a{ElementType::kF32, {2, 3}}, b{ElementType::kS8, {1, 2}};
      ArrayType ra = a, rb = b;
      ra.dims[dim] *= n;
      rb.dims[dim] *= n;
      Collective c(p, {a, b}, {ra, rb});
      for (int r = 0; r < kParticipants; ++r) {
        std::vector<float> va(6);
        for (int k = 0; k < 6; ++k) va[k] = float(r * 10 + k);
        c.SetOperand(r, 0, ToBytes(va));
        c.SetOperand(r, 1, ToBytes(std::vector<int8_t>{int8_t(r), int8_t(-r)}));
      }
      c.RunOk();
      for (int r = 0; r < kParticipants; ++r) {
        const std::vector<int64_t> g = GroupOf(groups, r);
        std::vector<float> want_a;
        std::vector<int8_t> want_b;
        if (dim == 0) {
          for (int64_t s : g) {
            for (int k = 0; k < 6; ++k) want_a.push_back(float(s * 10 + k));
            want_b.push_back(int8_t(s));
            want_b.push_back(int8_t(-s));
          }
        } else {
          for (int row = 0; row < 2; ++row) {
            for (int64_t s : g) {
              for (int col = 0; col < 3; ++col) want_a.push_back(float(s * 10 + row * 3 + col));
            }
          }
          for (int64_t s : g) {
            want_b.push_back(int8_t(s));
            want_b.push_back(int8_t(-s));
          }
        }
        EXPECT_EQ(c.ResultAs<float>(r, 0), want_a) << "participant " << r << " dim " << dim;
        EXPECT_EQ(c.ResultAs<int8_t>(r, 1), want_b) << "participant " << r << " dim " << dim;
      }
    }
  }
}

TEST(ReduceScatterTest, SumAlongEachDimensionOnEveryLayout) {
  for (const Groups& groups : kLayouts) {
    const int64_t n = groups.empty() || groups.size() == 1 ? 4 : 2;
    for (int64_t dim : {0, 1}) {
      CollectiveParams p;
      p.kind = CollectiveKind::kReduceScatter;
      p.groups = groups;
      p.dimension = dim;
      p.reduction = Reduction(Combiner::kAdd, ElementType::kS64);
      const ArrayType in{ElementType::kS64, {4, 4}};
      ArrayType out = in;
      out.dims[dim] /= n;
      Collective c(p, {in}, {out});
      for (int r = 0; r < kParticipants; ++r) {
        std::vector<int64_t> v(16);
        for (int k = 0; k < 16; ++k) v[k] = int64_t{1} << (r * 16 + k) % 60;
        c.SetOperand(r, 0, ToBytes(v));
      }
      c.RunOk();
      for (int r = 0; r < kParticipants; ++r) {
        const std::vector<int64_t> g = GroupOf(groups, r);
        const int64_t index = std::find(g.begin(), g.end(), r) - g.begin();
        std::vector<int64_t> want;
        for (int row = 0; row < out.dims[0]; ++row) {
          for (int col = 0; col < out.dims[1]; ++col) {
            const int k = dim == 0 ? (index * out.dims[0] + row) * 4 + col
                                   : row * 4 + index * out.dims[1] + col;
            int64_t sum = 0;
            for (int64_t s : g) sum += int64_t{1} << (s * 16 + k) % 60;
            want.push_back(sum);
          }
        }
        EXPECT_EQ(c.ResultAs<int64_t>(r, 0), want) << "participant " << r << " dim " << dim;
      }
    }
  }
}

TEST(AllToAllTest, SplitAndConcatDimensionsOnEveryLayout) {
  for (const Groups& groups : kLayouts) {
    const int64_t n = groups.empty() || groups.size() == 1 ? 4 : 2;
    for (auto [split, concat] : {std::pair<int64_t, int64_t>{1, 0}, {0, 1}, {1, 1}}) {
      CollectiveParams p;
      p.kind = CollectiveKind::kAllToAll;
      p.groups = groups;
      p.dimension = split;
      p.concat_dimension = concat;
      p.split_count = n;
      const ArrayType in{ElementType::kU16, {4, 4}};
      ArrayType out = in;
      out.dims[split] /= n;
      out.dims[concat] *= n;
      Collective c(p, {in}, {out});
      for (int r = 0; r < kParticipants; ++r) {
        std::vector<uint16_t> v(16);
        for (int k = 0; k < 16; ++k) v[k] = uint16_t(r * 100 + k);
        c.SetOperand(r, 0, ToBytes(v));
      }
      c.RunOk();
      for (int r = 0; r < kParticipants; ++r) {
        const std::vector<int64_t> g = GroupOf(groups, r);
        const int64_t me = std::find(g.begin(), g.end(), r) - g.begin();
        // want[i][j] of the result: which sender and which of its elements.
        std::vector<uint16_t> want(16);
        for (int i = 0; i < out.dims[0]; ++i) {
          for (int j = 0; j < out.dims[1]; ++j) {
            int64_t idx[2] = {i, j};
            const int64_t chunk_concat = out.dims[concat] / n;
            const int64_t sender = g[idx[concat] / chunk_concat];
            idx[concat] %= chunk_concat;
            idx[split] += me * (in.dims[split] / n);
            want[i * out.dims[1] + j] = uint16_t(sender * 100 + idx[0] * 4 + idx[1]);
          }
        }
        EXPECT_EQ(c.ResultAs<uint16_t>(r, 0), want)
            << "participant " << r << " split " << split << " concat " << concat;
      }
    }
  }
}

TEST(AllToAllTest, VariadicOneDimensional) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllToAll;
  p.split_count = 4;
  const ArrayType a{ElementType::kC128, {4}}, b{ElementType::kBF16, {8}};
  Collective c(p, {a, b}, {a, b});
  for (int r = 0; r < kParticipants; ++r) {
    std::vector<std::complex<double>> va;
    std::vector<uint16_t> vb;
    for (int k = 0; k < 4; ++k) va.push_back({double(r), double(k)});
    for (int k = 0; k < 8; ++k) vb.push_back(uint16_t(r * 8 + k));
    c.SetOperand(r, 0, ToBytes(va));
    c.SetOperand(r, 1, ToBytes(vb));
  }
  c.RunOk();
  for (int r = 0; r < kParticipants; ++r) {
    std::vector<std::complex<double>> wa;
    std::vector<uint16_t> wb;
    for (int s = 0; s < 4; ++s) {
      wa.push_back({double(s), double(r)});
      wb.push_back(uint16_t(s * 8 + 2 * r));
      wb.push_back(uint16_t(s * 8 + 2 * r + 1));
    }
    EXPECT_EQ(c.ResultAs<std::complex<double>>(r, 0), wa);
    EXPECT_EQ(c.ResultAs<uint16_t>(r, 1), wb);
  }
}

// ---------------------------------------------------------------------------------------------
// collective_permute, collective_broadcast

TEST(CollectivePermuteTest, ReceiversGetTheSourceOthersZeros) {
  CollectiveParams p;
  p.kind = CollectiveKind::kCollectivePermute;
  p.source_target_pairs = {{0, 1}, {1, 2}, {2, 3}};
  const ArrayType t{ElementType::kF64, {2}};
  Collective c(p, {t}, {t});
  for (int r = 0; r < kParticipants; ++r) {
    c.SetOperand(r, 0, ToBytes(std::vector<double>{r + 0.5, -r - 0.5}));
  }
  c.RunOk();
  EXPECT_EQ(c.ResultAs<double>(0, 0), (std::vector<double>{0, 0}));
  for (int r = 1; r < kParticipants; ++r) {
    EXPECT_EQ(c.ResultAs<double>(r, 0), (std::vector<double>{r - 0.5, -r + 0.5}));
  }
}

TEST(CollectivePermuteTest, CycleAndSelfPair) {
  CollectiveParams p;
  p.kind = CollectiveKind::kCollectivePermute;
  p.source_target_pairs = {{3, 0}, {0, 3}, {1, 1}};
  const ArrayType t{ElementType::kPred, {3}};
  Collective c(p, {t}, {t});
  for (int r = 0; r < kParticipants; ++r) {
    c.SetOperand(r, 0, ToBytes(std::vector<uint8_t>{uint8_t(r & 1), uint8_t(r >> 1), 1}));
  }
  c.RunOk();
  EXPECT_EQ(c.ResultAs<uint8_t>(0, 0), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(c.ResultAs<uint8_t>(1, 0), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(c.ResultAs<uint8_t>(2, 0), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(c.ResultAs<uint8_t>(3, 0), (std::vector<uint8_t>{0, 0, 1}));
}

TEST(CollectiveBroadcastTest, FirstMemberOfEachGroupNonMembersGetZeros) {
  CollectiveParams p;
  p.kind = CollectiveKind::kCollectiveBroadcast;
  p.groups = {{2, 1}};
  const ArrayType a{ElementType::kS32, {1, 2}}, b{ElementType::kF16, {}};
  Collective c(p, {a, b}, {a, b});
  for (int r = 0; r < kParticipants; ++r) {
    c.SetOperand(r, 0, ToBytes(std::vector<int32_t>{2 * r + 1, 2 * r + 2}));
    c.SetOperand(r, 1, ToBytes(std::vector<uint16_t>{uint16_t(0x3C00 + r)}));
  }
  c.RunOk();
  const std::vector<int32_t> zeros = {0, 0}, from2 = {5, 6};
  EXPECT_EQ(c.ResultAs<int32_t>(0, 0), zeros);
  EXPECT_EQ(c.ResultAs<int32_t>(1, 0), from2);
  EXPECT_EQ(c.ResultAs<int32_t>(2, 0), from2);
  EXPECT_EQ(c.ResultAs<int32_t>(3, 0), zeros);
  EXPECT_EQ(c.ResultAs<uint16_t>(1, 1), (std::vector<uint16_t>{0x3C02}));
  EXPECT_EQ(c.ResultAs<uint16_t>(3, 1), (std::vector<uint16_t>{0}));

  p.groups = {{1, 0}, {3, 2}};
  Collective d(p, {a, b}, {a, b});
  for (int r = 0; r < kParticipants; ++r) {
    d.SetOperand(r, 0, ToBytes(std::vector<int32_t>{r, r}));
    d.SetOperand(r, 1, ToBytes(std::vector<uint16_t>{uint16_t(r)}));
  }
  d.RunOk();
  for (int r = 0; r < kParticipants; ++r) {
    const int source = r < 2 ? 1 : 3;
    EXPECT_EQ(d.ResultAs<int32_t>(r, 0), (std::vector<int32_t>{source, source}));
  }
}

// ---------------------------------------------------------------------------------------------
// Protocol: steps, aborts, one participant.

TEST(CollectiveProtocolTest, SeveralCollectivesInOneExecutionAdvanceTheStep) {
  Rendezvous rendezvous(kParticipants);
  CollectiveParams sum;
  sum.kind = CollectiveKind::kAllReduce;
  sum.reduction = Reduction(Combiner::kAdd, ElementType::kS32);
  CollectiveParams gather;
  gather.kind = CollectiveKind::kAllGather;
  const ArrayType one{ElementType::kS32, {1}}, four{ElementType::kS32, {4}};
  std::vector<std::vector<int32_t>> gathered(kParticipants, std::vector<int32_t>(4));
  std::vector<int64_t> steps(kParticipants, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kParticipants; ++r) {
    threads.emplace_back([&, r] {
      CollectiveContext context{r, kParticipants, &rendezvous, &steps[r]};
      int32_t value = r + 1, total = 0;
      for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(RunCollective(sum, context, {{&one, &value}}, {{&one, &total}}).ok());
        value = total;  // 10, 40, 160.
      }
      ASSERT_TRUE(
          RunCollective(gather, context, {{&one, &value}}, {{&four, gathered[r].data()}}).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kParticipants; ++r) {
    EXPECT_EQ(steps[r], 4);
    EXPECT_EQ(gathered[r], (std::vector<int32_t>{160, 160, 160, 160}));
  }
}

TEST(CollectiveProtocolTest, AnAbortedRendezvousReturnsItsError) {
  Rendezvous rendezvous(kParticipants);
  CollectiveParams p;
  p.kind = CollectiveKind::kAllGather;
  const ArrayType one{ElementType::kF32, {1}}, four{ElementType::kF32, {4}};
  std::vector<Status> statuses(kParticipants - 1);
  std::vector<std::thread> threads;
  for (int r = 0; r + 1 < kParticipants; ++r) {
    threads.emplace_back([&, r] {
      int64_t step = 0;
      float in = 1, out[4];
      CollectiveContext context{r, kParticipants, &rendezvous, &step};
      statuses[r] = RunCollective(p, context, {{&one, &in}}, {{&four, out}});
    });
  }
  // Participant 3 fails instead of joining: its executor aborts the rendezvous.
  rendezvous.Abort(Internal("device 3: out of memory"));
  for (std::thread& t : threads) t.join();
  for (const Status& s : statuses) {
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
    EXPECT_EQ(s.message(), "device 3: out of memory");
  }
}

TEST(CollectiveProtocolTest, OneParticipantNeedsNoRendezvous) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllReduce;
  p.reduction = Reduction(Combiner::kAdd, ElementType::kF32);
  const ArrayType t{ElementType::kF32, {2}};
  ASSERT_TRUE(CheckCollective(p, 1, {&t}, {&t}).ok());
  float in[2] = {1.5f, -2}, out[2] = {0, 0};
  int64_t step = 0;
  CollectiveContext context{0, 1, nullptr, &step};
  ASSERT_TRUE(RunCollective(p, context, {{&t, in}}, {{&t, out}}).ok());
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -2);
  EXPECT_EQ(step, 1);
  context.num_participants = 2;
  EXPECT_EQ(RunCollective(p, context, {{&t, in}}, {{&t, out}}).code(),
            StatusCode::kFailedPrecondition);
}

TEST(CollectiveProtocolTest, RunRefusesAContextTheParamsDoNotFit) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllGather;
  p.groups = {{0, 1}, {2, 3}};
  const ArrayType in{ElementType::kF32, {1}}, out{ElementType::kF32, {2}};
  float x = 0, y[2];
  int64_t step = 0;
  CollectiveContext context{0, 2, nullptr, &step};  // Groups name participants 2 and 3.
  EXPECT_ERROR_CONTAINS(RunCollective(p, context, {{&in, &x}}, {{&out, y}}),
                        "names participant 2");
  context.num_participants = 4;
  context.logical_id = 4;
  Rendezvous rendezvous(4);
  context.rendezvous = &rendezvous;
  EXPECT_ERROR_CONTAINS(RunCollective(p, context, {{&in, &x}}, {{&out, y}}),
                        "logical_id 4 (expected 0..3)");
}

// ---------------------------------------------------------------------------------------------
// Check refusals.

class CollectiveCheckTest : public ::testing::Test {
 protected:
  Status Check(int64_t participants = kParticipants) {
    ArrayTypes ops, res;
    for (const ArrayType& t : operands_) ops.push_back(&t);
    for (const ArrayType& t : results_) res.push_back(&t);
    return CheckCollective(p_, participants, ops, res);
  }
  void Use(CollectiveKind kind, std::vector<ArrayType> operands, std::vector<ArrayType> results) {
    p_ = CollectiveParams();
    p_.kind = kind;
    if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter) {
      p_.reduction = Reduction(Combiner::kAdd, operands[0].type);
    }
    operands_ = std::move(operands);
    results_ = std::move(results);
  }

  CollectiveParams p_;
  std::vector<ArrayType> operands_, results_;
};

const ArrayType kF32x4x4{ElementType::kF32, {4, 4}};

TEST_F(CollectiveCheckTest, CountsAndKind) {
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {});
  EXPECT_ERROR_CONTAINS(Check(), "all_reduce: got 1 operands and 0 results (expected as many "
                                 "results as operands, at least one)");
  Use(CollectiveKind::kAllGather, {}, {});
  EXPECT_ERROR_CONTAINS(Check(), "all_gather: got 0 operands");
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {kF32x4x4});
  p_.kind = static_cast<CollectiveKind>(17);
  EXPECT_ERROR_CONTAINS(Check(), "collective: kind 17 is not a CollectiveKind");
}

TEST_F(CollectiveCheckTest, Participants) {
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {kF32x4x4});
  EXPECT_TRUE(Check().ok()) << Check().ToString();
  EXPECT_ERROR_CONTAINS(Check(0), "num_participants 0 (expected >= 1)");
}

TEST_F(CollectiveCheckTest, GroupsMustPartitionTheParticipants) {
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {kF32x4x4});
  p_.groups = {{0, 1}, {2, 3}};
  EXPECT_TRUE(Check().ok());
  p_.groups = {{0, 1}, {2}};
  EXPECT_ERROR_CONTAINS(Check(), "participant 3 is in no group (expected groups that partition "
                                 "the 4 participants)");
  p_.groups = {{0, 1}, {2, 3, 4}};
  EXPECT_ERROR_CONTAINS(Check(), "group [2,3,4] names participant 4 (expected 0..3)");
  p_.groups = {{0, -1}, {2, 3}};
  EXPECT_ERROR_CONTAINS(Check(), "names participant -1");
  p_.groups = {{0, 1}, {1, 2, 3}};
  EXPECT_ERROR_CONTAINS(Check(), "participant 1 appears twice in groups");
  p_.groups = {{0, 1, 2, 3}, {}};
  EXPECT_ERROR_CONTAINS(Check(), "groups has an empty group");
  p_.groups = {{0}, {1, 2, 3}};  // Uneven groups are fine for all_reduce.
  EXPECT_TRUE(Check().ok());
  p_.source_target_pairs = {{0, 1}};
  EXPECT_ERROR_CONTAINS(Check(), "source_target_pairs is set (expected none");
}

TEST_F(CollectiveCheckTest, ShapeChangingKindsNeedGroupsOfOneSize) {
  Use(CollectiveKind::kAllGather, {kF32x4x4}, {ArrayType{ElementType::kF32, {8, 4}}});
  p_.groups = {{0, 1}, {2, 3}};
  EXPECT_TRUE(Check().ok());
  p_.groups = {{0}, {1, 2, 3}};
  EXPECT_ERROR_CONTAINS(Check(), "group [1,2,3] has 3 members but group [0] has 1 (expected "
                                 "groups of one size)");
}

TEST_F(CollectiveCheckTest, BroadcastGroupsMayLeaveParticipantsOut) {
  Use(CollectiveKind::kCollectiveBroadcast, {kF32x4x4}, {kF32x4x4});
  p_.groups = {{2, 1}};
  EXPECT_TRUE(Check().ok());
  p_.groups = {{2, 1}, {1}};
  EXPECT_ERROR_CONTAINS(Check(), "participant 1 appears twice in groups");
}

TEST_F(CollectiveCheckTest, PermutePairs) {
  Use(CollectiveKind::kCollectivePermute, {kF32x4x4}, {kF32x4x4});
  p_.source_target_pairs = {{0, 1}, {1, 0}};
  EXPECT_TRUE(Check().ok());
  p_.source_target_pairs = {{0, 1}, {0, 2}};
  EXPECT_ERROR_CONTAINS(Check(), "source_target_pairs (0, 2) repeats source 0 (expected unique "
                                 "sources)");
  p_.source_target_pairs = {{0, 1}, {2, 1}};
  EXPECT_ERROR_CONTAINS(Check(), "source_target_pairs (2, 1) repeats target 1 (expected unique "
                                 "targets)");
  p_.source_target_pairs = {{0, 4}};
  EXPECT_ERROR_CONTAINS(Check(), "source_target_pairs (0, 4) names a participant outside 0..3");
  p_.source_target_pairs = {{-1, 0}};
  EXPECT_ERROR_CONTAINS(Check(), "names a participant outside 0..3");
  p_.source_target_pairs = {};
  p_.groups = {{0, 1, 2, 3}};
  EXPECT_ERROR_CONTAINS(Check(), "groups has 1 groups (expected none: collective_permute uses "
                                 "source_target_pairs)");
}

TEST_F(CollectiveCheckTest, Dimensions) {
  Use(CollectiveKind::kAllGather, {kF32x4x4}, {kF32x4x4});
  p_.dimension = 2;
  EXPECT_ERROR_CONTAINS(Check(), "dimension (all_gather_dim) 2 is out of range for operand 0 "
                                 "f32[4,4] (expected 0 <= d < 2)");
  Use(CollectiveKind::kReduceScatter, {kF32x4x4}, {kF32x4x4});
  p_.dimension = -1;
  EXPECT_ERROR_CONTAINS(Check(), "dimension (scatter_dimension) -1 is out of range");
  Use(CollectiveKind::kAllToAll, {kF32x4x4}, {kF32x4x4});
  p_.split_count = 4;
  p_.dimension = 5;
  EXPECT_ERROR_CONTAINS(Check(), "dimension (split_dimension) 5 is out of range");
  p_.dimension = 0;
  p_.concat_dimension = 3;
  EXPECT_ERROR_CONTAINS(Check(), "concat_dimension 3 is out of range");
  const ArrayType scalar{ElementType::kF32, {}};
  Use(CollectiveKind::kAllGather, {scalar}, {scalar});
  EXPECT_ERROR_CONTAINS(Check(), "(expected 0 <= d < 0)");
}

TEST_F(CollectiveCheckTest, SizesDivisibleByTheGroup) {
  const ArrayType f32x6{ElementType::kF32, {6}};
  Use(CollectiveKind::kReduceScatter, {f32x6}, {f32x6});
  EXPECT_ERROR_CONTAINS(Check(), "operand 0 f32[6] has size 6 along scatter_dimension 0 "
                                 "(expected a multiple of the group size 4)");
  Use(CollectiveKind::kAllToAll, {f32x6}, {f32x6});
  p_.split_count = 4;
  EXPECT_ERROR_CONTAINS(Check(), "has size 6 along split_dimension 0 (expected a multiple of "
                                 "split_count 4)");
  p_.split_count = 2;
  EXPECT_ERROR_CONTAINS(Check(), "all_to_all: split_count 2 (expected the group size 4)");
}

TEST_F(CollectiveCheckTest, ResultTypes) {
  Use(CollectiveKind::kAllGather, {kF32x4x4}, {kF32x4x4});
  EXPECT_ERROR_CONTAINS(Check(), "all_gather: result 0 f32[4,4] (expected f32[16,4] for operand "
                                 "0 f32[4,4])");
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {ArrayType{ElementType::kF64, {4, 4}}});
  EXPECT_ERROR_CONTAINS(Check(), "result 0 f64[4,4] (expected f32[4,4]");
  Use(CollectiveKind::kCollectivePermute, {kF32x4x4}, {ArrayType{ElementType::kF32, {4}}});
  EXPECT_ERROR_CONTAINS(Check(), "collective_permute: result 0 f32[4] (expected f32[4,4]");
  Use(CollectiveKind::kReduceScatter, {kF32x4x4}, {kF32x4x4});
  EXPECT_ERROR_CONTAINS(Check(), "(expected f32[1,4] for operand 0 f32[4,4])");
}

TEST_F(CollectiveCheckTest, ElementTypesAndSizes) {
  Use(CollectiveKind::kAllGather, {ArrayType{ElementType::kS4, {4}}},
      {ArrayType{ElementType::kS4, {16}}});
  EXPECT_ERROR_CONTAINS(Check(), "operand 0 s4[4]: element type not supported");
  Use(CollectiveKind::kCollectiveBroadcast, {ArrayType{ElementType::kF32, {-1}}},
      {ArrayType{ElementType::kF32, {-1}}});
  EXPECT_ERROR_CONTAINS(Check(), "operand 0 f32[-1] has a negative dimension");
  Use(CollectiveKind::kCollectiveBroadcast,
      {ArrayType{ElementType::kF32, {int64_t{1} << 40, int64_t{1} << 30}}},
      {ArrayType{ElementType::kF32, {int64_t{1} << 40, int64_t{1} << 30}}});
  EXPECT_ERROR_CONTAINS(Check(), "is too large (expected fewer than 2^62 bytes)");
  Use(CollectiveKind::kCollectiveBroadcast, {kF32x4x4}, {kF32x4x4});
  ArrayTypes with_null = {nullptr};
  ArrayTypes res = {&kF32x4x4};
  EXPECT_ERROR_CONTAINS(CheckCollective(p_, 4, with_null, res), "operand 0 has a null type");
}

TEST_F(CollectiveCheckTest, TheReductionMustTakeTheOperandType) {
  Use(CollectiveKind::kAllReduce, {kF32x4x4}, {kF32x4x4});
  p_.reduction = Reduction(Combiner::kAdd, ElementType::kF64);
  EXPECT_ERROR_CONTAINS(Check(), "all_reduce: the reduction does not fit operand 0 f32[4,4]: ");
  Use(CollectiveKind::kReduceScatter, {kF32x4x4}, {ArrayType{ElementType::kF32, {1, 4}}});
  p_.reduction = Reduction(Combiner::kAdd, ElementType::kS32);
  EXPECT_ERROR_CONTAINS(Check(), "reduce_scatter: the reduction does not fit operand 0");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
