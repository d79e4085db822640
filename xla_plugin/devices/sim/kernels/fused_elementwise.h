// FusedElementwise: one chain of elementwise ops (with the broadcasts and iotas feeding them) as
// one instruction of the sim device, evaluated in a single blocked loop over the output.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// One elementwise operation of a fused program.
enum class EwOp : uint8_t {
  // Leaves.
  kInput,     // attr = input index.
  kConstant,  // `constant` = one element of `type` in storage format (bool: 1 byte, bf16: 2...).
  kIota,      // attr = output dimension; value = the element's index along it, as `type`.
  // Unary (operands[0]); result `type`; `operand_type` = operands[0]'s type.
  kAbs,  // complex -> its component type
  kNegate,
  kSign,
  kNot,
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kLogistic,
  kTanh,
  kSine,
  kCosine,
  kTan,
  kSqrt,
  kRsqrt,
  kCbrt,
  kFloor,
  kCeil,
  kRoundNearestAfz,
  kRoundNearestEven,
  kIsFinite,  // -> pred
  kPopcnt,
  kCountLeadingZeros,
  kReal,
  kImag,             // complex -> component
  kConvert,          // operand_type -> type, XLA semantics
  kBitcastConvert,   // same bit width
  kReducePrecision,  // attr = (exponent_bits << 32) | mantissa_bits
  // Binary (operands[0..1]).
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kRemainder,
  kPower,
  kMaximum,
  kMinimum,
  kAnd,
  kOr,
  kXor,
  kShiftLeft,
  kShiftRightArithmetic,
  kShiftRightLogical,
  kAtan2,
  kComplex,  // (f32, f32) -> c64, (f64, f64) -> c128
  kCompare,  // attr = ComparisonDirection | (ComparisonType << 8); type = kPred
  // Ternary.
  kSelect,  // (pred, on_true, on_false)
  kClamp,   // (min, operand, max)
};

// The number of EwOp values (kClamp is the last).
constexpr int kNumEwOps = static_cast<int>(EwOp::kClamp) + 1;

// Direction of a kCompare (the low byte of its attr).
enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };

// Comparison type of a kCompare (attr bits 8..15). kNotype means the element type's own: FLOAT
// for floats and complex, SIGNED for s*, UNSIGNED for u* and pred.
enum class ComparisonType : uint8_t { kNotype, kFloat, kTotalOrder, kSigned, kUnsigned };

// One input array of a fused program.
struct EwInput {
  ElementType type;              // pjrtkit::ElementType (xla_plugin/client/types.h)
  std::vector<int64_t> strides;  // element stride of this input per OUTPUT dimension (0 = broadcast
                                 // along it); size == output rank. Row-major strides: a plain array
                                 // of the output's shape; all zeros: a scalar.
};

// One step of a fused program.
struct EwStep {
  EwOp op;                                           // The operation.
  ElementType type;                                  // result element type
  ElementType operand_type = ElementType::kInvalid;  // type of operands[0] (convert, compare, ...)
  int32_t operands[3] = {-1, -1, -1};                // indices of EARLIER steps
  int64_t attr = 0;                                  // See EwOp.
  std::string constant;                              // kConstant only
};

// A fused elementwise program: inputs, steps in evaluation order, and which steps are outputs.
struct FusedElementwise {
  std::vector<int64_t> dims;       // output shape, shared by all outputs
  std::vector<EwInput> inputs;     // The input arrays.
  std::vector<EwStep> steps;       // evaluation order
  std::vector<int32_t> outputs;    // step index of each output
};

// Well-formedness: operand indices earlier and in range, types consistent with each op, input
// indices in range, strides sized to dims, every op supported for its types (CheckSupported). The
// message names the step, its op and types. Also run on programs read back from bytes, so it
// rejects anything Evaluate cannot safely run.
Status Validate(const FusedElementwise& fused);

// Whether `op` is supported for result `type` and operand `operand_type` (kInvalid where the op
// has no separate operand type: leaves, and ops whose operands have the result type); UNIMPLEMENTED
// naming the op and types otherwise. Sub-byte types are refused by name.
Status CheckSupported(EwOp op, ElementType type, ElementType operand_type);

// Evaluates `fused` (which must pass Validate): inputs[i] points to input i's data (dense storage,
// addressed through its strides), outputs[k] to a dense row-major array of `dims` with outputs[k]'s
// step type. Outputs may alias an input with identical (row-major) strides and type (in-place).
// Allocates one scratch per call; never per element. Single-threaded; runs with denormals flushed
// (ScopedFlushDenormals), as XLA:CPU does.
void Evaluate(const FusedElementwise& fused, const void* const* inputs, void* const* outputs);

// Runs parts 0 .. count-1 of one piece of work, each once, possibly on several threads, and
// returns when all are done (the device runtime's WorkerPool::ParallelFor).
using ParallelFor = std::function<void(int64_t count, const std::function<void(int64_t)>& part)>;

// Evaluate, with an output of at least kParallelElements elements cut into up to `parts`
// contiguous ranges run through `parallel` (each with its own scratch); smaller outputs, or
// `parts` < 2, run on this thread.
inline constexpr int64_t kParallelElements = int64_t{1} << 17;
void EvaluateParallel(const FusedElementwise& fused, const void* const* inputs,
                      void* const* outputs, const ParallelFor& parallel, int parts);

// Converts n elements from `from` to `to` with XLA semantics (the kConvert op), memory to memory
// (dense, both supported types; src and dst must not overlap unless equal with equal sizes).
void ConvertArray(ElementType from, const void* src, ElementType to, void* dst, int64_t n);

// The op's name for messages: "add", "compare", ... (StableHLO's names where one exists).
const char* EwOpName(EwOp op);

// The op named `name` (as EwOpName spells it); false when there is none.
bool EwOpFromName(const std::string& name, EwOp* op);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_
