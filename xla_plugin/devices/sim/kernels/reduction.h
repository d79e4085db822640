// Reductions: reduce, reduce_window, select_and_scatter, scatter (see data_movement.h for the
// Check/Run contract).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// StableHLO reduce (variadic). Any order of applying the body is allowed by the spec; the kernel
// reduces pairwise (a tree of vector applications of the body: log2(k) engine calls for k reduced
// elements per result, or the combiner's typed loops), then applies the init value exactly once
// per result element (also where nothing is reduced, or k = 0: the result is the init value).
// Floats may round differently from XLA's sequential order (tests state their tolerances).
// Inputs are converted to the result types when those are wider (StableHLO's is_promotable).
Status CheckReduce(const ReduceParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results);
Status RunReduce(const ReduceParams& params, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results);

// StableHLO reduce_window (variadic) as XLA:CPU computes it: each result is the init value
// combined with its window's input elements in window order (row-major); positions in the padding
// (which may be negative) or in base-dilation holes are skipped, which equals the spec's padding
// with the init value whenever that is an identity of the body. Cumulative windows (cumsum-like,
// forward or reverse) run as linear scans. Check refuses windows with more than 2^32 offsets
// reaching the input.
Status CheckReduceWindow(const ReduceWindowParams& params, const ArrayTypes& operands,
                         const ArrayTypes& results);
Status RunReduceWindow(const ReduceWindowParams& params, const std::vector<ArrayArg>& operands,
                       const std::vector<ArrayResult>& results);

// StableHLO select_and_scatter as XLA:CPU computes it: in each window the first input element in
// window order is selected and replaced by each later one for which select(selected, element) is
// false (with GE, ties keep the first); padding is never selected; windows of padding only
// scatter nothing. result = init everywhere, then result[selected] = scatter(result[selected],
// source[window]) window by window in row-major order.
Status CheckSelectAndScatter(const SelectAndScatterParams& params, const ArrayTypes& operands,
                             const ArrayTypes& results);
Status RunSelectAndScatter(const SelectAndScatterParams& params,
                           const std::vector<ArrayArg>& operands,
                           const std::vector<ArrayResult>& results);

// StableHLO scatter (variadic, batching dimensions): results start as copies of the inputs (they
// may alias them: a result whose data is its input's is updated in place), then each update
// window lying entirely in bounds is combined with `params.update` element by element; windows
// not entirely in bounds are skipped whole (XLA's rule). Scatter indices are visited in row-major
// order of the updates' scatter dimensions, each window in row-major order, so updates to one
// element apply in that order whatever unique_indices says. Indices of any integer type (u64
// values beyond int64 are out of bounds).
Status CheckScatter(const ScatterParams& params, const ArrayTypes& operands,
                    const ArrayTypes& results);
Status RunScatter(const ScatterParams& params, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_H_
