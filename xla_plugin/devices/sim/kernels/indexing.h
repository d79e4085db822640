// Gather, sort and random-bit kernels (see data_movement.h for the Check/Run contract).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_INDEXING_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_INDEXING_H_

#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// StableHLO gather: batching dimensions, any index_vector_dim (= rank(start_indices): an
// implicit trailing vector of one index), start indices of any integer type clamped so the slice
// fits (the spec). A collapsed or batching dimension of slice size 0 gives a result of zeros (what
// XLA:CPU computes for these empty slices). A slice that is one contiguous run (x[i]) is one
// memcpy; one-element slices (take_along_axis) a fixed-size copy.
Status CheckGather(const GatherParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results);
Status RunGather(const GatherParams& params, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results);

// StableHLO sort (variadic) along params.dimension (negative: counted from the end) with the
// comparator. Rows are sorted by a merge sort of a permutation (stable, so is_stable = false gets
// a stable order too; safe with comparators that are no strict weak order), then every operand is
// gathered by it. The comparator's `keys` are used when not empty and every key's operand has a
// type they cover (pred, integers, f16, bf16, f32, f64); otherwise `body` is evaluated per
// comparison (fused_elementwise.h's Evaluate). Keys of complex operands are refused (XLA:CPU does
// not implement complex LT/GT either).
Status CheckSort(const SortParams& params, const ArrayTypes& operands, const ArrayTypes& results);
Status RunSort(const SortParams& params, const std::vector<ArrayArg>& operands,
               const std::vector<ArrayResult>& results);

// rng_bit_generator: operand = state (u64[2] for THREE_FRY, u64[2] or u64[3] for PHILOX and
// DEFAULT); results = new state (may alias the state), bits (any shape of an integer or
// floating-point type of 8, 16, 32 or 64 bits). The bits and new state are XLA:CPU's: DEFAULT is
// PHILOX there (measured with jaxlib 0.12; jax.random's 'rbg' and 'unsafe_rbg' use DEFAULT).
Status CheckRngBitGenerator(const RngBitGeneratorParams& params, const ArrayTypes& operands,
                            const ArrayTypes& results);
Status RunRngBitGenerator(const RngBitGeneratorParams& params,
                          const std::vector<ArrayArg>& operands,
                          const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_INDEXING_H_
