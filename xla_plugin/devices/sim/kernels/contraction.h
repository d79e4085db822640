// dot_general and convolution (see data_movement.h for the Check/Run contract).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_H_

#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// StableHLO dot_general. Operands may have different element types (mixed precision: e.g. bf16 x
// bf16 -> f32); the result's element type is the accumulation type; low-precision floats
// accumulate in f32, integers in their result type (wrapping). Runs with denormals flushed, as
// XLA:CPU does. (contraction_util.h: the accumulator of each type combination.)
Status CheckDotGeneral(const DotGeneralParams& params, const ArrayTypes& operands,
                       const ArrayTypes& results);
Status RunDotGeneral(const DotGeneralParams& params, const std::vector<ArrayArg>& operands,
                     const std::vector<ArrayResult>& results);

// StableHLO convolution: any dimension numbers, padding, strides, lhs/rhs dilation, window
// reversal, feature_group_count and batch_group_count; element types as dot_general. Empty
// window_strides, padding, lhs_dilation, rhs_dilation or window_reversal mean the defaults (1, 0,
// 1, 1, false); otherwise each has one entry per spatial dimension.
Status CheckConvolution(const ConvolutionParams& params, const ArrayTypes& operands,
                        const ArrayTypes& results);
Status RunConvolution(const ConvolutionParams& params, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_CONTRACTION_H_
