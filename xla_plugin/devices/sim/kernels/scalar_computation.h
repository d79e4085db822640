// ScalarComputation over vectors: how kernels apply a region (reduce body, scatter update,
// collective reduction, select) to many elements at once.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// Checks that `computation` takes `num_inputs` scalars of `input_types` and returns scalars of
// `result_types`, and that its combiner (when not kGeneric) agrees with its body.
Status CheckScalarComputation(const ScalarComputation& computation,
                              const std::vector<ElementType>& input_types,
                              const std::vector<ElementType>& result_types);

// Applies `computation` elementwise to `n` elements: inputs[i] is read at inputs[i] + k *
// input_strides[i] elements (stride 0: one scalar for all), results written densely (they may
// alias an input whose stride is 1). Uses the combiner's fast path when it has one.
void ApplyScalarComputation(const ScalarComputation& computation, int64_t n,
                            const std::vector<const void*>& inputs,
                            const std::vector<int64_t>& input_strides,
                            const std::vector<void*>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_
