// ValueGenerator: seeded random input arrays for each element type, with the type's edge values
// (0, -0, +-1, +-inf, NaN, the largest and smallest values, denormals, integer min/max) mixed in,
// as a policy allows.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_VALUE_GENERATOR_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_VALUE_GENERATOR_H_

#include <cstdint>
#include <random>
#include <vector>

#include "xla_plugin/devices/sim/differential/element_format.h"
#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {
namespace differential {

// Which values an input may hold.
struct ValuePolicy {
  bool edges = true;          // Mix in the type's edge values (about a quarter of the elements).
  bool nan_inf = true;        // Floats: NaNs and infinities.
  bool denormals = false;     // Floats: values the sim kernels flush (IsFlushedDenormal): off
                              // unless the op only moves bits (README: denormals).
  bool negative_zero = true;  // Floats: -0.
  bool negative = true;       // Negative values (false: only >= 0, -0 included if allowed).
  bool nonzero = false;       // No zeros (integer divisors).
  double min_magnitude = 0;   // Floats: nonzero finite values smaller in magnitude are left out.
  bool ranged = false;        // Finite values and integers within [lo, hi] (NaN and inf still
  double lo = 0;              // follow nan_inf).
  double hi = 0;
};

// Policy helpers.
ValuePolicy AnyValues();                          // Everything but flushed denormals.
ValuePolicy BitValues();                          // Everything, denormals included.
ValuePolicy Range(double lo, double hi);          // Within [lo, hi], no NaN/inf, no edges beyond.
ValuePolicy FiniteValues();                       // No NaN or inf.
ValuePolicy Magnitude(double max);                // Finite, |v| <= max; edges within.
ValuePolicy Magnitudes(double min, double max);   // Finite, |v| 0 or within [min, max].
// Finite values with magnitudes 0 or within [1/16, 16], no -0: the domain where XLA's complex
// formulas (which the sim follows) and C99's complex functions (the interpreter's std::complex)
// agree to rounding (README: complex functions).
ValuePolicy ModerateComplex();

// Random arrays from one seed (the same seed gives the same arrays).
class ValueGenerator {
 public:
  explicit ValueGenerator(uint64_t seed) : engine_(seed) {}

  // An array of `type` whose elements follow `policy`.
  HostTensor Random(const ArrayType& type, const ValuePolicy& policy = AnyValues());
  // An array of `type` holding `values` (converted: floats rounded, integers wrapped).
  static HostTensor FromValues(const ArrayType& type, const std::vector<double>& values);
  // An array of `type` with distinct finite values in random order (no -0, no NaN; for unstable
  // sorts and argmax), drawn from the type's values in [lo, hi] (which must hold that many).
  HostTensor Distinct(const ArrayType& type, double lo, double hi);
  // A uniform integer in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi);
  // The engine (for shuffles).
  std::mt19937_64& engine() { return engine_; }

 private:
  // One element's bits of a real (non-complex) type.
  uint64_t Element(ElementType type, const ValuePolicy& policy);
  uint64_t IntegerElement(ElementType type, const ValuePolicy& policy);
  uint64_t FloatElement(ElementType type, const ValuePolicy& policy);
  // Whether float `bits` passes `policy`.
  static bool Allowed(ElementType type, uint64_t bits, const ValuePolicy& policy);

  std::mt19937_64 engine_;  // The random source.
};

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_VALUE_GENERATOR_H_
