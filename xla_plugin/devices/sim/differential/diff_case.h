// DiffCase: one program and its inputs, run on the sim device (compiled first) and on the
// StableHLO reference interpreter, and the comparison of their outputs.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_DIFF_CASE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_DIFF_CASE_H_

#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/element_format.h"

namespace pjrtkit {
namespace sim {
namespace differential {

// How an output of the sim is compared with the interpreter's. NaN positions must agree in every
// kind (any sign and payload); integers and pred are always compared exactly.
struct Tolerance {
  enum class Kind {
    kExact,   // The same bits (floats: -0 and +0 differ).
    kUlps,    // Floats: at most `ulps` apart (complex: each part within `ulps` ulps of the
              // larger part's magnitude); infinities exact.
    kScaled,  // Floats: |sim - interpreter| <= factor * Epsilon(type) * m, where m is the
              // interpreter's result on the inputs' absolute values (sums and dot products: the
              // sum of the terms' magnitudes); infinities exact where m is finite.
  };
  Kind kind = Kind::kExact;      // See Kind.
  double ulps = 0;               // kUlps: the largest distance accepted.
  double factor = 0;             // kScaled: the multiple of Epsilon(type) * m accepted.
  // Accept the sim's zero (of either sign) where the interpreter returns a nonzero value no
  // larger than the smallest normal of the type the sim computes in (f32, or f64 for f64):
  // XLA:CPU, which the sim follows, flushes denormal results (and intermediate results) to zero.
  bool flush_to_zero = false;
};

// Exact comparison (see Tolerance).
Tolerance Exact();
// Exact, but accepting flushed denormal results.
Tolerance ExactFlushed();
// At most `ulps` apart (flushed denormal results accepted).
Tolerance Ulps(double ulps);
// Within factor * Epsilon * (sum of the terms' magnitudes) (flushed results accepted).
Tolerance Scaled(double factor);
// The factor of Scaled for sums and dot products of `terms` terms: 2 + 2 sqrt(terms). Two orders
// of summation differ by at most about 2 * terms * eps * m in the worst case; rounding errors of
// random terms grow like sqrt(terms) (README: tolerances has the measured ratios, all below 2).
double SumFactor(int64_t terms);

// One program with its inputs.
struct DiffCase {
  std::string op;              // The op under test, for messages ("add", "dot_general").
  std::string what;            // The rest of the case's name: types, shapes, attributes.
  std::string program;         // MLIR text of the module (function main).
  std::vector<HostTensor> inputs;  // main's arguments.
  std::vector<Tolerance> tolerances;  // Per output; the last entry applies to the rest.
  bool elementwise = false;    // The inputs are read at the output's index (scalars broadcast):
                               // a mismatch message shows the input elements there.
  std::string refused;         // Non-empty: the sim deliberately refuses this op/type; its
                               // compile must fail with a message containing this text, and the
                               // interpreter is not run.
};

// Compiles `c.program` for the sim (a refusal fails the case with its message unless
// `c.refused` expects it), runs it, runs the interpreter (only on programs the sim compiled: the
// interpreter aborts the process on ops it lacks) and compares every output. Returns "" when they
// agree, else a message naming the op, types, shapes, the first differing element with the input
// values there and both outputs.
// `*max_ulps` (optional) gets the largest distance seen between the outputs' non-NaN float
// elements, in ulps (complex: ulps of the larger part's magnitude), or for kScaled outputs the
// largest |sim - interpreter| / (Epsilon * m), for measuring tolerances.
std::string RunDiffCase(const DiffCase& c, double* max_ulps = nullptr);

// Runs every case; returns the messages of the failing ones (at most `max_messages`, then a
// count of the rest) joined by blank lines, "" when all pass. `*runs` (optional) gets the number
// of cases run on both sides, `*refused` the number refused as expected.
std::string RunDiffCases(const std::vector<DiffCase>& cases, int* runs = nullptr,
                         int* refused = nullptr, int max_messages = 20);

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_DIFF_CASE_H_
