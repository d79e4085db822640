// Runs golden op cases through the fused elementwise engine and compares with XLA:CPU's results,
// exactly or within a per-op tolerance in ulps (shared by the golden tests).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_CHECK_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/testdata/golden_util.h"

namespace pjrtkit {
namespace sim {
namespace golden {

// The outcome of one case.
struct CaseResult {
  std::string label;          // "add f32 <- f32 (attr 0)".
  int64_t elements = 0;       // Elements compared.
  int64_t mismatches = 0;     // Elements outside the tolerance.
  int64_t max_ulps = 0;       // Largest distance seen (ulps of the result type; complex: of the
                              // larger part's magnitude).
  int64_t skipped = 0;        // Elements the skip rule excluded.
  std::string first_errors;   // The first few mismatches, readable.
  std::string failure;        // Set when the case could not run (bad table, Validate error).
};

// Elements a test excludes from the comparison: called with the op, the operand types, each
// operand's element bytes and the expected result's bytes; true skips the element.
using SkipRule = bool (*)(EwOp op, const ElementType* operand_types,
                          const unsigned char* const* operands, const unsigned char* expected,
                          ElementType result_type);

// Runs `c` on its inputs from `sets` through Evaluate (one fused program: inputs -> op) and
// compares with c.expected, allowing `tolerance_ulps` (0: bit-exact, except that any NaN matches
// any NaN for float results).
CaseResult RunCase(const OpCase& c, const std::vector<InputSet>& sets, int64_t tolerance_ulps,
                   SkipRule skip = nullptr);

}  // namespace golden
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_CHECK_H_
