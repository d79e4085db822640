// ElementwisePlan: a FusedElementwise prepared for evaluation (kernels resolved, dimensions
// coalesced, scratch slots assigned), run block by block over the output.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENTWISE_PLAN_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENTWISE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/kernel_registry.h"

namespace pjrtkit {
namespace sim {

// The evaluation plan of one fused elementwise program. Immutable once built; Run may be called
// from several threads at once when each call has its own scratch.
class ElementwisePlan {
 public:
  // Elements of the output each block covers.
  static constexpr int64_t kBlock = 1024;

  // Validates `fused` (Validate) and builds its plan.
  static StatusOr<ElementwisePlan> Create(const FusedElementwise& fused);

  // Builds the plan of a program that already passed Validate (checks nothing).
  static ElementwisePlan CreateValidated(const FusedElementwise& fused);

  // Bytes of scratch one Run needs (0 for an empty output).
  size_t scratch_bytes() const;

  // Evaluates with a scratch allocated for this call (see Evaluate for the pointer contract).
  void Run(const void* const* inputs, void* const* outputs) const;

  // Evaluates with `scratch`: scratch_bytes() bytes, 64-byte aligned, unused by others meanwhile.
  void Run(const void* const* inputs, void* const* outputs, void* scratch) const;

  // Elements of the output.
  int64_t total() const { return total_; }
  // Evaluates output elements [begin, end) only (row-major positions; `begin` a multiple of
  // kBlock), with `scratch` as in Run: parts of one output may run on several threads at once,
  // each with its own scratch.
  void RunRange(const void* const* inputs, void* const* outputs, void* scratch, int64_t begin,
                int64_t end) const;

 private:
  // What a step does in each block.
  enum class Action : uint8_t {
    kDense,   // An input read in place (storage is its compute form, layout is the output's).
    kGather,  // An input gathered (strided, broadcast or converted) into the step's slot.
    kFilled,  // A constant or scalar input, filled into its slot once per Run.
    kIota,    // Indices along a dimension, converted to the step's type.
    kKernel,  // An op: its kernel over the operands' blocks.
  };

  // One step as planned.
  struct PlanStep {
    Action action = Action::kKernel;  // See Action.
    ElementType type = ElementType::kInvalid;  // Result type.
    int32_t slot = -1;                // Scratch slot of the result (-1: none).
    int32_t operands[3] = {-1, -1, -1};  // Operand step indices.
    int32_t input = -1;               // kDense/kGather/kFilled of an input: its index.
    int32_t source = -1;              // kDense/kGather/kIota: index into source_strides_.
    int64_t attr = 0;                 // EwStep::attr.
    StepKernel kernel;                // kKernel: the op; kIota: the s64 -> type convert.
    std::string constant;             // kFilled constant: its stored bytes.
  };

  ElementwisePlan() = default;

  // Assigns scratch slots by liveness (results never share a slot with their operands).
  void AssignSlots(const std::vector<int32_t>& outputs);
  // Merges dimensions that every source walks contiguously and drops size-1 dimensions.
  void CoalesceDims(const std::vector<int64_t>& dims,
                    std::vector<std::vector<int64_t>>* strides);
  // Loads one gathered or iota step's block into `dst`.
  void GatherBlock(const PlanStep& step, const void* base, const int64_t* block_index, int64_t n,
                   int64_t* index, void* dst, int64_t* iota) const;

  int64_t total_ = 0;                    // Elements of the output.
  std::vector<int64_t> dims_;            // Coalesced output dimensions (at least one).
  std::vector<std::vector<int64_t>> source_strides_;  // Coalesced strides of each source.
  std::vector<PlanStep> steps_;          // In evaluation order.
  std::vector<int32_t> output_steps_;    // Step of each output.
  std::vector<ElementType> output_types_;  // Type of each output.
  std::vector<int32_t> input_bytes_;     // Storage bytes of each input's elements.
  int32_t num_slots_ = 0;                // Scratch slots.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENTWISE_PLAN_H_
