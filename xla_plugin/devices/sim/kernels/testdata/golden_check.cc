#include "xla_plugin/devices/sim/kernels/testdata/golden_check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"
#include "xla_plugin/devices/sim/kernels/kernel_registry.h"

namespace pjrtkit {
namespace sim {
namespace golden {
namespace {

constexpr int64_t kFar = std::numeric_limits<int64_t>::max() / 4;

std::string Hex(const unsigned char* p, int bytes) {
  std::string s = "0x";
  char buf[3];
  for (int i = bytes - 1; i >= 0; --i) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    s += buf;
  }
  return s;
}

uint64_t Load(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

// A real float's bits as an ordered key (sign-magnitude to integer); nan set for NaN.
int64_t FloatKey(ElementType type, uint64_t bits, bool* nan) {
  LowFloat format;
  if (LowFloatOf(type, &format)) {
    *nan = std::isnan(DecodeToF32(format, static_cast<uint32_t>(bits)));
    if (type == ElementType::kF8E8M0FNU) return static_cast<int64_t>(bits);
    const uint64_t sign = ElementTypeBits(type) == 16 ? 0x8000 : 0x80;
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) ? -magnitude : magnitude;
  }
  if (type == ElementType::kF32) {
    *nan = std::isnan(BitCast<float>(static_cast<uint32_t>(bits)));
    const int64_t magnitude = static_cast<int64_t>(bits & 0x7fffffffu);
    return (bits & 0x80000000u) ? -magnitude : magnitude;
  }
  *nan = std::isnan(BitCast<double>(bits));
  const int64_t magnitude = static_cast<int64_t>(bits & 0x7fffffffffffffffull);
  return (bits >> 63) ? -magnitude : magnitude;
}

// ulps between two real floats of `type`; kFar when exactly one is NaN, 0 when both are.
int64_t FloatDistance(ElementType type, uint64_t got, uint64_t want) {
  bool got_nan = false, want_nan = false;
  const int64_t a = FloatKey(type, got, &got_nan);
  const int64_t b = FloatKey(type, want, &want_nan);
  if (got_nan || want_nan) return got_nan == want_nan ? 0 : kFar;
  return a > b ? a - b : b - a;
}

double ComponentValue(ElementType component, uint64_t bits) {
  return component == ElementType::kF32 ? BitCast<float>(static_cast<uint32_t>(bits))
                                        : BitCast<double>(bits);
}

// Complex distance: the larger part distance, or (when finite) the difference measured in ulps of
// the larger expected part's magnitude.
int64_t ComplexDistance(ElementType type, const unsigned char* got, const unsigned char* want) {
  const ElementType c = ComplexComponentType(type);
  const int b = StorageBytes(c);
  const uint64_t gr = Load(got, b), gi = Load(got + b, b);
  const uint64_t wr = Load(want, b), wi = Load(want + b, b);
  const int64_t parts = std::max(FloatDistance(c, gr, wr), FloatDistance(c, gi, wi));
  const double vr = ComponentValue(c, wr), vi = ComponentValue(c, wi);
  const double scale = std::max(std::fabs(vr), std::fabs(vi));
  if (parts == 0 || !std::isfinite(scale) || scale == 0) return parts;
  const double dr = std::fabs(ComponentValue(c, gr) - vr);
  const double di = std::fabs(ComponentValue(c, gi) - vi);
  if (!std::isfinite(dr) || !std::isfinite(di)) return parts;
  const float scale32 = static_cast<float>(scale);
  const double ulp = c == ElementType::kF32 ? std::nextafter(scale32, INFINITY) - scale32
                                            : std::nextafter(scale, INFINITY) - scale;
  const double relative = std::ceil(std::max(dr, di) / ulp);
  return std::min(parts, static_cast<int64_t>(std::min(relative, 1e15)));
}

// Equal bits, or both NaN (NaN sign and payload are not compared).
bool SameOrBothNaN(ElementType type, const unsigned char* got, const unsigned char* want) {
  const int bytes = StorageBytes(type);
  if (std::memcmp(got, want, bytes) == 0) return true;
  bool got_nan = false, want_nan = false;
  FloatKey(type, Load(got, bytes), &got_nan);
  FloatKey(type, Load(want, bytes), &want_nan);
  return got_nan && want_nan;
}

// Whether got matches want within `tolerance` ulps (0: exactly); *ulps receives the distance.
bool Matches(ElementType type, const unsigned char* got, const unsigned char* want,
             int64_t tolerance, int64_t* ulps) {
  const int bytes = StorageBytes(type);
  *ulps = 0;
  if (std::memcmp(got, want, bytes) == 0) return true;
  if (IsComplexType(type)) {
    const ElementType c = ComplexComponentType(type);
    const int b = StorageBytes(c);
    if (SameOrBothNaN(c, got, want) && SameOrBothNaN(c, got + b, want + b)) return true;
    *ulps = ComplexDistance(type, got, want);
    return tolerance > 0 && *ulps <= tolerance;
  }
  if (IsFloatType(type)) {
    if (SameOrBothNaN(type, got, want)) return true;
    *ulps = FloatDistance(type, Load(got, bytes), Load(want, bytes));
    return tolerance > 0 && *ulps <= tolerance;
  }
  *ulps = kFar;
  return false;
}

const InputSet* FindSet(const std::vector<InputSet>& sets, int type, int kind) {
  for (const InputSet& s : sets) {
    if (s.type == type && s.kind == kind) return &s;
  }
  return nullptr;
}

}  // namespace

CaseResult RunCase(const OpCase& c, const std::vector<InputSet>& sets, int64_t tolerance_ulps,
                   SkipRule skip) {
  CaseResult r;
  const ElementType rt = static_cast<ElementType>(c.result_type);
  const ElementType ot = static_cast<ElementType>(c.operand_type);
  r.label = std::string(c.op) + " " + ElementTypeName(rt) + " <- " + ElementTypeName(ot) +
            " (attr " + std::to_string(c.attr) + ")";
  EwOp op;
  if (!EwOpFromName(c.op, &op)) {
    r.failure = "unknown op name";
    return r;
  }
  const int arity = NumOperands(op);
  const int set_type = op == EwOp::kSelect ? c.result_type : c.operand_type;
  const InputSet* set = FindSet(sets, set_type, c.input_kind);
  if (set == nullptr) {
    r.failure = "no input set";
    return r;
  }
  ElementType in_types[3] = {ot, ot, ot};
  if (op == EwOp::kSelect) in_types[1] = in_types[2] = rt;
  FusedElementwise f;
  f.dims = {set->n};
  std::vector<std::string> data(arity);
  std::vector<const void*> inputs(arity);
  for (int j = 0; j < arity; ++j) {
    data[j] = Base64Decode(set->data[j]);
    if (static_cast<int64_t>(data[j].size()) != set->n * StorageBytes(in_types[j])) {
      r.failure = "input " + std::to_string(j) + " has the wrong size";
      return r;
    }
    inputs[j] = data[j].data();
    f.inputs.push_back(EwInput{in_types[j], {1}});
    EwStep leaf;
    leaf.op = EwOp::kInput;
    leaf.type = in_types[j];
    leaf.attr = j;
    f.steps.push_back(leaf);
  }
  EwStep step;
  step.op = op;
  step.type = rt;
  step.operand_type = in_types[0];
  step.attr = c.attr;
  for (int j = 0; j < arity; ++j) step.operands[j] = j;
  f.steps.push_back(step);
  f.outputs = {arity};
  Status valid = Validate(f);
  if (!valid.ok()) {
    r.failure = valid.ToString();
    return r;
  }
  const int bytes = StorageBytes(rt);
  const std::string want = Base64Decode(c.expected);
  if (static_cast<int64_t>(want.size()) != set->n * bytes) {
    r.failure = "expected result has the wrong size";
    return r;
  }
  std::string got(want.size(), '\0');
  void* outputs[1] = {&got[0]};
  Evaluate(f, inputs.data(), outputs);
  r.elements = set->n;
  for (int64_t i = 0; i < set->n; ++i) {
    const auto* g = reinterpret_cast<const unsigned char*>(got.data()) + i * bytes;
    const auto* w = reinterpret_cast<const unsigned char*>(want.data()) + i * bytes;
    if (skip != nullptr) {
      const unsigned char* operands[3] = {};
      for (int j = 0; j < arity; ++j) {
        operands[j] = reinterpret_cast<const unsigned char*>(data[j].data()) +
                      i * StorageBytes(in_types[j]);
      }
      if (skip(op, in_types, operands, w, rt)) {
        ++r.skipped;
        continue;
      }
    }
    int64_t ulps = 0;
    const bool ok = Matches(rt, g, w, tolerance_ulps, &ulps);
    if (ulps < kFar) r.max_ulps = std::max(r.max_ulps, ulps);
    if (ok) continue;
    if (++r.mismatches <= 6) {
      r.first_errors += "\n    [" + std::to_string(i) + "] in=(";
      for (int j = 0; j < arity; ++j) {
        const int ib = StorageBytes(in_types[j]);
        r.first_errors += (j ? ", " : "") +
                          Hex(reinterpret_cast<const unsigned char*>(data[j].data()) + i * ib, ib);
      }
      r.first_errors += ") got " + Hex(g, bytes) + " want " + Hex(w, bytes) +
                        (ulps >= kFar ? "" : " (" + std::to_string(ulps) + " ulps)");
    }
  }
  return r;
}

}  // namespace golden
}  // namespace sim
}  // namespace pjrtkit
