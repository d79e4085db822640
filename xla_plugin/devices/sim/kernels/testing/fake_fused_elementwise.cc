// TEST-ONLY stand-in for the fused elementwise engine (kernels/fused_elementwise.h) while the
// real one is being written: a slow scalar interpreter of the few ops the reduction kernels' tests
// use (input, constant, add, subtract, multiply, maximum, minimum, and, or, xor, negate, compare,
// select, convert) on pred, integers, f16, bf16, f32, f64, c64 and c128, with the engine's
// conventions (steps read earlier steps; kInput reads input `attr`; compare's attr is
// direction | type << 8; low-precision floats computed in f32 and rounded after each step). The
// reduction tests link the real engine instead once it lands; nothing else may link this.
#include <cmath>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace {

struct Value {
  double re = 0;   // Floats, and the real part of complex values.
  double im = 0;   // Imaginary part.
  int64_t i = 0;   // Signed integers (sign-extended) and pred.
  uint64_t u = 0;  // Unsigned integers.
};

enum class Kind { kPred, kSigned, kUnsigned, kFloat, kComplex, kOther };

Kind KindOf(ElementType t) {
  switch (t) {
    case ElementType::kPred:
      return Kind::kPred;
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      return Kind::kSigned;
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
      return Kind::kUnsigned;
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      return Kind::kFloat;
    case ElementType::kC64:
    case ElementType::kC128:
      return Kind::kComplex;
    default:
      return Kind::kOther;
  }
}

int Bytes(ElementType t) { return ElementTypeBits(t) / 8 > 0 ? ElementTypeBits(t) / 8 : 1; }

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float value;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    value = mant == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits |= sign;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (x >= 0x477ff000u) return sign | 0x7c00;
  if (x < 0x38800000u) {
    float a;
    std::memcpy(&a, &x, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  x += 0xfff + ((x >> 13) & 1);
  x -= (127u - 15u) << 23;
  return sign | static_cast<uint16_t>(x >> 13);
}

float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

// Rounds a float result to `t` (held as double).
double RoundTo(ElementType t, double v) {
  switch (t) {
    case ElementType::kF32:
    case ElementType::kC64:
      return static_cast<float>(v);
    case ElementType::kF16:
      return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case ElementType::kBF16:
      return Bf16ToFloat(FloatToBf16(static_cast<float>(v)));
    default:
      return v;
  }
}

Value Normalize(ElementType t, Value v) {
  const int bits = ElementTypeBits(t);
  switch (KindOf(t)) {
    case Kind::kPred:
      v.i = v.i != 0;
      break;
    case Kind::kSigned:
      if (bits < 64) {
        const uint64_t mask = (uint64_t{1} << bits) - 1;
        uint64_t raw = static_cast<uint64_t>(v.i) & mask;
        if (raw >> (bits - 1)) raw |= ~mask;
        v.i = static_cast<int64_t>(raw);
      }
      break;
    case Kind::kUnsigned:
      if (bits < 64) v.u &= (uint64_t{1} << bits) - 1;
      break;
    case Kind::kFloat:
      v.re = RoundTo(t, v.re);
      break;
    case Kind::kComplex:
      v.re = RoundTo(t, v.re);
      v.im = RoundTo(t, v.im);
      break;
    default:
      break;
  }
  return v;
}

Value Read(ElementType t, const void* data, int64_t k) {
  const char* p = static_cast<const char*>(data) + k * Bytes(t);
  Value v;
  switch (t) {
    case ElementType::kPred:
      v.i = *reinterpret_cast<const uint8_t*>(p) != 0;
      break;
    case ElementType::kS8:
      v.i = *reinterpret_cast<const int8_t*>(p);
      break;
    case ElementType::kS16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      v.i = x;
      break;
    }
    case ElementType::kS32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      v.i = x;
      break;
    }
    case ElementType::kS64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      v.i = x;
      break;
    }
    case ElementType::kU8:
      v.u = *reinterpret_cast<const uint8_t*>(p);
      break;
    case ElementType::kU16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v.u = x;
      break;
    }
    case ElementType::kU32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      v.u = x;
      break;
    }
    case ElementType::kU64: {
      uint64_t x;
      std::memcpy(&x, p, 8);
      v.u = x;
      break;
    }
    case ElementType::kF16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v.re = HalfToFloat(x);
      break;
    }
    case ElementType::kBF16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v.re = Bf16ToFloat(x);
      break;
    }
    case ElementType::kF32: {
      float x;
      std::memcpy(&x, p, 4);
      v.re = x;
      break;
    }
    case ElementType::kF64: {
      double x;
      std::memcpy(&x, p, 8);
      v.re = x;
      break;
    }
    case ElementType::kC64: {
      float x[2];
      std::memcpy(x, p, 8);
      v.re = x[0];
      v.im = x[1];
      break;
    }
    case ElementType::kC128: {
      double x[2];
      std::memcpy(x, p, 16);
      v.re = x[0];
      v.im = x[1];
      break;
    }
    default:
      break;
  }
  return v;
}

void Write(ElementType t, void* data, int64_t k, const Value& v) {
  char* p = static_cast<char*>(data) + k * Bytes(t);
  switch (t) {
    case ElementType::kPred:
      *reinterpret_cast<uint8_t*>(p) = v.i != 0;
      break;
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      std::memcpy(p, &v.i, Bytes(t));  // Little-endian truncation.
      break;
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
      std::memcpy(p, &v.u, Bytes(t));
      break;
    case ElementType::kF16: {
      uint16_t x = FloatToHalf(static_cast<float>(v.re));
      std::memcpy(p, &x, 2);
      break;
    }
    case ElementType::kBF16: {
      uint16_t x = FloatToBf16(static_cast<float>(v.re));
      std::memcpy(p, &x, 2);
      break;
    }
    case ElementType::kF32: {
      float x = static_cast<float>(v.re);
      std::memcpy(p, &x, 4);
      break;
    }
    case ElementType::kF64:
      std::memcpy(p, &v.re, 8);
      break;
    case ElementType::kC64: {
      float x[2] = {static_cast<float>(v.re), static_cast<float>(v.im)};
      std::memcpy(p, x, 8);
      break;
    }
    case ElementType::kC128: {
      double x[2] = {v.re, v.im};
      std::memcpy(p, x, 16);
      break;
    }
    default:
      break;
  }
}

Value Convert(ElementType from, ElementType to, Value v) {
  Value r;
  const Kind a = KindOf(from), b = KindOf(to);
  double real = a == Kind::kSigned || a == Kind::kPred ? static_cast<double>(v.i)
                : a == Kind::kUnsigned                 ? static_cast<double>(v.u)
                                                       : v.re;
  if (b == Kind::kFloat || b == Kind::kComplex) {
    r.re = real;
    r.im = a == Kind::kComplex ? v.im : 0;
  } else if (a == Kind::kFloat || a == Kind::kComplex) {
    if (b == Kind::kPred)
      r.i = real != 0;
    else if (b == Kind::kSigned)
      r.i = std::isnan(real) ? 0 : static_cast<int64_t>(real);
    else
      r.u = std::isnan(real) || real < 0 ? 0 : static_cast<uint64_t>(real);
  } else {
    r.i = a == Kind::kUnsigned ? static_cast<int64_t>(v.u) : v.i;
    r.u = a == Kind::kUnsigned ? v.u : static_cast<uint64_t>(v.i);
    if (b == Kind::kPred) r.i = (a == Kind::kUnsigned ? v.u != 0 : v.i != 0);
  }
  return Normalize(to, r);
}

double FMax(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double FMin(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

Value Binary(EwOp op, ElementType t, const Value& a, const Value& b) {
  Value r;
  const Kind k = KindOf(t);
  if (k == Kind::kPred) {
    switch (op) {
      case EwOp::kAdd:
      case EwOp::kOr:
      case EwOp::kMaximum:
        r.i = a.i | b.i;
        break;
      case EwOp::kMultiply:
      case EwOp::kAnd:
      case EwOp::kMinimum:
        r.i = a.i & b.i;
        break;
      case EwOp::kXor:
      case EwOp::kSubtract:
        r.i = a.i ^ b.i;
        break;
      default:
        break;
    }
  } else if (k == Kind::kSigned || k == Kind::kUnsigned) {
    const uint64_t x = k == Kind::kSigned ? static_cast<uint64_t>(a.i) : a.u;
    const uint64_t y = k == Kind::kSigned ? static_cast<uint64_t>(b.i) : b.u;
    uint64_t z = 0;
    switch (op) {
      case EwOp::kAdd:
        z = x + y;
        break;
      case EwOp::kSubtract:
        z = x - y;
        break;
      case EwOp::kMultiply:
        z = x * y;
        break;
      case EwOp::kAnd:
        z = x & y;
        break;
      case EwOp::kOr:
        z = x | y;
        break;
      case EwOp::kXor:
        z = x ^ y;
        break;
      case EwOp::kMaximum:
        z = k == Kind::kSigned ? (a.i > b.i ? x : y) : (a.u > b.u ? x : y);
        break;
      case EwOp::kMinimum:
        z = k == Kind::kSigned ? (a.i < b.i ? x : y) : (a.u < b.u ? x : y);
        break;
      default:
        break;
    }
    r.i = static_cast<int64_t>(z);
    r.u = z;
  } else if (k == Kind::kFloat) {
    switch (op) {
      case EwOp::kAdd:
        r.re = a.re + b.re;
        break;
      case EwOp::kSubtract:
        r.re = a.re - b.re;
        break;
      case EwOp::kMultiply:
        r.re = a.re * b.re;
        break;
      case EwOp::kMaximum:
        r.re = FMax(a.re, b.re);
        break;
      case EwOp::kMinimum:
        r.re = FMin(a.re, b.re);
        break;
      default:
        break;
    }
  } else if (k == Kind::kComplex) {
    switch (op) {
      case EwOp::kAdd:
        r.re = a.re + b.re;
        r.im = a.im + b.im;
        break;
      case EwOp::kSubtract:
        r.re = a.re - b.re;
        r.im = a.im - b.im;
        break;
      case EwOp::kMultiply:
        r.re = a.re * b.re - a.im * b.im;
        r.im = a.re * b.im + a.im * b.re;
        break;
      default:
        break;
    }
  }
  return Normalize(t, r);
}

bool Compare(int64_t attr, ElementType t, const Value& a, const Value& b) {
  const ComparisonDirection dir = static_cast<ComparisonDirection>(attr & 0xff);
  const Kind k = KindOf(t);
  if (k == Kind::kComplex) {
    const bool eq = a.re == b.re && a.im == b.im;
    return dir == ComparisonDirection::kEq ? eq : !eq;
  }
  int c;  // -1, 0, 1, or 2 for unordered.
  if (k == Kind::kFloat) {
    if (a.re != a.re || b.re != b.re)
      c = 2;
    else
      c = a.re < b.re ? -1 : (a.re > b.re ? 1 : 0);
  } else if (k == Kind::kUnsigned) {
    c = a.u < b.u ? -1 : (a.u > b.u ? 1 : 0);
  } else {
    c = a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
  }
  switch (dir) {
    case ComparisonDirection::kEq:
      return c == 0;
    case ComparisonDirection::kNe:
      return c != 0;
    case ComparisonDirection::kGe:
      return c == 0 || c == 1;
    case ComparisonDirection::kGt:
      return c == 1;
    case ComparisonDirection::kLe:
      return c == 0 || c == -1;
    case ComparisonDirection::kLt:
      return c == -1;
  }
  return false;
}

}  // namespace

const char* EwOpName(EwOp op) {
  switch (op) {
    case EwOp::kInput:
      return "input";
    case EwOp::kConstant:
      return "constant";
    case EwOp::kAdd:
      return "add";
    case EwOp::kSubtract:
      return "subtract";
    case EwOp::kMultiply:
      return "multiply";
    case EwOp::kMaximum:
      return "maximum";
    case EwOp::kMinimum:
      return "minimum";
    case EwOp::kAnd:
      return "and";
    case EwOp::kOr:
      return "or";
    case EwOp::kXor:
      return "xor";
    case EwOp::kNegate:
      return "negate";
    case EwOp::kCompare:
      return "compare";
    case EwOp::kSelect:
      return "select";
    case EwOp::kConvert:
      return "convert";
    default:
      return "op";
  }
}

Status CheckSupported(EwOp op, ElementType type, ElementType) {
  const Kind k = KindOf(type);
  if (k == Kind::kOther) return Unimplemented("fake engine: type");
  switch (op) {
    case EwOp::kAnd:
    case EwOp::kOr:
    case EwOp::kXor:
      if (k == Kind::kFloat || k == Kind::kComplex) {
        return InvalidArgument(std::string(EwOpName(op)) + " is not defined on " +
                               ElementTypeName(type));
      }
      return OkStatus();
    case EwOp::kMaximum:
    case EwOp::kMinimum:
      if (k == Kind::kComplex) return Unimplemented("fake engine: complex max/min");
      return OkStatus();
    case EwOp::kInput:
    case EwOp::kConstant:
    case EwOp::kAdd:
    case EwOp::kSubtract:
    case EwOp::kMultiply:
    case EwOp::kNegate:
    case EwOp::kCompare:
    case EwOp::kSelect:
    case EwOp::kConvert:
      return OkStatus();
    default:
      return Unimplemented(std::string("fake engine: ") + EwOpName(op));
  }
}

Status Validate(const FusedElementwise& fused) {
  for (size_t s = 0; s < fused.steps.size(); ++s) {
    const EwStep& step = fused.steps[s];
    PJRTKIT_RETURN_IF_ERROR(CheckSupported(step.op, step.type, step.operand_type));
    if (step.op == EwOp::kInput) {
      if (step.attr < 0 || step.attr >= static_cast<int64_t>(fused.inputs.size())) {
        return InvalidArgument("input step reads no input");
      }
      continue;
    }
    const int arity = step.op == EwOp::kConstant                                ? 0
                      : step.op == EwOp::kSelect                                ? 3
                      : (step.op == EwOp::kNegate || step.op == EwOp::kConvert) ? 1
                                                                                : 2;
    for (int k = 0; k < arity; ++k) {
      if (step.operands[k] < 0 || step.operands[k] >= static_cast<int32_t>(s)) {
        return InvalidArgument("step " + std::to_string(s) + " reads no earlier step");
      }
    }
    if (step.op == EwOp::kConstant &&
        step.constant.size() != static_cast<size_t>(Bytes(step.type))) {
      return InvalidArgument("constant of the wrong size");
    }
  }
  for (int32_t out : fused.outputs) {
    if (out < 0 || out >= static_cast<int32_t>(fused.steps.size())) {
      return InvalidArgument("output is no step");
    }
  }
  return OkStatus();
}

void Evaluate(const FusedElementwise& fused, const void* const* inputs, void* const* outputs) {
  int64_t n = 1;
  for (int64_t d : fused.dims) n *= d;
  std::vector<Value> values(fused.steps.size());
  std::vector<int64_t> index(fused.dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    for (size_t s = 0; s < fused.steps.size(); ++s) {
      const EwStep& step = fused.steps[s];
      const Value* a = step.operands[0] >= 0 ? &values[step.operands[0]] : nullptr;
      const Value* b = step.operands[1] >= 0 ? &values[step.operands[1]] : nullptr;
      const Value* c = step.operands[2] >= 0 ? &values[step.operands[2]] : nullptr;
      switch (step.op) {
        case EwOp::kInput: {
          const EwInput& in = fused.inputs[step.attr];
          int64_t offset = 0;
          for (size_t d = 0; d < in.strides.size(); ++d) offset += index[d] * in.strides[d];
          values[s] = Read(in.type, inputs[step.attr], offset);
          break;
        }
        case EwOp::kConstant:
          values[s] = Read(step.type, step.constant.data(), 0);
          break;
        case EwOp::kNegate: {
          Value zero;
          values[s] = Binary(EwOp::kSubtract, step.type, zero, *a);
          break;
        }
        case EwOp::kConvert:
          values[s] = Convert(step.operand_type, step.type, *a);
          break;
        case EwOp::kCompare: {
          Value r;
          r.i = Compare(step.attr, step.operand_type, *a, *b);
          values[s] = r;
          break;
        }
        case EwOp::kSelect:
          values[s] = a->i ? *b : *c;
          break;
        default:
          values[s] = Binary(step.op, step.type, *a, *b);
          break;
      }
    }
    for (size_t o = 0; o < fused.outputs.size(); ++o) {
      Write(fused.steps[fused.outputs[o]].type, outputs[o], e, values[fused.outputs[o]]);
    }
    for (int d = static_cast<int>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < fused.dims[d]) break;
      index[d] = 0;
    }
  }
}

void ConvertArray(ElementType from, const void* src, ElementType to, void* dst, int64_t n) {
  for (int64_t k = 0; k < n; ++k) Write(to, dst, k, Convert(from, to, Read(from, src, k)));
}

}  // namespace sim
}  // namespace pjrtkit
