// StableHLO reduce: pairwise over the reduced elements (typed loops for combiners with one operand,
// else a tree of engine calls), the init value applied once per result element.
#include <algorithm>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/reduction_util.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"
#include "xla_plugin/devices/sim/kernels/typed_combiner.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr char kOp[] = "reduce";

// The operand's dimensions merged into alternating groups of reduced and kept dimensions (size-1
// dimensions dropped); every size is >= 2 once K and M are not 0.
struct ReduceLayout {
  std::vector<int64_t> sizes;  // Size of each group, outermost first.
  std::vector<bool> reduced;   // Whether each group is reduced.
  int64_t k = 1;               // Reduced elements per result element.
  int64_t m = 1;               // Result elements.

  // Whether the groups are exactly [kept...][reduced] with one reduced group innermost.
  bool ReducedInnermostOnce() const {
    return CountReduced() <= 1 && (reduced.empty() || reduced.back());
  }
  // Whether the innermost group is a kept one.
  bool KeptInnermost() const { return !reduced.empty() && !reduced.back(); }
  // Number of reduced groups.
  int CountReduced() const {
    return static_cast<int>(std::count(reduced.begin(), reduced.end(), true));
  }
  // The permutation of groups putting reduced groups first (reduced_first) or last.
  std::vector<int64_t> Permutation(bool reduced_first) const {
    std::vector<int64_t> perm;
    for (int pass = 0; pass < 2; ++pass) {
      const bool want = (pass == 0) == reduced_first;
      for (size_t g = 0; g < sizes.size(); ++g) {
        if (reduced[g] == want) perm.push_back(static_cast<int64_t>(g));
      }
    }
    return perm;
  }
};

ReduceLayout MakeLayout(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduce) {
  ReduceLayout layout;
  std::vector<bool> is_reduced(dims.size(), false);
  for (int64_t d : reduce) is_reduced[d] = true;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (is_reduced[d]) {
      layout.k *= dims[d];
    } else {
      layout.m *= dims[d];
    }
    if (dims[d] == 1) continue;
    if (layout.sizes.empty() || layout.reduced.back() != is_reduced[d]) {
      layout.sizes.push_back(dims[d]);
      layout.reduced.push_back(is_reduced[d]);
    } else {
      layout.sizes.back() *= dims[d];
    }
  }
  return layout;
}

Status CheckShapes(const ReduceParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results) {
  const size_t n = results.size();
  if (n == 0) return InvalidArgument("reduce: no results (expected one per input, at least 1)");
  if (operands.size() != 2 * n) {
    return InvalidArgument("reduce: " + std::to_string(operands.size()) +
                           " operands (expected 2 x " + std::to_string(n) +
                           " results: the inputs, then their init values)");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "operand " + std::to_string(i), operands[i]));
  }
  for (size_t i = 0; i < n; ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "result " + std::to_string(i), results[i]));
  }
  const std::vector<int64_t>& dims = operands[0]->dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t j = 0; j < params.dimensions.size(); ++j) {
    const int64_t d = params.dimensions[j];
    if (d < 0 || d >= rank) {
      return InvalidArgument("reduce: dimensions[" + std::to_string(j) +
                             "] = " + std::to_string(d) + " (expected 0 <= it < rank " +
                             std::to_string(rank) + " of " + operands[0]->ToString() + ")");
    }
    if (seen[d]) {
      return InvalidArgument("reduce: dimensions " + DimsToString(params.dimensions) + " repeat " +
                             std::to_string(d) + " (expected unique dimensions)");
    }
    seen[d] = true;
  }
  std::vector<int64_t> kept;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!seen[d]) kept.push_back(dims[d]);
  }
  for (size_t i = 0; i < n; ++i) {
    const ArrayType* input = operands[i];
    const ArrayType* init = operands[n + i];
    if (input->dims != dims) {
      return InvalidArgument(Describe(kOp, "input " + std::to_string(i), input) +
                             ": shape differs from input 0 (expected " + DimsToString(dims) + ")");
    }
    if (!init->dims.empty() || init->type != input->type) {
      return InvalidArgument(Describe(kOp, "init value " + std::to_string(i), init) +
                             ": expected a " + ElementTypeName(input->type) + " scalar");
    }
    if (results[i]->dims != kept) {
      return InvalidArgument(Describe(kOp, "result " + std::to_string(i), results[i]) +
                             ": expected dimensions " + DimsToString(kept) +
                             " (the input's without the reduced ones)");
    }
    if (!IsPromotable(input->type, results[i]->type)) {
      return InvalidArgument(Describe(kOp, "result " + std::to_string(i), results[i]) +
                             ": input type " + ElementTypeName(input->type) +
                             " is not promotable to the result type");
    }
  }
  return OkStatus();
}

// The typed path: one operand with a combiner that has typed loops.
void RunTyped(const TypedCombiner& loops, const ReduceLayout& layout, const void* input,
              const void* init, int64_t bytes, void* out) {
  const int64_t k = layout.k;
  const int64_t m = layout.m;
  std::vector<char> transposed;
  const void* x = input;
  if (!layout.KeptInnermost()) {
    // Reduced elements innermost: each result reduces k contiguous elements.
    if (!layout.ReducedInnermostOnce()) {
      transposed.resize(k * m * bytes);
      PermuteCopy(input, layout.sizes, layout.Permutation(/*reduced_first=*/false), bytes,
                  transposed.data());
      x = transposed.data();
    }
    loops.reduce_contiguous(x, m, k, out);
  } else {
    const int64_t width = layout.sizes.back();
    const bool rows_direct =
        layout.CountReduced() == 1 && (layout.reduced[0] || (layout.sizes.size() == 3));
    std::vector<char> scratch(ReduceRowsScratchElements(k, width) * bytes);
    if (rows_direct) {
      // [outer kept][k][width]: each outer index reduces k rows of `width`.
      const int64_t outer = m / width;
      for (int64_t o = 0; o < outer; ++o) {
        loops.reduce_rows(static_cast<const char*>(input) + o * k * width * bytes, k, width, width,
                          static_cast<char*>(out) + o * width * bytes, scratch.data());
      }
    } else {
      transposed.resize(k * m * bytes);
      PermuteCopy(input, layout.sizes, layout.Permutation(/*reduced_first=*/true), bytes,
                  transposed.data());
      scratch.resize(ReduceRowsScratchElements(k, m) * bytes);
      loops.reduce_rows(transposed.data(), k, m, m, out, scratch.data());
    }
  }
  loops.combine(m, init, 0, out, 1, out);
}

// The engine path. The operands are viewed as [outer][k][inner] (one reduced group between kept
// ones; several reduced groups are first transposed to [k][m]). Each level combines adjacent
// elements (2j, 2j + 1) along k in one strided engine call, an odd last one folded into the last
// pair, so the tree's in-order traversal is the elements' order (as the spec asks): log2(k)
// levels. Then the init values are applied once per result element.
void RunGeneric(const ReduceParams& params, const ReduceLayout& layout,
                const std::vector<const void*>& inputs, const std::vector<const void*>& inits,
                const std::vector<int64_t>& bytes, const std::vector<ArrayResult>& results) {
  const size_t n = inputs.size();
  const int64_t k = layout.k;
  const int64_t m = layout.m;
  ScalarApplier applier(params.body);
  std::vector<std::vector<char>> transposed(n);
  std::vector<const void*> src(inputs);
  int64_t outer = 1, inner = m;
  if (layout.CountReduced() <= 1) {
    bool before = true;
    for (size_t g = 0; g < layout.sizes.size(); ++g) {
      if (layout.reduced[g]) {
        before = false;
      } else if (before) {
        outer *= layout.sizes[g];
      }
    }
    inner = m / outer;
  } else {
    const std::vector<int64_t> perm = layout.Permutation(/*reduced_first=*/true);
    for (size_t i = 0; i < n; ++i) {
      transposed[i].resize(k * m * bytes[i]);
      PermuteCopy(inputs[i], layout.sizes, perm, bytes[i], transposed[i].data());
      src[i] = transposed[i].data();
    }
  }
  // Ping-pong buffers: level outputs alternate between buffers[0] and buffers[1].
  std::vector<std::vector<char>> buffers[2] = {std::vector<std::vector<char>>(n),
                                               std::vector<std::vector<char>>(n)};
  std::vector<std::vector<char>> folded(n);
  std::vector<const void*> call_inputs(2 * n);
  std::vector<std::vector<int64_t>> strides(2 * n);
  std::vector<void*> call_results(n);
  int64_t rows = k;
  int which = 0;
  while (rows > 1) {
    const int64_t half = rows / 2;
    for (size_t i = 0; i < n; ++i) {
      std::vector<char>& buffer = buffers[which][i];
      const size_t size = outer * half * inner * bytes[i];
      if (buffer.size() < size) buffer.resize(size);
      call_inputs[i] = src[i];
      call_inputs[n + i] = static_cast<const char*>(src[i]) + inner * bytes[i];
      strides[i] = strides[n + i] = {rows * inner, 2 * inner, 1};
      call_results[i] = buffer.data();
    }
    applier.ApplyStrided({outer, half, inner}, call_inputs.data(), strides.data(),
                         call_results.data());
    if (rows % 2 == 1) {
      // The last element folds into the last pair: (x[2h-2] op x[2h-1]) op x[2h].
      for (size_t i = 0; i < n; ++i) {
        folded[i].resize(outer * inner * bytes[i]);
        call_inputs[i] = buffers[which][i].data() + (half - 1) * inner * bytes[i];
        strides[i] = {half * inner, 1};
        call_inputs[n + i] = static_cast<const char*>(src[i]) + 2 * half * inner * bytes[i];
        strides[n + i] = {rows * inner, 1};
        call_results[i] = folded[i].data();
      }
      applier.ApplyStrided({outer, inner}, call_inputs.data(), strides.data(), call_results.data());
      for (size_t i = 0; i < n; ++i) {
        const int64_t run = inner * bytes[i];
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(buffers[which][i].data() + (o * half + half - 1) * run,
                      folded[i].data() + o * run, run);
        }
      }
    }
    for (size_t i = 0; i < n; ++i) src[i] = buffers[which][i].data();
    which = 1 - which;
    rows = half;
  }
  std::vector<int64_t> flat(2 * n, 1);
  for (size_t i = 0; i < n; ++i) {
    call_inputs[i] = inits[i];
    flat[i] = 0;
    call_inputs[n + i] = src[i];
    call_results[i] = results[i].data;
  }
  applier.Apply(m, call_inputs.data(), flat.data(), call_results.data());
}

}  // namespace

Status CheckReduce(const ReduceParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results) {
  PJRTKIT_RETURN_IF_ERROR(CheckShapes(params, operands, results));
  std::vector<ElementType> types;
  for (const ArrayType* result : results) types.push_back(result->type);
  std::vector<ElementType> parameters(types);
  parameters.insert(parameters.end(), types.begin(), types.end());
  Status body = CheckScalarComputation(params.body, parameters, types);
  if (!body.ok()) return InvalidArgument("reduce: body: " + body.message());
  return OkStatus();
}

Status RunReduce(const ReduceParams& params, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs (the typed loops rely on it).
  const size_t n = results.size();
  const ReduceLayout layout = MakeLayout(operands[0].type->dims, params.dimensions);
  if (layout.m == 0) return OkStatus();
  std::vector<const void*> inputs(n), inits(n);
  std::vector<int64_t> bytes(n);
  std::vector<std::vector<char>> storage(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const ElementType from = operands[i].type->type;
    const ElementType to = results[i].type->type;
    bytes[i] = TypeBytes(to);
    inputs[i] = PromoteArray(from, operands[i].data, to, layout.k * layout.m, &storage[i]);
    inits[i] = PromoteArray(from, operands[n + i].data, to, 1, &storage[n + i]);
  }
  if (layout.k == 0) {
    for (size_t i = 0; i < n; ++i) FillWithScalar(results[i].data, inits[i], bytes[i], layout.m);
    return OkStatus();
  }
  TypedCombiner loops;
  if (n == 1 && GetTypedCombiner(params.body.combiner, results[0].type->type, &loops)) {
    RunTyped(loops, layout, inputs[0], inits[0], bytes[0], results[0].data);
  } else {
    RunGeneric(params, layout, inputs, inits, bytes, results);
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
