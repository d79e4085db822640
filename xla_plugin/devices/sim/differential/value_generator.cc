#include "xla_plugin/devices/sim/differential/value_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

uint64_t WidthMask(ElementType type) {
  const int width = ElementTypeBits(type);
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// The integer range of `type` as doubles (64-bit ends are rounded, only used for clipping).
void IntegerLimits(ElementType type, int64_t* lo, int64_t* hi) {
  const int width = ElementTypeBits(type);
  if (IsSigned(type)) {
    *lo = width >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (width - 1));
    *hi = width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1;
  } else {
    *lo = 0;
    *hi = width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << width) - 1;
  }
}

// The largest finite value's bits of float `type`.
uint64_t MaxFiniteBits(ElementType type) {
  const int width = ElementTypeBits(type);
  const uint64_t top = type == ElementType::kF8E8M0FNU ? 0xff : (uint64_t{1} << (width - 1)) - 1;
  if (type == ElementType::kF64) return FloatBits(type, std::numeric_limits<double>::max());
  if (type == ElementType::kF32) return FloatBits(type, std::numeric_limits<float>::max());
  for (uint64_t bits = top;; --bits) {
    const double v = FloatValue(type, bits);
    if (std::isfinite(v)) return bits;
  }
}

// The edge values of float `type` (bits), before filtering.
std::vector<uint64_t> FloatEdges(ElementType type) {
  const int width = ElementTypeBits(type);
  const int mantissa = MantissaBits(type);
  const uint64_t sign = type == ElementType::kF8E8M0FNU ? 0 : uint64_t{1} << (width - 1);
  std::vector<uint64_t> edges;
  for (double v : {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -1.5}) {
    edges.push_back(FloatBits(type, v));
  }
  const uint64_t max = MaxFiniteBits(type);
  const uint64_t min_normal = uint64_t{1} << mantissa;
  edges.insert(edges.end(), {max, max | sign, min_normal, min_normal | sign});
  if (mantissa > 0) {
    const uint64_t denormal_max = min_normal - 1;
    edges.insert(edges.end(), {1, 1 | sign, denormal_max, denormal_max | sign});
  }
  edges.push_back(FloatBits(type, std::numeric_limits<double>::infinity()));
  edges.push_back(FloatBits(type, -std::numeric_limits<double>::infinity()));
  const uint64_t nan = FloatBits(type, std::numeric_limits<double>::quiet_NaN());
  edges.push_back(nan);
  if (sign != 0 && IsNaN(type, nan | sign)) edges.push_back(nan | sign);
  return edges;
}

}  // namespace

ValuePolicy AnyValues() { return ValuePolicy(); }

ValuePolicy BitValues() {
  ValuePolicy policy;
  policy.denormals = true;
  return policy;
}

ValuePolicy Range(double lo, double hi) {
  ValuePolicy policy;
  policy.ranged = true;
  policy.lo = lo;
  policy.hi = hi;
  policy.nan_inf = false;
  policy.negative = lo < 0;
  return policy;
}

ValuePolicy Magnitude(double max) {
  ValuePolicy policy = Range(-max, max);
  policy.negative_zero = true;
  return policy;
}

ValuePolicy Magnitudes(double min, double max) {
  ValuePolicy policy = Magnitude(max);
  policy.min_magnitude = min;
  return policy;
}

ValuePolicy FiniteValues() {
  ValuePolicy policy;
  policy.nan_inf = false;
  return policy;
}

ValuePolicy ModerateComplex() {
  ValuePolicy policy = Range(-16, 16);
  policy.min_magnitude = 1.0 / 16;
  policy.negative_zero = false;
  return policy;
}

bool ValueGenerator::Allowed(ElementType type, uint64_t bits, const ValuePolicy& policy) {
  const double v = FloatValue(type, bits);
  if (std::isnan(v) || std::isinf(v)) return policy.nan_inf;
  if (!policy.denormals && IsFlushedDenormal(type, bits)) return false;
  if (!policy.negative_zero && v == 0 && std::signbit(v)) return false;
  if (!policy.negative && v < 0) return false;
  if (policy.nonzero && v == 0) return false;
  if (v != 0 && std::fabs(v) < policy.min_magnitude) return false;
  if (policy.ranged && (v < policy.lo || v > policy.hi)) return false;
  return true;
}

int64_t ValueGenerator::Int(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
}

uint64_t ValueGenerator::IntegerElement(ElementType type, const ValuePolicy& policy) {
  int64_t lo, hi;
  IntegerLimits(type, &lo, &hi);
  const bool full = !policy.ranged && policy.negative;
  if (policy.ranged) {
    // Clipped in double first: a bound beyond int64's range does not convert.
    if (policy.lo > static_cast<double>(lo)) lo = static_cast<int64_t>(std::ceil(policy.lo));
    if (policy.hi < static_cast<double>(hi)) hi = static_cast<int64_t>(std::floor(policy.hi));
  }
  if (!policy.negative) lo = std::max<int64_t>(lo, 0);
  for (;;) {
    const int kind = static_cast<int>(Int(0, 9));
    int64_t v;
    if (kind < 3 && policy.edges) {
      const int64_t edges[] = {lo, hi, 0, 1, -1, lo + 1, hi - 1};
      v = edges[Int(0, 6)];
    } else if (kind < 6) {
      v = Int(-8, 8);
    } else if (full) {
      const uint64_t bits = engine_() & WidthMask(type);  // The whole range.
      if (policy.nonzero && bits == 0) continue;
      return bits;
    } else {
      v = Int(lo, hi);
    }
    if (v < lo || v > hi || (policy.nonzero && v == 0)) continue;
    return static_cast<uint64_t>(v) & WidthMask(type);
  }
}

uint64_t ValueGenerator::FloatElement(ElementType type, const ValuePolicy& policy) {
  const std::vector<uint64_t> edges = FloatEdges(type);
  for (;;) {
    const int kind = static_cast<int>(Int(0, 19));
    uint64_t bits;
    if (kind < 5 && policy.edges) {
      bits = edges[Int(0, static_cast<int64_t>(edges.size()) - 1)];
    } else if (kind < 13) {
      // Mostly values of moderate size (within [-4, 4] when the range allows).
      double lo = -4, hi = 4;
      if (policy.ranged) {
        lo = std::max(lo, policy.lo);
        hi = std::min(hi, policy.hi);
        if (lo >= hi) lo = policy.lo, hi = policy.hi;
      }
      bits = FloatBits(type, std::uniform_real_distribution<double>(lo, hi)(engine_));
    } else {
      bits = engine_() & WidthMask(type);
    }
    if (Allowed(type, bits, policy)) return bits;
  }
}

uint64_t ValueGenerator::Element(ElementType type, const ValuePolicy& policy) {
  if (IsPred(type)) {
    return policy.ranged ? Int(policy.lo > 0 ? 1 : 0, policy.hi < 1 ? 0 : 1) : Int(0, 1);
  }
  if (IsInteger(type)) return IntegerElement(type, policy);
  return FloatElement(type, policy);
}

HostTensor ValueGenerator::Random(const ArrayType& type, const ValuePolicy& policy) {
  HostTensor tensor{type.type, type.dims, {}};
  const int64_t n = type.num_elements();
  tensor.data.assign(n * ElementBytes(type.type), '\0');
  const ElementType component = ComponentType(type.type);
  for (int64_t i = 0; i < n; ++i) {
    SetElementBits(&tensor, i, Element(component, policy), 0);
    if (IsComplex(type.type)) SetElementBits(&tensor, i, Element(component, policy), 1);
  }
  return tensor;
}

HostTensor ValueGenerator::FromValues(const ArrayType& type, const std::vector<double>& values) {
  HostTensor tensor{type.type, type.dims, {}};
  tensor.data.assign(values.size() * ElementBytes(type.type), '\0');
  const ElementType component = ComponentType(type.type);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits;
    if (IsFloat(component)) {
      bits = FloatBits(component, values[i]);
    } else if (IsPred(component)) {
      bits = values[i] != 0;
    } else {
      bits = static_cast<uint64_t>(static_cast<int64_t>(values[i])) & WidthMask(component);
    }
    SetElementBits(&tensor, static_cast<int64_t>(i), bits, 0);
  }
  return tensor;
}

HostTensor ValueGenerator::Distinct(const ArrayType& type, double lo, double hi) {
  const int64_t n = type.num_elements();
  const ElementType component = ComponentType(type.type);
  std::set<uint64_t> seen;
  std::vector<double> values;
  ValuePolicy policy = Range(lo, hi);
  policy.negative_zero = false;
  policy.edges = false;
  while (static_cast<int64_t>(values.size()) < n) {
    const uint64_t bits = IsPred(component) ? Int(0, 1) : Element(component, policy);
    if (!seen.insert(bits).second) continue;
    values.push_back(IsFloat(component) ? FloatValue(component, bits)
                                        : static_cast<double>(SignedValue(component, bits)));
  }
  std::shuffle(values.begin(), values.end(), engine_);
  return FromValues(type, values);
}

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
