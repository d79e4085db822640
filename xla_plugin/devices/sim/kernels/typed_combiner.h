// Typed loops of the combiners (Combiner in op_params.h) the reduction kernels use instead of
// evaluating the body: binary apply, in-place accumulate, ordered pair updates and pairwise
// reductions, one instantiation per (combiner, storage type) that has a typed loop.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TYPED_COMBINER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TYPED_COMBINER_H_

#include <cstdint>

#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// acc[k * acc_stride] = acc[k * acc_stride] op b[k * b_stride] for k < n, in order of k.
using AccumulateFn = void (*)(int64_t n, void* acc, int64_t acc_stride, const void* b,
                              int64_t b_stride);

// For j < count in order: acc[targets[j]] = acc[targets[j]] op b[sources[j]] (element indices).
using PairsFn = void (*)(int64_t count, void* acc, const int64_t* targets, const void* b,
                         const int64_t* sources);

// For i < m: out[i] = the reduction of x[i * k + j] over j < k (k >= 1), pairwise (blocks of up
// to 128 elements over eight interleaved partial results, halves combined above that).
using ReduceContiguousFn = void (*)(const void* x, int64_t m, int64_t k, void* out);

// out[c] = the reduction of x[r * row_stride + c] over rows r < k (k >= 1) for c < width,
// pairwise over rows (up to 8 rows sequentially, halves combined above that). `scratch` holds
// ReduceRowsScratchElements(k, width) elements of the type.
using ReduceRowsFn = void (*)(const void* x, int64_t k, int64_t row_stride, int64_t width,
                              void* out, void* scratch);

// acc = *init; for k < n in order: acc = acc op x[k * x_stride], out[k * out_stride] = acc
// (strides in elements, may be negative).
using ScanFn = void (*)(int64_t n, const void* init, const void* x, int64_t x_stride, void* out,
                        int64_t out_stride);

// Elements of scratch a ReduceRowsFn needs for k rows of `width` columns.
int64_t ReduceRowsScratchElements(int64_t k, int64_t width);

// The typed loops of one (combiner, element type).
struct TypedCombiner {
  CombineFn combine = nullptr;
  AccumulateFn accumulate = nullptr;
  PairsFn pairs = nullptr;
  ReduceContiguousFn reduce_contiguous = nullptr;
  ReduceRowsFn reduce_rows = nullptr;
  ScanFn scan = nullptr;
};

// The typed loops of `combiner` on `type`; false where there are none (see GetCombineFn).
bool GetTypedCombiner(Combiner combiner, ElementType type, TypedCombiner* loops);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TYPED_COMBINER_H_
