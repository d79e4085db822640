// ScalarComputation over vectors: how kernels apply a region (reduce body, scatter update,
// collective reduction, select) to many elements at once.
//
// A ScalarComputation's body is a FusedElementwise with empty `dims` whose inputs are the region's
// parameters (scalars, empty strides) and whose outputs are its results. The body's steps are read
// as the engine defines them: each step's `operands` are indices of earlier steps, a kInput step
// reads input number `attr`, and `outputs` are step indices.
//
// A kernel that applies one computation many times keeps a ScalarApplier: it copies the body once,
// re-dimensions that copy per call, keeps the engine's plan (ElementwisePlan) while the shape of
// the calls repeats, and picks the combiner's typed loop once.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/elementwise_plan.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// Checks that `computation` takes scalars of `input_types` and returns scalars of `result_types`,
// and that its combiner (when not kGeneric) agrees with its body: the body's result is that one
// op of its two parameters (either order; kReplace: the second parameter itself), both parameters
// and the result of one element type. Every element type must be one the sim kernels support (no
// sub-byte types).
Status CheckScalarComputation(const ScalarComputation& computation,
                              const std::vector<ElementType>& input_types,
                              const std::vector<ElementType>& result_types);

// Applies `computation` elementwise to `n` elements: inputs[i] is read at inputs[i] + k *
// input_strides[i] elements (stride 0: one scalar for all), results written densely (they may
// alias an input whose stride is 1). Uses the combiner's fast path when it has one. For repeated
// calls use a ScalarApplier (this function builds one per call).
void ApplyScalarComputation(const ScalarComputation& computation, int64_t n,
                            const std::vector<const void*>& inputs,
                            const std::vector<int64_t>& input_strides,
                            const std::vector<void*>& results);

// The typed loop of a combiner: out[k] = a[k * a_stride] op b[k * b_stride] for k < n (strides in
// elements; out dense; out may be a or b when that one's stride is 1).
using CombineFn = void (*)(int64_t n, const void* a, int64_t a_stride, const void* b,
                           int64_t b_stride, void* out);

// The typed loop of `combiner` on `type`, or nullptr where there is none (kGeneric, f16/bf16
// maximum/minimum, the float8 types, complex multiply/maximum/minimum: those go through the
// engine). Integer add and multiply wrap; pred add is or, multiply is and; f32/f64 maximum and
// minimum follow XLA:CPU (NaN wins, denormals compared and returned as zero, +0 above -0); f16
// and bf16 add/multiply compute in f32 and round to the type, as the engine does. The loops
// expect to run with denormals flushed (ScopedFlushDenormals), as ScalarApplier runs them.
CombineFn GetCombineFn(Combiner combiner, ElementType type);

// A ScalarComputation prepared for many applications over vectors. Not thread-safe (one per
// kernel run); `computation` must have passed CheckScalarComputation and outlive the applier.
class ScalarApplier {
 public:
  explicit ScalarApplier(const ScalarComputation& computation);

  // Number of parameters and results of the computation.
  int num_inputs() const { return static_cast<int>(computation_->body.inputs.size()); }
  int num_results() const { return static_cast<int>(computation_->body.outputs.size()); }
  // Element type of parameter `i` / result `i`.
  ElementType input_type(int i) const { return computation_->body.inputs[i].type; }
  ElementType result_type(int i) const;
  // The typed loop used for it (nullptr: the engine evaluates the body).
  CombineFn combine_fn() const { return combine_fn_; }

  // As ApplyScalarComputation: `inputs` and `input_strides` have num_inputs() entries, `results`
  // num_results(). A result may alias an input read with stride 1 (same element index).
  void Apply(int64_t n, const void* const* inputs, const int64_t* input_strides,
             void* const* results);

  // Applies the computation over an array of `dims`: input i's element at index (k_0, ...) is read
  // at inputs[i] + sum_d k_d * strides[i][d] (strides[i] has dims.size() entries, 0 broadcasts);
  // results are written dense row-major. Results must not overlap the inputs.
  void ApplyStrided(const std::vector<int64_t>& dims, const void* const* inputs,
                    const std::vector<int64_t>* strides, void* const* results);

 private:
  // Evaluates the body over shaped_body_'s dims and strides, dense results; the plan is rebuilt
  // only when the shape changed since the last call (repeated chunk shapes reuse it).
  void EvaluateShaped(bool shape_changed, const void* const* inputs, void* const* results);
  // Evaluates the body over n elements with the inputs' strides, dense results.
  void Evaluate1D(int64_t n, const void* const* inputs, const int64_t* input_strides,
                  void* const* results);

  const ScalarComputation* computation_;  // The computation applied.
  CombineFn combine_fn_ = nullptr;        // Typed loop of the combiner, if any.
  FusedElementwise shaped_body_;          // The body with the shape last evaluated.
  std::optional<ElementwisePlan> plan_;   // The engine's plan of shaped_body_.
  std::vector<char> plan_scratch_;        // The plan's scratch (64 bytes of slack to align).
  std::vector<int64_t> result_bytes_;     // Bytes of one element of each result.
  std::vector<int64_t> input_bytes_;      // Bytes of one element of each input.
  std::vector<char> scratch_;             // Results of aliased calls before they are copied.
  std::vector<void*> scratch_results_;    // Pointers into scratch_.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_SCALAR_COMPUTATION_H_
