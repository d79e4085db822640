#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/elementwise_plan.h"
#include "xla_plugin/devices/sim/kernels/kernel_registry.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr const char* kOpNames[kNumEwOps] = {
    "input", "constant", "iota", "abs", "negate", "sign", "not", "exponential",
    "exponential_minus_one", "log", "log_plus_one", "logistic", "tanh", "sine", "cosine", "tan",
    "sqrt", "rsqrt", "cbrt", "floor", "ceil", "round_nearest_afz", "round_nearest_even",
    "is_finite", "popcnt", "count_leading_zeros", "real", "imag", "convert", "bitcast_convert",
    "reduce_precision", "add", "subtract", "multiply", "divide", "remainder", "power", "maximum",
    "minimum", "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "atan2", "complex", "compare", "select", "clamp"};

// "step 3 (add: f32 from f32, s32)"
std::string StepLabel(const FusedElementwise& fused, size_t i) {
  const EwStep& s = fused.steps[i];
  std::string label = "step " + std::to_string(i) + " (" + EwOpName(s.op) + ": " +
                      ElementTypeName(s.type);
  const int arity = NumOperands(s.op);
  for (int j = 0; j < arity; ++j) {
    const int32_t o = s.operands[j];
    const bool valid = o >= 0 && static_cast<size_t>(o) < i;
    label += (j == 0 ? " from " : ", ");
    label += valid ? ElementTypeName(fused.steps[o].type) : "?";
  }
  return label + ")";
}

Status StepError(const FusedElementwise& fused, size_t i, const Status& status) {
  return Status(status.code(), StepLabel(fused, i) + ": " + status.message());
}

Status StepInvalid(const FusedElementwise& fused, size_t i, const std::string& message) {
  return InvalidArgument(StepLabel(fused, i) + ": " + message);
}

Status ValidateShape(const FusedElementwise& fused) {
  int64_t total = 1;
  for (size_t d = 0; d < fused.dims.size(); ++d) {
    const int64_t n = fused.dims[d];
    if (n < 0) {
      return InvalidArgument("fused elementwise dims[" + std::to_string(d) + "] is " +
                             std::to_string(n) + "; expected >= 0");
    }
    if (n != 0 && total > std::numeric_limits<int64_t>::max() / n) {
      return InvalidArgument("fused elementwise output has more than 2^63 elements");
    }
    total *= n;
  }
  for (size_t i = 0; i < fused.inputs.size(); ++i) {
    const EwInput& input = fused.inputs[i];
    const std::string name = "fused elementwise input " + std::to_string(i);
    Status type_ok = CheckElementType(input.type);
    if (!type_ok.ok()) return Status(type_ok.code(), name + ": " + type_ok.message());
    if (input.strides.size() != fused.dims.size()) {
      return InvalidArgument(name + " has " + std::to_string(input.strides.size()) +
                             " strides; expected one per output dimension (" +
                             std::to_string(fused.dims.size()) + ")");
    }
    for (int64_t s : input.strides) {
      if (s < 0) return InvalidArgument(name + " has a negative stride; expected >= 0");
    }
  }
  return OkStatus();
}

Status ValidateLeaf(const FusedElementwise& fused, size_t i) {
  const EwStep& s = fused.steps[i];
  if (s.op == EwOp::kInput) {
    if (s.attr < 0 || static_cast<size_t>(s.attr) >= fused.inputs.size()) {
      return StepInvalid(fused, i,
                         "input index " + std::to_string(s.attr) + " is out of range [0, " +
                             std::to_string(fused.inputs.size()) + ")");
    }
    const ElementType input_type = fused.inputs[s.attr].type;
    if (input_type != s.type) {
      return StepInvalid(fused, i,
                         "reads input " + std::to_string(s.attr) + " of type " +
                             ElementTypeName(input_type) + " as " + ElementTypeName(s.type));
    }
  } else if (s.op == EwOp::kConstant) {
    const size_t bytes = static_cast<size_t>(StorageBytes(s.type));
    if (s.constant.size() != bytes) {
      return StepInvalid(fused, i, "constant has " + std::to_string(s.constant.size()) +
                                       " bytes; expected " + std::to_string(bytes));
    }
  } else if (s.op == EwOp::kIota) {
    if (s.attr < 0 || static_cast<size_t>(s.attr) >= fused.dims.size()) {
      return StepInvalid(fused, i, "iota dimension " + std::to_string(s.attr) +
                                       " is out of range [0, " +
                                       std::to_string(fused.dims.size()) + ")");
    }
  }
  return OkStatus();
}

Status ValidateStep(const FusedElementwise& fused, size_t i) {
  const EwStep& s = fused.steps[i];
  if (static_cast<int>(s.op) >= kNumEwOps) {
    return InvalidArgument("step " + std::to_string(i) + " has op " +
                           std::to_string(static_cast<int>(s.op)) + ", which is not an EwOp");
  }
  const int arity = NumOperands(s.op);
  ElementType operand_types[3] = {};
  for (int j = 0; j < 3; ++j) {
    const int32_t o = s.operands[j];
    if (j >= arity) {
      if (o != -1) {
        return StepInvalid(fused, i, "operand " + std::to_string(j) + " is " + std::to_string(o) +
                                         "; the op takes " + std::to_string(arity) +
                                         " operand(s), so it must be -1");
      }
      continue;
    }
    if (o < 0 || static_cast<size_t>(o) >= i) {
      return StepInvalid(fused, i, "operand " + std::to_string(j) + " is " + std::to_string(o) +
                                       "; expected an earlier step in [0, " + std::to_string(i) +
                                       ")");
    }
    operand_types[j] = fused.steps[o].type;
  }
  if (arity > 0 && s.operand_type != ElementType::kInvalid && s.operand_type != operand_types[0]) {
    return StepInvalid(fused, i, std::string("operand_type is ") + ElementTypeName(s.operand_type) +
                                     " but operand 0 has type " +
                                     ElementTypeName(operand_types[0]));
  }
  PJRTKIT_RETURN_IF_ERROR(ValidateLeaf(fused, i));
  StepKernel kernel;
  Status status = ResolveStep(s.op, s.type, operand_types, s.attr, &kernel);
  if (!status.ok()) return StepError(fused, i, status);
  return OkStatus();
}

}  // namespace

const char* EwOpName(EwOp op) {
  const int i = static_cast<int>(op);
  return i < kNumEwOps ? kOpNames[i] : "unknown";
}

bool EwOpFromName(const std::string& name, EwOp* op) {
  for (int i = 0; i < kNumEwOps; ++i) {
    if (name == kOpNames[i]) {
      *op = static_cast<EwOp>(i);
      return true;
    }
  }
  return false;
}

Status Validate(const FusedElementwise& fused) {
  PJRTKIT_RETURN_IF_ERROR(ValidateShape(fused));
  for (size_t i = 0; i < fused.steps.size(); ++i) PJRTKIT_RETURN_IF_ERROR(ValidateStep(fused, i));
  for (size_t k = 0; k < fused.outputs.size(); ++k) {
    const int32_t o = fused.outputs[k];
    if (o < 0 || static_cast<size_t>(o) >= fused.steps.size()) {
      return InvalidArgument("fused elementwise output " + std::to_string(k) + " is step " +
                             std::to_string(o) + "; expected a step in [0, " +
                             std::to_string(fused.steps.size()) + ")");
    }
  }
  return OkStatus();
}

Status CheckSupported(EwOp op, ElementType type, ElementType operand_type) {
  if (static_cast<int>(op) >= kNumEwOps) {
    return InvalidArgument("op " + std::to_string(static_cast<int>(op)) + " is not an EwOp");
  }
  ElementType operands[3];
  ElementType a = operand_type != ElementType::kInvalid ? operand_type : type;
  if (op == EwOp::kComplex && operand_type == ElementType::kInvalid) {
    a = ComplexComponentType(type) != ElementType::kInvalid ? ComplexComponentType(type) : type;
  }
  if ((op == EwOp::kCompare || op == EwOp::kConvert || op == EwOp::kBitcastConvert ||
       op == EwOp::kIsFinite) &&
      operand_type == ElementType::kInvalid) {
    return InvalidArgument(std::string("CheckSupported(") + EwOpName(op) +
                           ") needs the operand type");
  }
  operands[0] = a;
  operands[1] = a;
  operands[2] = a;
  if (op == EwOp::kSelect) {
    operands[0] = ElementType::kPred;
    operands[1] = operands[2] = type;
  }
  int64_t attr = 0;
  if (op == EwOp::kReducePrecision) attr = (int64_t{8} << 32) | 23;
  StepKernel kernel;
  return ResolveStep(op, type, operands, attr, &kernel);
}

void Evaluate(const FusedElementwise& fused, const void* const* inputs, void* const* outputs) {
  ElementwisePlan::CreateValidated(fused).Run(inputs, outputs);
}

void EvaluateParallel(const FusedElementwise& fused, const void* const* inputs,
                      void* const* outputs, const ParallelFor& parallel, int parts) {
  const ElementwisePlan plan = ElementwisePlan::CreateValidated(fused);
  const int64_t total = plan.total();
  if (parts < 2 || total < kParallelElements) {
    plan.Run(inputs, outputs);
    return;
  }
  // Whole blocks per part, so that every part but the last starts and ends on a block.
  const int64_t blocks = (total + ElementwisePlan::kBlock - 1) / ElementwisePlan::kBlock;
  const int64_t per_part = (blocks + parts - 1) / parts * ElementwisePlan::kBlock;
  const int64_t count = (total + per_part - 1) / per_part;
  const size_t bytes = plan.scratch_bytes();
  parallel(count, [&](int64_t part) {
    constexpr uintptr_t kAlign = 64;
    std::unique_ptr<unsigned char[]> buffer(new unsigned char[bytes + kAlign]);
    const uintptr_t p = reinterpret_cast<uintptr_t>(buffer.get());
    void* scratch = reinterpret_cast<void*>((p + kAlign - 1) / kAlign * kAlign);
    plan.RunRange(inputs, outputs, scratch, part * per_part, (part + 1) * per_part);
  });
}

void ConvertArray(ElementType from, const void* src, ElementType to, void* dst, int64_t n) {
  if (n <= 0) return;
  if (from == to) {
    if (src != dst) std::memmove(dst, src, static_cast<size_t>(n) * StorageBytes(from));
    return;
  }
  FusedElementwise fused;
  fused.dims = {n};
  fused.inputs = {EwInput{from, {1}}};
  EwStep input;
  input.op = EwOp::kInput;
  input.type = from;
  EwStep convert;
  convert.op = EwOp::kConvert;
  convert.type = to;
  convert.operand_type = from;
  convert.operands[0] = 0;
  fused.steps = {input, convert};
  fused.outputs = {1};
  const void* in[1] = {src};
  void* out[1] = {dst};
  Evaluate(fused, in, out);
}

}  // namespace sim
}  // namespace pjrtkit
