// Random and mutated params for the four reduction kernels: Check either refuses them with
// INVALID_ARGUMENT or Run completes (returns OK) on arrays of those types. Run under
// --config=asan-ubsan this also shows Run never touches memory outside the arrays.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/testdata/reduction_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::Buffer;

// Arrays larger than this are only checked, not run.
constexpr int64_t kMaxRunElements = 1 << 14;

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  int64_t Int(int64_t lo, int64_t hi) {  // Uniform in [lo, hi].
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Int(0, 99) < percent; }

  // Mostly small values, sometimes out of range or extreme.
  int64_t Param(int64_t lo, int64_t hi) {
    if (Chance(4)) return Int(-3, -1);
    if (Chance(2)) return (int64_t{1} << Int(20, 62)) - Int(0, 1);
    return Int(lo, hi);
  }

  std::vector<int64_t> Dims(int max_rank) {
    std::vector<int64_t> dims(Int(0, max_rank));
    for (int64_t& d : dims) d = Chance(10) ? 0 : Int(1, 4);
    return dims;
  }

  ElementType Type() {
    static const ElementType kTypes[] = {
        ElementType::kF32,  ElementType::kF32, ElementType::kS32,      ElementType::kPred,
        ElementType::kBF16, ElementType::kU8,  ElementType::kS64,      ElementType::kF64,
        ElementType::kC64,  ElementType::kF16, ElementType::kF8E4M3FN, ElementType::kS4};
    return kTypes[Int(0, 11)];
  }

  // A body of 2n parameters of `types` (twice) returning n values, sometimes mistyped.
  ScalarComputation Body(const std::vector<ElementType>& types) {
    const size_t n = types.size();
    ScalarComputation c;
    std::vector<ElementType> params(types);
    if (Chance(5)) params[Int(0, n - 1)] = Type();
    for (int copy = 0; copy < 2; ++copy) {
      for (ElementType t : params) c.body.inputs.push_back(EwInput{t, {}});
    }
    for (size_t i = 0; i < 2 * n; ++i) {
      EwStep in{EwOp::kInput, c.body.inputs[i].type};
      in.attr = static_cast<int64_t>(i);
      c.body.steps.push_back(in);
    }
    static const std::pair<EwOp, Combiner> kOps[] = {{EwOp::kAdd, Combiner::kAdd},
                                                     {EwOp::kMaximum, Combiner::kMaximum},
                                                     {EwOp::kMultiply, Combiner::kMultiply},
                                                     {EwOp::kOr, Combiner::kOr},
                                                     {EwOp::kInput, Combiner::kReplace}};
    const auto& [op, combiner] = kOps[Int(0, 4)];
    for (size_t i = 0; i < n; ++i) {
      if (op == EwOp::kInput) {
        c.body.outputs.push_back(static_cast<int32_t>(n + i));
        continue;
      }
      EwStep s{op, params[i]};
      s.operands[0] = static_cast<int32_t>(i);
      s.operands[1] = static_cast<int32_t>(n + i);
      c.body.outputs.push_back(static_cast<int32_t>(c.body.steps.size()));
      c.body.steps.push_back(s);
    }
    c.combiner = Chance(50) ? combiner : Combiner::kGeneric;
    if (Chance(3)) c.combiner = static_cast<Combiner>(Int(0, 8));
    return c;
  }

  // Random bytes, pred kept 0/1.
  void Fill(Buffer* b) {
    unsigned char* p = static_cast<unsigned char*>(b->data());
    for (int64_t k = 0; k < b->bytes(); ++k) p[k] = static_cast<unsigned char>(rng_());
    const ElementType t = b->type().type;
    if (t == ElementType::kPred) {
      for (int64_t k = 0; k < b->bytes(); ++k) p[k] &= 1;
    }
    const bool integer = t == ElementType::kS8 || t == ElementType::kS32 ||
                         t == ElementType::kS64 || t == ElementType::kU64 || t == ElementType::kU8;
    if (integer && Chance(70)) {  // Mostly small: indices in and near bounds.
      for (int64_t k = 0; k < b->type().num_elements(); ++k) {
        testing::SetElement(t, b->data(), k, static_cast<double>(Int(0, 8)) - 2);
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

// Whether every array is small enough to allocate and run.
bool Runnable(const std::vector<ArrayType>& types) {
  for (const ArrayType& t : types) {
    if (t.dims.size() > 8) return false;
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 0 || d > kMaxRunElements) return false;
      n *= d;
      if (n > kMaxRunElements) return false;
    }
  }
  return true;
}

// Checks; when accepted and small, runs on random data. Returns whether it ran.
template <typename CheckFn, typename RunFn>
bool CheckAndRun(Fuzzer* f, const std::vector<ArrayType>& operands,
                 const std::vector<ArrayType>& results, CheckFn check, RunFn run, int* accepted) {
  ArrayTypes operand_types, result_types;
  for (const ArrayType& t : operands) operand_types.push_back(&t);
  for (const ArrayType& t : results) result_types.push_back(&t);
  const Status status = check(operand_types, result_types);
  if (!status.ok()) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_FALSE(status.message().empty());
    return false;
  }
  ++*accepted;
  std::vector<ArrayType> all(operands);
  all.insert(all.end(), results.begin(), results.end());
  if (!Runnable(all)) return false;
  std::vector<Buffer> in, out;
  for (const ArrayType& t : operands) {
    in.emplace_back(t.type, t.dims);
    f->Fill(&in.back());
  }
  for (const ArrayType& t : results) out.emplace_back(t.type, t.dims);
  const Status ran = run(testing::Args(in), testing::Results(out));
  EXPECT_TRUE(ran.ok()) << ran.ToString();
  return true;
}

TEST(ReductionFuzzTest, Reduce) {
  Fuzzer f(1);
  int accepted = 0, ran = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t n = f.Chance(70) ? 1 : 2;
    const std::vector<int64_t> dims = f.Dims(4);
    ReduceParams p;
    for (int64_t j = f.Int(0, 3); j > 0; --j) p.dimensions.push_back(f.Param(0, 4));
    std::vector<ArrayType> operands, results;
    std::vector<ElementType> types;
    for (size_t i = 0; i < n; ++i) types.push_back(f.Type());
    std::vector<int64_t> kept;
    for (size_t d = 0; d < dims.size(); ++d) {
      bool reduced = false;
      for (int64_t r : p.dimensions) reduced = reduced || r == static_cast<int64_t>(d);
      if (!reduced) kept.push_back(dims[d]);
    }
    if (f.Chance(5)) kept = f.Dims(3);
    for (size_t i = 0; i < n; ++i) operands.push_back(ArrayType{types[i], dims});
    for (size_t i = 0; i < n; ++i) {
      operands.push_back(ArrayType{f.Chance(3) ? f.Type() : types[i], {}});
      results.push_back(ArrayType{f.Chance(3) ? f.Type() : types[i], kept});
    }
    p.body = f.Body(types);
    ran += CheckAndRun(
        &f, operands, results,
        [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckReduce(p, o, r); },
        [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
          return RunReduce(p, o, r);
        },
        &accepted);
  }
  EXPECT_GT(accepted, 600);
  EXPECT_GT(ran, 600);
}

// Output dims by StableHLO's num_windows, from params that passed no check (may be anything).
std::vector<int64_t> Windows(const std::vector<int64_t>& dims, const ReduceWindowParams& p) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    auto at = [&](const std::vector<int64_t>& v, int64_t fallback) {
      return d < v.size() ? v[d] : fallback;
    };
    const __int128 w = at(p.window_dimensions, 1), s = at(p.window_strides, 1);
    const __int128 bd = at(p.base_dilations, 1), wd = at(p.window_dilations, 1);
    const __int128 lo = d < p.padding.size() ? p.padding[d].first : 0;
    const __int128 hi = d < p.padding.size() ? p.padding[d].second : 0;
    if (w < 1 || s < 1 || bd < 1 || wd < 1) {
      out.push_back(1);
      continue;
    }
    const __int128 dilated = dims[d] == 0 ? 0 : (dims[d] - 1) * bd + 1;
    const __int128 padded = dilated + lo + hi;
    const __int128 span = (w - 1) * wd + 1;
    const __int128 windows = (padded <= 0 || span > padded) ? 0 : (padded - span) / s + 1;
    out.push_back(windows > (int64_t{1} << 40) ? (int64_t{1} << 40)
                                               : static_cast<int64_t>(windows));
  }
  return out;
}

TEST(ReductionFuzzTest, ReduceWindow) {
  Fuzzer f(2);
  int accepted = 0, ran = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t n = f.Chance(75) ? 1 : 2;
    const std::vector<int64_t> dims = f.Dims(3);
    const size_t rank = dims.size() + (f.Chance(3) ? 1 : 0);
    ReduceWindowParams p;
    for (size_t d = 0; d < rank; ++d) {
      p.window_dimensions.push_back(f.Param(1, 4));
      if (f.Chance(80)) p.window_strides.push_back(f.Param(1, 3));
      if (f.Chance(60)) p.base_dilations.push_back(f.Param(1, 3));
      if (f.Chance(60)) p.window_dilations.push_back(f.Param(1, 3));
      if (f.Chance(80)) p.padding.push_back({f.Param(-2, 4), f.Param(-2, 4)});
    }
    if (p.window_strides.size() != rank) p.window_strides.clear();
    if (p.base_dilations.size() != rank) p.base_dilations.clear();
    if (p.window_dilations.size() != rank) p.window_dilations.clear();
    if (p.padding.size() != rank) p.padding.clear();
    std::vector<int64_t> out_dims = Windows(dims, p);
    if (f.Chance(5) && !out_dims.empty()) out_dims[0] += 1;
    std::vector<ElementType> types;
    for (size_t i = 0; i < n; ++i) types.push_back(f.Type());
    std::vector<ArrayType> operands, results;
    for (size_t i = 0; i < n; ++i) operands.push_back(ArrayType{types[i], dims});
    for (size_t i = 0; i < n; ++i) {
      operands.push_back(ArrayType{types[i], {}});
      results.push_back(ArrayType{types[i], out_dims});
    }
    p.body = f.Body(types);
    ran += CheckAndRun(
        &f, operands, results,
        [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckReduceWindow(p, o, r); },
        [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
          return RunReduceWindow(p, o, r);
        },
        &accepted);
  }
  EXPECT_GT(accepted, 500);
  EXPECT_GT(ran, 500);
}

TEST(ReductionFuzzTest, SelectAndScatter) {
  Fuzzer f(3);
  int accepted = 0, ran = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::vector<int64_t> dims = f.Dims(3);
    const ElementType type = f.Chance(90) ? ElementType::kF32 : f.Type();
    ReduceWindowParams w;  // Reuses Windows() with no dilations.
    SelectAndScatterParams p;
    for (size_t d = 0; d < dims.size() + (f.Chance(3) ? 1 : 0); ++d) {
      p.window_dimensions.push_back(f.Param(1, 3));
      p.window_strides.push_back(f.Param(1, 3));
      p.padding.push_back({f.Param(-1, 2), f.Param(-1, 2)});
    }
    w.window_dimensions = p.window_dimensions;
    w.window_strides = p.window_strides;
    w.padding = p.padding;
    std::vector<int64_t> source_dims = Windows(dims, w);
    if (f.Chance(5) && !source_dims.empty()) source_dims.back() += 1;
    p.select = testing::CompareComputation(static_cast<ComparisonDirection>(f.Int(0, 5)),
                                           f.Chance(95) ? type : f.Type());
    p.scatter = f.Body({type});
    const std::vector<ArrayType> operands = {ArrayType{type, dims}, ArrayType{type, source_dims},
                                             ArrayType{type, {}}};
    const std::vector<ArrayType> results = {ArrayType{type, dims}};
    ran += CheckAndRun(
        &f, operands, results,
        [&](const ArrayTypes& o, const ArrayTypes& r) { return CheckSelectAndScatter(p, o, r); },
        [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& r) {
          return RunSelectAndScatter(p, o, r);
        },
        &accepted);
  }
  EXPECT_GT(accepted, 600);
  EXPECT_GT(ran, 600);
}

TEST(ReductionFuzzTest, Scatter) {
  Fuzzer f(4);
  int accepted = 0, ran = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    // A valid shape family, then mutations: x[B, R, C] with indices [B?, N, V] into R (and C).
    ScatterParams p;
    const bool batched = f.Chance(30);
    const bool points = f.Chance(40);  // Index vectors of size 2 (R and C) or 1 (R).
    const int64_t b = f.Int(1, 3), r = f.Int(1, 5), c = f.Int(1, 4), n = f.Int(0, 4);
    std::vector<int64_t> x_dims = {r, c}, idx_dims = {n, points ? 2 : 1}, upd_dims = {n};
    p.inserted_window_dims = points ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
    p.scatter_dims_to_operand_dims = points ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
    if (!points) {
      p.update_window_dims = {1};
      upd_dims.push_back(f.Int(0, c));
    }
    p.index_vector_dim = 1;
    if (batched) {
      x_dims.insert(x_dims.begin(), b);
      idx_dims.insert(idx_dims.begin(), b);
      upd_dims.insert(upd_dims.begin(), b);
      for (int64_t& d : p.inserted_window_dims) ++d;
      for (int64_t& d : p.scatter_dims_to_operand_dims) ++d;
      for (int64_t& d : p.update_window_dims) ++d;
      p.input_batching_dims = {0};
      p.scatter_indices_batching_dims = {0};
      p.index_vector_dim = 2;
    }
    // Mutations.
    std::vector<int64_t>* fields[] = {&p.update_window_dims, &p.inserted_window_dims,
                                      &p.input_batching_dims, &p.scatter_indices_batching_dims,
                                      &p.scatter_dims_to_operand_dims};
    for (int m = static_cast<int>(f.Int(0, 2)); m > 0; --m) {
      switch (f.Int(0, 5)) {
        case 0: {
          std::vector<int64_t>* v = fields[f.Int(0, 4)];
          if (v->empty() || f.Chance(30)) {
            v->push_back(f.Param(0, 3));
          } else {
            (*v)[f.Int(0, v->size() - 1)] = f.Param(0, 3);
          }
          break;
        }
        case 1:
          p.index_vector_dim = f.Param(0, 3);
          break;
        case 2:
          x_dims[f.Int(0, x_dims.size() - 1)] = f.Param(0, 5);
          break;
        case 3:
          upd_dims[f.Int(0, upd_dims.size() - 1)] = f.Param(0, 5);
          break;
        case 4:
          idx_dims[f.Int(0, idx_dims.size() - 1)] = f.Param(0, 3);
          break;
        default: {
          std::vector<int64_t>* v = fields[f.Int(0, 4)];
          if (!v->empty()) v->pop_back();
          break;
        }
      }
    }
    const ElementType type = f.Chance(90) ? ElementType::kF32 : f.Type();
    static const ElementType kIndexTypes[] = {ElementType::kS32, ElementType::kS8,
                                              ElementType::kU64, ElementType::kS64,
                                              ElementType::kF32};
    const ElementType index_type = kIndexTypes[f.Int(0, 4)];
    p.update = f.Body({type});
    p.unique_indices = f.Chance(30);
    const std::vector<ArrayType> operands = {
        ArrayType{type, x_dims}, ArrayType{index_type, idx_dims}, ArrayType{type, upd_dims}};
    const std::vector<ArrayType> results = {ArrayType{type, x_dims}};
    ran += CheckAndRun(
        &f, operands, results,
        [&](const ArrayTypes& o, const ArrayTypes& res) { return CheckScatter(p, o, res); },
        [&](const std::vector<ArrayArg>& o, const std::vector<ArrayResult>& res) {
          return RunScatter(p, o, res);
        },
        &accepted);
  }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(ran, 1000);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
