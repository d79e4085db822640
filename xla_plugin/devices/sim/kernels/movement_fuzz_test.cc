// Random params against Check, and Run on every accepted case with arrays allocated to their
// exact sizes: run under --config=asan-ubsan this shows that Run stays inside its arrays once
// Check passed (the executor's contract; a fuzzer feeds the kernels random programs too).
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/data_movement.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"

namespace pjrtkit {
namespace sim {
namespace {

// Random choices, deterministic per test.
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  bool OneIn(int n) { return Int(0, n - 1) == 0; }
  // A dimension size: mostly small, sometimes 0, rarely absurd.
  int64_t Dim() { return OneIn(40) ? Int(-2, int64_t{1} << 40) : Int(0, 4); }
  // A param value near the interesting range, rarely extreme.
  int64_t Param(int64_t lo, int64_t hi) {
    if (OneIn(50)) return OneIn(2) ? INT64_MAX : INT64_MIN;
    return Int(lo, hi);
  }
  std::vector<int64_t> Dims(int64_t rank) {
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = Dim();
    return dims;
  }
  std::vector<int64_t> Params(size_t n, int64_t lo, int64_t hi) {
    if (OneIn(20)) n = static_cast<size_t>(Int(0, 4));
    std::vector<int64_t> v(n);
    for (int64_t& x : v) x = Param(lo, hi);
    return v;
  }
  // A permutation of [0, n), sometimes broken.
  std::vector<int64_t> Permutation(int64_t n) {
    std::vector<int64_t> p(n);
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    std::shuffle(p.begin(), p.end(), engine_);
    if (n > 0 && OneIn(10)) p[Int(0, n - 1)] = Int(-1, n);
    return p;
  }
  // Increasing distinct values of [0, n), each kept with probability 1/2.
  std::vector<int64_t> Subset(int64_t n) {
    std::vector<int64_t> s;
    for (int64_t i = 0; i < n; ++i) {
      if (OneIn(2)) s.push_back(i);
    }
    return s;
  }
  ElementType Type() {
    static const ElementType kTypes[] = {
        ElementType::kPred, ElementType::kS8,    ElementType::kU16, ElementType::kF16,
        ElementType::kS32,  ElementType::kF32,   ElementType::kU64, ElementType::kF64,
        ElementType::kC64,  ElementType::kC128,  ElementType::kS4,  ElementType::kToken,
        ElementType::kBF16, ElementType::kF8E5M2};
    return kTypes[Int(0, sizeof(kTypes) / sizeof(kTypes[0]) - 1)];
  }
  ElementType IndexType() {
    static const ElementType kTypes[] = {ElementType::kS8,  ElementType::kU8,  ElementType::kS16,
                                         ElementType::kU16, ElementType::kS32, ElementType::kU32,
                                         ElementType::kS64, ElementType::kU64, ElementType::kF32};
    return kTypes[Int(0, sizeof(kTypes) / sizeof(kTypes[0]) - 1)];
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

ArrayType T(ElementType type, std::vector<int64_t> dims) {
  ArrayType t;
  t.type = type;
  t.dims = std::move(dims);
  return t;
}

// Arrays of exactly their byte sizes (random contents) for the accepted case's Run.
class Buffers {
 public:
  void* Make(const ArrayType& type, Random* random) {
    const int64_t bytes = type.byte_size();
    buffers_.emplace_back(new unsigned char[static_cast<size_t>(bytes)]);
    unsigned char* data = buffers_.back().get();
    for (int64_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(random->Int(0, 255));
    if (type.type == ElementType::kPred) {
      for (int64_t i = 0; i < bytes; ++i) data[i] &= 1;
    }
    return data;
  }

 private:
  std::vector<std::unique_ptr<unsigned char[]>> buffers_;
};

// Runs `run` on arrays of `operands` and `results` when `check` accepted them.
struct Outcome {
  int accepted = 0;
  int refused = 0;
};

bool Small(const ArrayTypes& types) {
  for (const ArrayType* t : types) {
    if (t->byte_size() > (int64_t{1} << 20)) return false;
  }
  return true;
}

void RunIfAccepted(const Status& check, const ArrayTypes& operands, const ArrayTypes& results,
                   Random* random, Outcome* outcome,
                   const std::function<Status(const std::vector<ArrayArg>&,
                                              const std::vector<ArrayResult>&)>& run) {
  if (!check.ok()) {
    // The kernels refuse params with INVALID_ARGUMENT; the engine refuses comparator bodies it
    // cannot run with UNIMPLEMENTED.
    EXPECT_TRUE(check.code() == StatusCode::kInvalidArgument ||
                check.code() == StatusCode::kUnimplemented)
        << check.ToString();
    EXPECT_FALSE(check.message().empty());
    ++outcome->refused;
    return;
  }
  if (!Small(operands) || !Small(results)) return;
  ++outcome->accepted;
  Buffers buffers;
  std::vector<ArrayArg> args;
  std::vector<ArrayResult> outs;
  for (const ArrayType* t : operands) args.push_back(ArrayArg{t, buffers.Make(*t, random)});
  for (const ArrayType* t : results) outs.push_back(ArrayResult{t, buffers.Make(*t, random)});
  const Status status = run(args, outs);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

constexpr int kIterations = 5000;

bool Near(int64_t x) { return x > -100 && x < 100; }

TEST(MovementFuzzTest, DataMovement) {
  Random random(48);
  Outcome outcome;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    const int64_t rank = random.Int(0, 4);
    const ElementType type = random.OneIn(10) ? random.Type() : ElementType::kF32;
    const ArrayType operand = T(type, random.Dims(rank));
    const int op = static_cast<int>(random.Int(0, 7));
    std::vector<int64_t> rdims = operand.dims;
    switch (op) {
      case 0: {  // transpose
        TransposeParams p{random.Permutation(rank)};
        for (int64_t i = 0; i < rank && i < static_cast<int64_t>(p.permutation.size()); ++i) {
          const int64_t src = p.permutation[i];
          rdims[i] = src >= 0 && src < rank ? operand.dims[src] : 1;
        }
        const ArrayType result = T(random.OneIn(20) ? random.Type() : type, rdims);
        RunIfAccepted(CheckTranspose(p, {&operand}, {&result}), {&operand}, {&result}, &random,
                      &outcome, [&](auto& a, auto& r) { return RunTranspose(p, a, r); });
        break;
      }
      case 1: {  // slice
        SliceParams p{random.Params(rank, -1, 5), random.Params(rank, -1, 6),
                      random.Params(rank, 0, 3)};
        for (int64_t k = 0; k < rank; ++k) {
          if (k < static_cast<int64_t>(p.start.size()) &&
              k < static_cast<int64_t>(p.limit.size()) &&
              k < static_cast<int64_t>(p.strides.size()) && Near(p.strides[k]) &&
              p.strides[k] > 0 && Near(p.start[k]) && Near(p.limit[k]) &&
              p.limit[k] >= p.start[k]) {
            rdims[k] = (p.limit[k] - p.start[k] + p.strides[k] - 1) / p.strides[k];
          }
        }
        const ArrayType result = T(type, rdims);
        RunIfAccepted(CheckSlice(p, {&operand}, {&result}), {&operand}, {&result}, &random,
                      &outcome, [&](auto& a, auto& r) { return RunSlice(p, a, r); });
        break;
      }
      case 2:
      case 3: {  // dynamic_slice, dynamic_update_slice
        const ElementType index_type = random.IndexType();
        std::vector<ArrayType> indices;
        const int64_t count = random.OneIn(15) ? random.Int(0, 5) : rank;
        for (int64_t k = 0; k < count; ++k) indices.push_back(T(index_type, {}));
        std::vector<int64_t> sizes = random.Params(rank, -1, 5);
        ArrayTypes operands = {&operand};
        ArrayType update;
        if (op == 3) {
          update = T(type, sizes);
          operands.push_back(&update);
        }
        for (const ArrayType& i : indices) operands.push_back(&i);
        if (op == 2) {
          const ArrayType result = T(type, sizes);
          DynamicSliceParams p{sizes};
          RunIfAccepted(CheckDynamicSlice(p, operands, {&result}), operands, {&result}, &random,
                        &outcome, [&](auto& a, auto& r) { return RunDynamicSlice(p, a, r); });
        } else {
          const ArrayType result = operand;
          RunIfAccepted(CheckDynamicUpdateSlice({}, operands, {&result}), operands, {&result},
                        &random, &outcome,
                        [&](auto& a, auto& r) { return RunDynamicUpdateSlice({}, a, r); });
        }
        break;
      }
      case 4: {  // concatenate
        const int64_t dim = random.Int(-1, rank);
        std::vector<ArrayType> parts;
        const int64_t n = random.Int(0, 3);
        for (int64_t i = 0; i < n; ++i) {
          ArrayType part = operand;
          if (dim >= 0 && dim < rank) part.dims[dim] = random.Int(0, 3);
          parts.push_back(part);
        }
        ArrayTypes operands;
        for (const ArrayType& part : parts) operands.push_back(&part);
        if (dim >= 0 && dim < rank) {
          rdims[dim] = 0;
          for (const ArrayType& part : parts) rdims[dim] += part.dims[dim];
        }
        const ArrayType result = T(type, rdims);
        ConcatenateParams p{dim};
        RunIfAccepted(CheckConcatenate(p, operands, {&result}), operands, {&result}, &random,
                      &outcome, [&](auto& a, auto& r) { return RunConcatenate(p, a, r); });
        break;
      }
      case 5: {  // pad
        PadParams p{random.Params(rank, -4, 3), random.Params(rank, -4, 3),
                    random.Params(rank, -1, 3)};
        for (int64_t k = 0; k < rank; ++k) {
          if (k < static_cast<int64_t>(p.low.size()) && k < static_cast<int64_t>(p.high.size()) &&
              k < static_cast<int64_t>(p.interior.size()) && operand.dims[k] < 100 &&
              Near(p.low[k]) && Near(p.high[k]) && Near(p.interior[k])) {
            rdims[k] = operand.dims[k] + p.low[k] + p.high[k] +
                       (operand.dims[k] > 0 ? (operand.dims[k] - 1) * p.interior[k] : 0);
          }
        }
        const ArrayType value = T(random.OneIn(20) ? random.Type() : type, {});
        const ArrayType result = T(type, rdims);
        RunIfAccepted(CheckPad(p, {&operand, &value}, {&result}), {&operand, &value}, {&result},
                      &random, &outcome, [&](auto& a, auto& r) { return RunPad(p, a, r); });
        break;
      }
      case 6: {  // reverse
        ReverseParams p{random.Params(random.Int(0, rank), -1, rank)};
        const ArrayType result = operand;
        RunIfAccepted(CheckReverse(p, {&operand}, {&result}), {&operand}, {&result}, &random,
                      &outcome, [&](auto& a, auto& r) { return RunReverse(p, a, r); });
        break;
      }
      default: {  // copy
        int64_t count = 1;
        for (int64_t d : operand.dims) count = Near(d) && Near(count) ? count * d : 1;
        std::vector<int64_t> dims = {count};
        if (random.OneIn(5)) dims[0] += 1;
        const ArrayType result = T(type, dims);
        RunIfAccepted(CheckCopy({&operand}, {&result}), {&operand}, {&result}, &random, &outcome,
                      [&](auto& a, auto& r) { return RunCopy(a, r); });
      }
    }
  }
  EXPECT_GT(outcome.accepted, kIterations / 4);
  EXPECT_GT(outcome.refused, kIterations / 10);
}

TEST(MovementFuzzTest, Gather) {
  Random random(4848);
  Outcome outcome;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    const int64_t rank = random.Int(0, 4);
    const ArrayType operand = T(ElementType::kS16, random.Dims(rank));
    GatherParams p;
    // Operand dimensions: batching, collapsed (in start_index_map), or offset.
    std::vector<int64_t> role(rank);
    for (int64_t d = 0; d < rank; ++d) role[d] = random.Int(0, 2);
    const int64_t batch_rank = random.Int(0, 2);
    const int64_t num_batching = std::count(role.begin(), role.end(), 0);
    const int64_t indices_rank = batch_rank + num_batching + 1;
    p.index_vector_dim = random.OneIn(6) ? indices_rank : random.Int(0, indices_rank - 1);
    std::vector<int64_t> indices_dims(indices_rank, -1);
    std::vector<int64_t> free_dims;
    for (int64_t k = 0; k < indices_rank; ++k) {
      if (k != p.index_vector_dim) free_dims.push_back(k);
    }
    std::shuffle(free_dims.begin(), free_dims.end(), random.engine());
    size_t next_free = 0;
    for (int64_t d = 0; d < rank; ++d) {
      p.slice_sizes.push_back(role[d] == 2 ? random.Int(0, std::max<int64_t>(operand.dims[d], 0))
                                           : random.Int(0, 1));
      if (role[d] == 0 && next_free < free_dims.size()) {
        p.operand_batching_dims.push_back(d);
        p.start_indices_batching_dims.push_back(free_dims[next_free]);
        indices_dims[free_dims[next_free++]] = operand.dims[d];
      } else if (role[d] == 1) {
        p.collapsed_slice_dims.push_back(d);
        p.start_index_map.push_back(d);
      } else {
        if (random.OneIn(2)) p.start_index_map.push_back(d);
      }
    }
    std::shuffle(p.start_index_map.begin(), p.start_index_map.end(), random.engine());
    for (int64_t k = 0; k < indices_rank; ++k) {
      if (k == p.index_vector_dim) {
        indices_dims[k] = static_cast<int64_t>(p.start_index_map.size());
      } else if (indices_dims[k] < 0) {
        indices_dims[k] = random.Int(0, 3);
      }
    }
    if (p.index_vector_dim == indices_rank) indices_dims.pop_back();
    if (random.OneIn(15) && rank > 0) p.slice_sizes[random.Int(0, rank - 1)] += 1;
    if (random.OneIn(15)) p.index_vector_dim = random.Int(-1, indices_rank + 1);
    // The result: batch dims (indices without index_vector_dim) then offset dims, offset_dims
    // placed at the end.
    std::vector<int64_t> rdims;
    for (size_t k = 0; k < indices_dims.size(); ++k) {
      if (static_cast<int64_t>(k) != p.index_vector_dim) rdims.push_back(indices_dims[k]);
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (role[d] == 2 ||
          (role[d] == 0 && std::find(p.operand_batching_dims.begin(), p.operand_batching_dims.end(),
                                     d) == p.operand_batching_dims.end())) {
        p.offset_dims.push_back(static_cast<int64_t>(rdims.size()));
        rdims.push_back(p.slice_sizes[d]);
      }
    }
    const ArrayType indices = T(random.IndexType(), indices_dims);
    const ArrayType result = T(ElementType::kS16, rdims);
    RunIfAccepted(CheckGather(p, {&operand, &indices}, {&result}), {&operand, &indices}, {&result},
                  &random, &outcome, [&](auto& a, auto& r) { return RunGather(p, a, r); });
  }
  EXPECT_GT(outcome.accepted, kIterations / 4);
  EXPECT_GT(outcome.refused, kIterations / 20);
}

TEST(MovementFuzzTest, SortAndRng) {
  Random random(480);
  Outcome outcome;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    if (random.OneIn(2)) {
      const ArrayType state = T(ElementType::kU64, {random.Int(1, 4)});
      const ArrayType bits =
          T(random.OneIn(3) ? random.Type() : ElementType::kU32, random.Dims(random.Int(0, 3)));
      RngBitGeneratorParams p{static_cast<RngAlgorithm>(random.Int(0, 3))};
      RunIfAccepted(CheckRngBitGenerator(p, {&state}, {&state, &bits}), {&state}, {&state, &bits},
                    &random, &outcome,
                    [&](auto& a, auto& r) { return RunRngBitGenerator(p, a, r); });
      continue;
    }
    const int64_t rank = random.Int(0, 3);
    const std::vector<int64_t> dims = random.Dims(rank);
    const int64_t n = random.Int(1, 3);
    std::vector<ArrayType> types;
    for (int64_t i = 0; i < n; ++i) {
      const ElementType t = random.OneIn(2) ? ElementType::kF32 : random.Type();
      types.push_back(T(t, dims));
    }
    SortParams p;
    p.dimension = random.Int(-rank - 1, rank);
    p.is_stable = random.OneIn(2);
    // Body: lhs0 < rhs0 (FLOAT), inputs of the operands' types.
    for (const ArrayType& t : types) {
      p.comparator.body.inputs.push_back(EwInput{t.type, {}});
      p.comparator.body.inputs.push_back(EwInput{t.type, {}});
    }
    EwStep lhs{EwOp::kInput, types[0].type}, rhs{EwOp::kInput, types[0].type};
    rhs.attr = 1;
    EwStep less{EwOp::kCompare, ElementType::kPred, types[0].type, {0, 1, -1}};
    less.attr = static_cast<int64_t>(ComparisonDirection::kLt) |
                (static_cast<int64_t>(ComparisonType::kTotalOrder) << 8);
    p.comparator.body.steps = {lhs, rhs, less};
    p.comparator.body.outputs = {2};
    const int64_t num_keys = random.Int(0, 2);
    for (int64_t k = 0; k < num_keys; ++k) {
      SortKey key;
      key.operand = static_cast<int32_t>(random.Int(-1, n));
      key.direction = random.OneIn(2) ? ComparisonDirection::kLt : ComparisonDirection::kGt;
      key.type = static_cast<ComparisonType>(random.Int(0, 4));
      key.canonicalize = random.OneIn(3);
      p.comparator.keys.push_back(key);
    }
    ArrayTypes operands;
    for (const ArrayType& t : types) operands.push_back(&t);
    RunIfAccepted(CheckSort(p, operands, operands), operands, operands, &random, &outcome,
                  [&](auto& a, auto& r) { return RunSort(p, a, r); });
  }
  EXPECT_GT(outcome.accepted, kIterations / 10);
  EXPECT_GT(outcome.refused, kIterations / 10);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
