// Data movement kernels: copy, transpose, slices, dynamic slices, concatenate, pad, reverse.
//
// Every kernel has a Check function the compiler calls on what it built and the executor's
// program validation calls on every deserialized program: it verifies the params against the
// operand and result types completely (ranks, bounds, element types, sizes), so Run never reads
// or writes outside the arrays once Check passed. Messages name the param and the expected value.
//
// The kernels copy bytes, so each serves every element type the device stores (whole bytes:
// pred, integers, floats, complex; Check refuses sub-byte types and token), one instantiation per
// element size (box_copy.h). Arrays whose nonzero dimensions multiply past int64 are refused.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_DATA_MOVEMENT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_DATA_MOVEMENT_H_

#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// One operand, one result of the same element type and element count (reshape, bitcast of the
// same bytes). The result never aliases the operand (Run copies nothing if handed the same
// address).
Status CheckCopy(const ArrayTypes& operands, const ArrayTypes& results);
Status RunCopy(const std::vector<ArrayArg>& operands, const std::vector<ArrayResult>& results);

Status CheckTranspose(const TransposeParams& params, const ArrayTypes& operands,
                      const ArrayTypes& results);
Status RunTranspose(const TransposeParams& params, const std::vector<ArrayArg>& operands,
                    const std::vector<ArrayResult>& results);

Status CheckSlice(const SliceParams& params, const ArrayTypes& operands, const ArrayTypes& results);
Status RunSlice(const SliceParams& params, const std::vector<ArrayArg>& operands,
                const std::vector<ArrayResult>& results);

// Start indices: scalars of any integer type (s8..s64, u8..u64; each may have its own), clamped to
// [0, operand_dim - size] as the spec says (unsigned values above INT64_MAX clamp high).
Status CheckDynamicSlice(const DynamicSliceParams& params, const ArrayTypes& operands,
                         const ArrayTypes& results);
Status RunDynamicSlice(const DynamicSliceParams& params, const std::vector<ArrayArg>& operands,
                       const std::vector<ArrayResult>& results);

// The result may alias operand 0 (an in-place update the buffer plan chose): then only the
// update's window is written; otherwise the operand is copied first. Start indices as for
// DynamicSlice, clamped to [0, operand_dim - update_dim].
Status CheckDynamicUpdateSlice(const DynamicUpdateSliceParams& params, const ArrayTypes& operands,
                               const ArrayTypes& results);
Status RunDynamicUpdateSlice(const DynamicUpdateSliceParams& params,
                             const std::vector<ArrayArg>& operands,
                             const std::vector<ArrayResult>& results);

Status CheckConcatenate(const ConcatenateParams& params, const ArrayTypes& operands,
                        const ArrayTypes& results);
Status RunConcatenate(const ConcatenateParams& params, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results);

// Edge padding (negative: cropping, also of interior padding) and interior padding in one pass:
// the result is filled with the padding value, then the operand elements that land inside are
// copied to low + i * (interior + 1).
Status CheckPad(const PadParams& params, const ArrayTypes& operands, const ArrayTypes& results);
Status RunPad(const PadParams& params, const std::vector<ArrayArg>& operands,
              const std::vector<ArrayResult>& results);

Status CheckReverse(const ReverseParams& params, const ArrayTypes& operands,
                    const ArrayTypes& results);
Status RunReverse(const ReverseParams& params, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_DATA_MOVEMENT_H_
