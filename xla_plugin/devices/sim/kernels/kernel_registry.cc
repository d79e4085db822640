#include "xla_plugin/devices/sim/kernels/kernel_registry.h"

#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/block_io.h"
#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/ew_kernels.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace {

std::string Name(ElementType type) { return ElementTypeName(type); }

std::string OpName(EwOp op) { return std::string("'") + EwOpName(op) + "'"; }

Status NotSupported(EwOp op, const std::string& types) {
  return Unimplemented("op " + OpName(op) + " on " + types +
                       " is not supported by the sim device's elementwise engine");
}

Status TypeMismatch(EwOp op, const std::string& what) {
  return InvalidArgument("op " + OpName(op) + " " + what);
}

// f64 (or c128's real part) converted to a low-precision float as XLA:CPU does (one rounding for
// float8, through f32 for f16/bf16), held as float. aux = LowFloat.
void F64ToLowKernel(const KernelArgs& args) {
  RoundF64Block(static_cast<LowFloat>(args.aux), static_cast<const double*>(args.in[0]),
                static_cast<float*>(args.out), args.n);
}
void C128ToLowKernel(const KernelArgs& args) {
  const Complex<double>* in = static_cast<const Complex<double>*>(args.in[0]);
  float* out = static_cast<float*>(args.out);
  double re[256];
  for (int64_t s = 0; s < args.n; s += 256) {
    const int64_t m = args.n - s < 256 ? args.n - s : 256;
    for (int64_t i = 0; i < m; ++i) re[i] = in[s + i].re;
    RoundF64Block(static_cast<LowFloat>(args.aux), re, out + s, m);
  }
}

// bitcast_convert: the operand's storage bits read as the result type. aux = from | (to << 8).
void BitcastKernel(const KernelArgs& args) {
  const ElementType from = static_cast<ElementType>(args.aux & 0xff);
  const ElementType to = static_cast<ElementType>(args.aux >> 8);
  const int in_bytes = ComputeKindBytes(ComputeKindOf(from));
  const int out_bytes = ComputeKindBytes(ComputeKindOf(to));
  alignas(8) unsigned char bits[256 * 8];
  for (int64_t s = 0; s < args.n; s += 256) {
    const int64_t m = args.n - s < 256 ? args.n - s : 256;
    StoreElements(from, static_cast<const char*>(args.in[0]) + s * in_bytes, bits, m);
    LoadElements(to, bits, 1, static_cast<char*>(args.out) + s * out_bytes, m);
  }
}

// The kernel of a unary, binary or clamp op on operands of type `operand`.
KernelFn FamilyKernel(EwOp op, ElementType operand) {
  const ComputeKind kind = ComputeKindOf(operand);
  if (KernelFn typed = TypedFloatKernel(op, operand)) return typed;
  if (IsComplexType(operand)) return ComplexKernel(op, kind);
  if (IsFloatType(operand)) return FloatKernel(op, kind);
  return IntKernel(op, kind);
}

// The result type `op` gives for operand type `a`.
ElementType ResultTypeOf(EwOp op, ElementType a) {
  if (op == EwOp::kIsFinite) return ElementType::kPred;
  if ((op == EwOp::kAbs || op == EwOp::kReal || op == EwOp::kImag) && IsComplexType(a)) {
    return ComplexComponentType(a);
  }
  return a;
}

Status ResolveConvert(ElementType type, ElementType from, StepKernel* kernel) {
  kernel->fn = ConvertKernel(ComputeKindOf(from), ComputeKindOf(type));
  kernel->rounding = LowRounding(type, /*op_result=*/false);
  LowFloat format;
  if (LowFloatOf(type, &format) && (from == ElementType::kF64 || from == ElementType::kC128)) {
    kernel->fn = from == ElementType::kF64 ? &F64ToLowKernel : &C128ToLowKernel;
    kernel->aux = static_cast<int32_t>(format);
    kernel->rounding = 0;
  } else if (LowFloatOf(from, &format) && ConvertFromLowFloat(type) != nullptr) {
    kernel->fn = ConvertFromLowFloat(type);
    kernel->aux = static_cast<int32_t>(format);
  } else if (from == ElementType::kBF16 && type == ElementType::kPred) {
    kernel->fn = ConvertBf16ToPred();
  }
  if (kernel->fn == nullptr) return NotSupported(EwOp::kConvert, Name(from) + " -> " + Name(type));
  return OkStatus();
}

// The aux a typed kernel of `op` on `type` needs.
int32_t TypedAux(EwOp op, ElementType type) {
  if (op == EwOp::kLogistic) {
    // XLA computes f16 and the float8 types (f8e8m0fnu aside) in f16, bf16 and f8e8m0fnu in f32.
    const bool in_f16 = type == ElementType::kF16 ||
                        (ElementTypeBits(type) == 8 && type != ElementType::kF8E8M0FNU);
    return in_f16 ? LowRounding(ElementType::kF16, /*op_result=*/true) : 0;
  }
  if (op == EwOp::kReducePrecision && IsLowPrecisionFloat(type)) {
    return static_cast<int32_t>(type == ElementType::kBF16 ? LowFloat::kBF16 : LowFloat::kF16);
  }
  return 0;
}

Status ResolveBitcast(ElementType type, ElementType from, StepKernel* kernel) {
  const bool refused = type == ElementType::kPred || from == ElementType::kPred ||
                       IsComplexType(type) || IsComplexType(from);
  if (refused) return NotSupported(EwOp::kBitcastConvert, Name(from) + " -> " + Name(type));
  if (ElementTypeBits(type) != ElementTypeBits(from)) {
    return TypeMismatch(EwOp::kBitcastConvert, "needs types of one bit width, got " + Name(from) +
                                                   " -> " + Name(type));
  }
  kernel->fn = &BitcastKernel;
  kernel->aux = static_cast<int32_t>(from) | (static_cast<int32_t>(type) << 8);
  return OkStatus();
}

Status ResolveCompare(ElementType a, int64_t attr, StepKernel* kernel) {
  const int64_t direction = attr & 0xff;
  const int64_t comparison = (attr >> 8) & 0xff;
  if ((attr >> 16) != 0 || direction > static_cast<int>(ComparisonDirection::kLt) ||
      comparison > static_cast<int>(ComparisonType::kUnsigned)) {
    return TypeMismatch(EwOp::kCompare, "has attr " + std::to_string(attr) +
                                            "; expected direction (0..5) | comparison type "
                                            "(0..4) << 8");
  }
  ComparisonType ct = static_cast<ComparisonType>(comparison);
  const bool is_float = IsFloatType(a) || IsComplexType(a);
  const bool is_signed = IsSignedIntType(a);
  if (ct == ComparisonType::kNotype) {
    ct = is_float ? ComparisonType::kFloat
                  : is_signed ? ComparisonType::kSigned : ComparisonType::kUnsigned;
  }
  const bool consistent = (ct == ComparisonType::kFloat && is_float) ||
                          (ct == ComparisonType::kTotalOrder && is_float) ||
                          (ct == ComparisonType::kSigned && is_signed) ||
                          (ct == ComparisonType::kUnsigned && !is_float && !is_signed);
  static const char* const kTypeNames[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  static const char* const kDirectionNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  const std::string how = std::string(kDirectionNames[direction]) + " " + kTypeNames[comparison];
  if (!consistent) {
    return TypeMismatch(EwOp::kCompare, std::string("with comparison type ") +
                                            kTypeNames[comparison] + " does not fit " + Name(a) +
                                            " operands");
  }
  kernel->fn = CompareKernel(ComputeKindOf(a), static_cast<ComparisonDirection>(direction),
                             ct == ComparisonType::kTotalOrder);
  if (kernel->fn == nullptr) return NotSupported(EwOp::kCompare, Name(a) + " (" + how + ")");
  return OkStatus();
}

Status ResolveReducePrecision(ElementType type, int64_t attr, StepKernel* kernel) {
  const int64_t exponent_bits = attr >> 32;
  const int64_t mantissa_bits = attr & 0xffffffff;
  if (exponent_bits < 1 || exponent_bits > 0x7fffffff || mantissa_bits > 0x7fffffff) {
    return TypeMismatch(EwOp::kReducePrecision,
                        "has exponent_bits " + std::to_string(exponent_bits) +
                            " and mantissa_bits " + std::to_string(mantissa_bits) +
                            "; expected exponent_bits >= 1 and mantissa_bits >= 0");
  }
  kernel->fn = TypedFloatKernel(EwOp::kReducePrecision, type);
  if (kernel->fn == nullptr) return NotSupported(EwOp::kReducePrecision, Name(type));
  kernel->aux = TypedAux(EwOp::kReducePrecision, type);
  kernel->rounding = LowRounding(type, /*op_result=*/true);
  return OkStatus();
}

Status ExpectSame(EwOp op, const char* what, ElementType expected, ElementType got) {
  if (expected == got) return OkStatus();
  return TypeMismatch(op, std::string("needs ") + what + " of type " + Name(expected) + ", got " +
                              Name(got));
}

Status ResolveBinary(EwOp op, ElementType type, const ElementType* ops, StepKernel* kernel) {
  if (op == EwOp::kComplex) {
    const ElementType component = ComplexComponentType(type);
    if (component == ElementType::kInvalid) {
      return TypeMismatch(op, "needs a c64 or c128 result, got " + Name(type));
    }
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 0", component, ops[0]));
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 1", component, ops[1]));
    kernel->fn = ComplexKernel(op, ComputeKindOf(type));
    return OkStatus();
  }
  PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 0", type, ops[0]));
  PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 1", type, ops[1]));
  kernel->fn = FamilyKernel(op, type);
  if (kernel->fn == nullptr) return NotSupported(op, Name(type));
  kernel->rounding = LowRounding(type, /*op_result=*/true);
  return OkStatus();
}

Status ResolveTernary(EwOp op, ElementType type, const ElementType* ops, StepKernel* kernel) {
  if (op == EwOp::kSelect) {
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 0", ElementType::kPred, ops[0]));
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 1", type, ops[1]));
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 2", type, ops[2]));
    kernel->fn = SelectKernel(ComputeKindOf(type));
    return OkStatus();
  }
  for (int i = 0; i < 3; ++i) {
    PJRTKIT_RETURN_IF_ERROR(
        ExpectSame(op, ("operand " + std::to_string(i)).c_str(), type, ops[i]));
  }
  kernel->fn = FamilyKernel(op, type);
  if (kernel->fn == nullptr) return NotSupported(op, Name(type));
  return OkStatus();
}

}  // namespace

int NumOperands(EwOp op) {
  if (op == EwOp::kInput || op == EwOp::kConstant || op == EwOp::kIota) return 0;
  if (op == EwOp::kSelect || op == EwOp::kClamp) return 3;
  if (static_cast<int>(op) >= static_cast<int>(EwOp::kAdd)) return 2;
  return 1;
}

Status CheckElementType(ElementType type) {
  if (IsSupportedElementType(type)) return OkStatus();
  return Unimplemented(std::string("element type ") + ElementTypeName(type) +
                       " is not supported by the sim device (supported: pred, s8-s64, u8-u64, "
                       "f16, bf16, f32, f64, c64, c128 and the 8-bit float types)");
}

Status ResolveStep(EwOp op, ElementType type, const ElementType* operand_types, int64_t attr,
                   StepKernel* kernel) {
  *kernel = StepKernel();
  PJRTKIT_RETURN_IF_ERROR(CheckElementType(type));
  const int arity = NumOperands(op);
  for (int i = 0; i < arity; ++i) PJRTKIT_RETURN_IF_ERROR(CheckElementType(operand_types[i]));
  if (arity == 0) return OkStatus();
  if (op == EwOp::kCompare) {
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "a result", ElementType::kPred, type));
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 1", operand_types[0], operand_types[1]));
    return ResolveCompare(operand_types[0], attr, kernel);
  }
  if (arity == 3) return ResolveTernary(op, type, operand_types, kernel);
  if (arity == 2) return ResolveBinary(op, type, operand_types, kernel);
  const ElementType a = operand_types[0];
  if (op == EwOp::kConvert) return ResolveConvert(type, a, kernel);
  if (op == EwOp::kBitcastConvert) return ResolveBitcast(type, a, kernel);
  if (op == EwOp::kReducePrecision) {
    PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "operand 0", type, a));
    return ResolveReducePrecision(type, attr, kernel);
  }
  PJRTKIT_RETURN_IF_ERROR(ExpectSame(op, "a result", ResultTypeOf(op, a), type));
  kernel->fn = FamilyKernel(op, a);
  if (kernel->fn == nullptr) return NotSupported(op, Name(a));
  kernel->aux = TypedAux(op, a);
  kernel->rounding = LowRounding(type, /*op_result=*/true);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
