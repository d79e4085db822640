// INTERFACE STUB: the numerics agent's fused_elementwise.h replaces this file at merge.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

enum class EwOp : uint8_t {
  kInput, kConstant, kIota,
  kAbs, kNegate, kSign, kNot, kExp, kExpm1, kLog, kLog1p, kLogistic,
  kTanh, kSine, kCosine, kTan, kSqrt, kRsqrt, kCbrt, kFloor, kCeil, kRoundNearestAfz,
  kRoundNearestEven, kIsFinite, kPopcnt, kCountLeadingZeros, kReal, kImag,
  kConvert, kBitcastConvert, kReducePrecision,
  kAdd, kSubtract, kMultiply, kDivide, kRemainder, kPower, kMaximum, kMinimum, kAnd, kOr, kXor,
  kShiftLeft, kShiftRightArithmetic, kShiftRightLogical, kAtan2, kComplex,
  kCompare,
  kSelect, kClamp,
};
enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType : uint8_t { kNotype, kFloat, kTotalOrder, kSigned, kUnsigned };

struct EwInput {
  ElementType type;
  std::vector<int64_t> strides;
};
struct EwStep {
  EwOp op;
  ElementType type;
  ElementType operand_type = ElementType::kInvalid;
  int32_t operands[3] = {-1, -1, -1};
  int64_t attr = 0;
  std::string constant;
};
struct FusedElementwise {
  std::vector<int64_t> dims;
  std::vector<EwInput> inputs;
  std::vector<EwStep> steps;
  std::vector<int32_t> outputs;
};
Status Validate(const FusedElementwise& fused);
Status CheckSupported(EwOp op, ElementType type, ElementType operand_type);
void Evaluate(const FusedElementwise& fused, const void* const* inputs, void* const* outputs);
void ConvertArray(ElementType from, const void* src, ElementType to, void* dst, int64_t n);
const char* EwOpName(EwOp op);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FUSED_ELEMENTWISE_H_
