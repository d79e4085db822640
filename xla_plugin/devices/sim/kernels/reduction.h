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
// may reduce pairwise (a tree), which the tests' tolerances state.
Status CheckReduce(const ReduceParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results);
Status RunReduce(const ReduceParams& params, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results);

Status CheckReduceWindow(const ReduceWindowParams& params, const ArrayTypes& operands,
                         const ArrayTypes& results);
Status RunReduceWindow(const ReduceWindowParams& params, const std::vector<ArrayArg>& operands,
                       const std::vector<ArrayResult>& results);

Status CheckSelectAndScatter(const SelectAndScatterParams& params, const ArrayTypes& operands,
                             const ArrayTypes& results);
Status RunSelectAndScatter(const SelectAndScatterParams& params,
                           const std::vector<ArrayArg>& operands,
                           const std::vector<ArrayResult>& results);

// StableHLO scatter (variadic, batching dimensions): results start as copies of the inputs (they
// may alias them), then each update window in bounds is combined with `params.update`; windows
// out of bounds are skipped, as the spec says.
Status CheckScatter(const ScatterParams& params, const ArrayTypes& operands,
                    const ArrayTypes& results);
Status RunScatter(const ScatterParams& params, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_H_
