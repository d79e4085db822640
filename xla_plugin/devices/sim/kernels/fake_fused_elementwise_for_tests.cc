// TEST-ONLY STAND-IN for the fused elementwise engine (fused_elementwise.h is an interface stub
// until the numerics branch lands): just enough of Validate and Evaluate, on scalars, for the
// sort tests' comparator bodies. Delete this file and its BUILD target when the real engine
// lands, and link that instead.
//
// Encoding it assumes (sort_test.cc's ComparatorBuilder writes the same): kInput: attr = input
// index; kConstant: `constant` holds the element's bytes; kCompare: operands 0 and 1 of
// operand_type, attr = direction | comparison type << 8; kAnd, kOr, kNot on pred; kSelect:
// operands (pred, on true, on false); kAdd on integers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace {

// Bytes of a value the fake holds (wider types keep their low 8 bytes: the fake has no complex).
int Bytes(ElementType type) {
  const int bits = ElementTypeBits(type);
  return bits <= 8 ? 1 : bits >= 64 ? 8 : bits / 8;
}

int64_t SignExtend(uint64_t bits, int bytes) {
  const int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(bits << shift) >> shift;
}

double Decode(ElementType type, uint64_t bits) {
  switch (type) {
    case ElementType::kF16: {
      const int e = static_cast<int>((bits >> 10) & 0x1f);
      const double m = static_cast<double>(bits & 0x3ff);
      const double v = e == 0    ? std::ldexp(m, -24)
                       : e == 31 ? (m == 0 ? INFINITY : NAN)
                                 : std::ldexp(m + 1024, e - 25);
      return (bits & 0x8000) ? -v : v;
    }
    case ElementType::kBF16:
    case ElementType::kF32: {
      const uint32_t b = type == ElementType::kBF16 ? static_cast<uint32_t>(bits << 16)
                                                    : static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    default:
      return NAN;
  }
}

uint64_t TotalOrder(uint64_t bits, int bytes) {
  const uint64_t sign = uint64_t{1} << (8 * bytes - 1);
  const uint64_t all = bytes == 8 ? ~uint64_t{0} : (sign << 1) - 1;
  return (bits & sign) ? (~bits & all) : (bits | sign);
}

template <typename T>
bool Apply(ComparisonDirection d, T a, T b) {
  switch (d) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kLt:
      return a < b;
  }
  return false;
}

bool Compare(const EwStep& step, uint64_t a, uint64_t b) {
  const auto direction = static_cast<ComparisonDirection>(step.attr & 0xff);
  const auto type = static_cast<ComparisonType>((step.attr >> 8) & 0xff);
  const int bytes = Bytes(step.operand_type);
  switch (type) {
    case ComparisonType::kFloat:
      return Apply(direction, Decode(step.operand_type, a), Decode(step.operand_type, b));
    case ComparisonType::kTotalOrder:
      return Apply(direction, TotalOrder(a, bytes), TotalOrder(b, bytes));
    case ComparisonType::kSigned:
      return Apply(direction, SignExtend(a, bytes), SignExtend(b, bytes));
    default:
      return Apply(direction, a, b);
  }
}

}  // namespace

Status Validate(const FusedElementwise& fused) {
  for (size_t s = 0; s < fused.steps.size(); ++s) {
    const EwStep& step = fused.steps[s];
    if (step.op == EwOp::kInput &&
        (step.attr < 0 || static_cast<size_t>(step.attr) >= fused.inputs.size())) {
      return InvalidArgument("fake Validate: step " + std::to_string(s) + " reads no input");
    }
    for (int32_t operand : step.operands) {
      if (operand >= static_cast<int32_t>(s)) {
        return InvalidArgument("fake Validate: step " + std::to_string(s) + " reads a later step");
      }
    }
  }
  for (int32_t out : fused.outputs) {
    if (out < 0 || static_cast<size_t>(out) >= fused.steps.size()) {
      return InvalidArgument("fake Validate: output is no step");
    }
  }
  return OkStatus();
}

Status CheckSupported(EwOp, ElementType, ElementType) { return OkStatus(); }

void Evaluate(const FusedElementwise& fused, const void* const* inputs, void* const* outputs) {
  std::vector<uint64_t> values(fused.steps.size(), 0);
  for (size_t s = 0; s < fused.steps.size(); ++s) {
    const EwStep& step = fused.steps[s];
    const int bytes = Bytes(step.type);
    const uint64_t mask = bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
    const uint64_t a = step.operands[0] >= 0 ? values[step.operands[0]] : 0;
    const uint64_t b = step.operands[1] >= 0 ? values[step.operands[1]] : 0;
    const uint64_t c = step.operands[2] >= 0 ? values[step.operands[2]] : 0;
    uint64_t v = 0;
    switch (step.op) {
      case EwOp::kInput:
        std::memcpy(&v, inputs[step.attr], static_cast<size_t>(bytes));
        break;
      case EwOp::kConstant:
        std::memcpy(&v, step.constant.data(), std::min<size_t>(step.constant.size(), 8));
        break;
      case EwOp::kCompare:
        v = Compare(step, a, b) ? 1 : 0;
        break;
      case EwOp::kAnd:
        v = a & b;
        break;
      case EwOp::kOr:
        v = a | b;
        break;
      case EwOp::kNot:
        v = step.type == ElementType::kPred ? (a ^ 1) : ~a;
        break;
      case EwOp::kSelect:
        v = a ? b : c;
        break;
      case EwOp::kAdd:
        v = a + b;
        break;
      default:
        v = 0;
    }
    values[s] = v & mask;
  }
  for (size_t o = 0; o < fused.outputs.size(); ++o) {
    const EwStep& step = fused.steps[fused.outputs[o]];
    std::memcpy(outputs[o], &values[fused.outputs[o]], static_cast<size_t>(Bytes(step.type)));
  }
}

void ConvertArray(ElementType, const void*, ElementType, void*, int64_t) {}

const char* EwOpName(EwOp) { return "fake"; }

}  // namespace sim
}  // namespace pjrtkit
