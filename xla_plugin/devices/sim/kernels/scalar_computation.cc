#include "xla_plugin/devices/sim/kernels/scalar_computation.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/typed_combiner.h"

namespace pjrtkit {
namespace sim {
namespace {

// Elements evaluated per engine call when results must be staged (they overlap an input).
constexpr int64_t kStagedChunk = 4096;

// The input a kInput step reads (the engine's convention: its `attr`).
int64_t InputIndexOf(const EwStep& step) { return step.attr; }

const char* CombinerName(Combiner combiner) {
  switch (combiner) {
    case Combiner::kGeneric:
      return "generic";
    case Combiner::kAdd:
      return "add";
    case Combiner::kMultiply:
      return "multiply";
    case Combiner::kMaximum:
      return "maximum";
    case Combiner::kMinimum:
      return "minimum";
    case Combiner::kAnd:
      return "and";
    case Combiner::kOr:
      return "or";
    case Combiner::kXor:
      return "xor";
    case Combiner::kReplace:
      return "replace";
  }
  return "unknown";
}

// The op a binary combiner stands for (kInput for kReplace and kGeneric).
EwOp CombinerOp(Combiner combiner) {
  switch (combiner) {
    case Combiner::kAdd:
      return EwOp::kAdd;
    case Combiner::kMultiply:
      return EwOp::kMultiply;
    case Combiner::kMaximum:
      return EwOp::kMaximum;
    case Combiner::kMinimum:
      return EwOp::kMinimum;
    case Combiner::kAnd:
      return EwOp::kAnd;
    case Combiner::kOr:
      return EwOp::kOr;
    case Combiner::kXor:
      return EwOp::kXor;
    default:
      return EwOp::kInput;
  }
}

std::string TypeName(ElementType type) { return ElementTypeName(type); }

// Input index read by step `index` of `body` when it is a kInput step before `before`, else -1.
int64_t ParameterAt(const FusedElementwise& body, int32_t index, int32_t before) {
  if (index < 0 || index >= before) return -1;
  const EwStep& step = body.steps[index];
  return step.op == EwOp::kInput ? InputIndexOf(step) : -1;
}

// Checks that the body's result is `combiner` of its two parameters (see the header).
Status CheckCombiner(const ScalarComputation& computation,
                     const std::vector<ElementType>& input_types,
                     const std::vector<ElementType>& result_types) {
  const std::string prefix =
      std::string("scalar computation: combiner ") + CombinerName(computation.combiner);
  if (input_types.size() != 2 || result_types.size() != 1) {
    return InvalidArgument(prefix + " needs 2 parameters and 1 result (the computation has " +
                           std::to_string(input_types.size()) + " and " +
                           std::to_string(result_types.size()) + ")");
  }
  const ElementType type = result_types[0];
  if (input_types[0] != type || input_types[1] != type) {
    return InvalidArgument(prefix + " needs parameters of the result's type " + TypeName(type) +
                           " (got " + TypeName(input_types[0]) + ", " + TypeName(input_types[1]) +
                           ")");
  }
  const FusedElementwise& body = computation.body;
  const int32_t out = body.outputs[0];
  const EwStep& step = body.steps[out];
  if (computation.combiner == Combiner::kReplace) {
    if (step.op != EwOp::kInput || InputIndexOf(step) != 1) {
      return InvalidArgument(prefix + " does not match the body: its result must be parameter 1");
    }
    return OkStatus();
  }
  const EwOp op = CombinerOp(computation.combiner);
  const int64_t p = ParameterAt(body, step.operands[0], out);
  const int64_t q = ParameterAt(body, step.operands[1], out);
  const bool parameters = (p == 0 && q == 1) || (p == 1 && q == 0);
  if (step.op != op || step.type != type || !parameters) {
    return InvalidArgument(prefix + " does not match the body: its result must be " + EwOpName(op) +
                           "(parameter 0, parameter 1) of type " + TypeName(type) + " (got " +
                           EwOpName(step.op) + " of type " + TypeName(step.type) + ")");
  }
  return OkStatus();
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) overlap.
bool Overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

}  // namespace

Status CheckScalarComputation(const ScalarComputation& computation,
                              const std::vector<ElementType>& input_types,
                              const std::vector<ElementType>& result_types) {
  const FusedElementwise& body = computation.body;
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (!KernelSupportsType(input_types[i])) {
      return InvalidArgument("scalar computation: parameter " + std::to_string(i) + " type " +
                             TypeName(input_types[i]) + " is not supported by the sim kernels");
    }
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    if (!KernelSupportsType(result_types[i])) {
      return InvalidArgument("scalar computation: result " + std::to_string(i) + " type " +
                             TypeName(result_types[i]) + " is not supported by the sim kernels");
    }
  }
  if (!body.dims.empty()) {
    return InvalidArgument("scalar computation: body.dims = " + DimsToString(body.dims) +
                           " (expected [] for a computation on scalars)");
  }
  if (body.inputs.size() != input_types.size()) {
    return InvalidArgument("scalar computation: body has " + std::to_string(body.inputs.size()) +
                           " parameters (expected " + std::to_string(input_types.size()) + ")");
  }
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (body.inputs[i].type != input_types[i]) {
      return InvalidArgument("scalar computation: parameter " + std::to_string(i) + " has type " +
                             TypeName(body.inputs[i].type) + " (expected " +
                             TypeName(input_types[i]) + ")");
    }
    if (!body.inputs[i].strides.empty()) {
      return InvalidArgument("scalar computation: parameter " + std::to_string(i) +
                             " has strides " + DimsToString(body.inputs[i].strides) +
                             " (expected [] for a scalar)");
    }
  }
  if (body.outputs.size() != result_types.size()) {
    return InvalidArgument("scalar computation: body has " + std::to_string(body.outputs.size()) +
                           " results (expected " + std::to_string(result_types.size()) + ")");
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    const int32_t out = body.outputs[i];
    if (out < 0 || static_cast<size_t>(out) >= body.steps.size()) {
      return InvalidArgument("scalar computation: outputs[" + std::to_string(i) +
                             "] = " + std::to_string(out) + " is not a step (expected 0 <= it < " +
                             std::to_string(body.steps.size()) + ")");
    }
    if (body.steps[out].type != result_types[i]) {
      return InvalidArgument("scalar computation: result " + std::to_string(i) + " has type " +
                             TypeName(body.steps[out].type) + " (expected " +
                             TypeName(result_types[i]) + ")");
    }
  }
  Status valid = Validate(body);
  if (!valid.ok()) return InvalidArgument("scalar computation: " + valid.message());
  if (computation.combiner != Combiner::kGeneric) {
    PJRTKIT_RETURN_IF_ERROR(CheckCombiner(computation, input_types, result_types));
  }
  return OkStatus();
}

void ApplyScalarComputation(const ScalarComputation& computation, int64_t n,
                            const std::vector<const void*>& inputs,
                            const std::vector<int64_t>& input_strides,
                            const std::vector<void*>& results) {
  ScalarApplier applier(computation);
  applier.Apply(n, inputs.data(), input_strides.data(), results.data());
}

ScalarApplier::ScalarApplier(const ScalarComputation& computation) : computation_(&computation) {
  const FusedElementwise& body = computation.body;
  for (const EwInput& input : body.inputs) input_bytes_.push_back(TypeBytes(input.type));
  for (int32_t out : body.outputs) result_bytes_.push_back(TypeBytes(body.steps[out].type));
  if (computation.combiner != Combiner::kGeneric && body.inputs.size() == 2) {
    combine_fn_ = GetCombineFn(computation.combiner, body.inputs[0].type);
  }
  if (combine_fn_ == nullptr) {
    shaped_body_ = body;
    scratch_results_.resize(body.outputs.size());
  }
}

ElementType ScalarApplier::result_type(int i) const {
  return computation_->body.steps[computation_->body.outputs[i]].type;
}

void ScalarApplier::EvaluateShaped(bool shape_changed, const void* const* inputs,
                                   void* const* results) {
  if (shape_changed) {
    plan_.emplace(ElementwisePlan::CreateValidated(shaped_body_));
    plan_scratch_.resize(plan_->scratch_bytes() + 64);
  }
  char* scratch = plan_scratch_.data();
  scratch += (64 - reinterpret_cast<uintptr_t>(scratch) % 64) % 64;
  plan_->Run(inputs, results, scratch);
}

void ScalarApplier::Evaluate1D(int64_t n, const void* const* inputs, const int64_t* input_strides,
                               void* const* results) {
  bool changed = !plan_ || shaped_body_.dims.size() != 1 || shaped_body_.dims[0] != n;
  shaped_body_.dims.assign(1, n);
  for (size_t i = 0; i < shaped_body_.inputs.size(); ++i) {
    std::vector<int64_t>& strides = shaped_body_.inputs[i].strides;
    changed = changed || strides.size() != 1 || strides[0] != input_strides[i];
    strides.assign(1, input_strides[i]);
  }
  EvaluateShaped(changed, inputs, results);
}

void ScalarApplier::ApplyStrided(const std::vector<int64_t>& dims, const void* const* inputs,
                                 const std::vector<int64_t>* strides, void* const* results) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count <= 0) return;
  if (combine_fn_ != nullptr) {
    // The typed loop along the last dimension, the others walked here.
    ScopedFlushDenormals flush;
    const size_t rank = dims.size();
    const int64_t inner = rank == 0 ? 1 : dims.back();
    const int64_t a_step = rank == 0 ? 0 : strides[0].back();
    const int64_t b_step = rank == 0 ? 0 : strides[1].back();
    std::vector<int64_t> index(rank, 0);
    const char* a = static_cast<const char*>(inputs[0]);
    const char* b = static_cast<const char*>(inputs[1]);
    char* out = static_cast<char*>(results[0]);
    const int64_t bytes = result_bytes_[0];
    for (int64_t done = 0; done < count; done += inner) {
      combine_fn_(inner, a, a_step, b, b_step, out + done * bytes);
      for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
        a += strides[0][d] * bytes;
        b += strides[1][d] * bytes;
        if (++index[d] < dims[d]) break;
        a -= index[d] * strides[0][d] * bytes;
        b -= index[d] * strides[1][d] * bytes;
        index[d] = 0;
      }
    }
    return;
  }
  bool changed = !plan_ || shaped_body_.dims != dims;
  shaped_body_.dims = dims;
  for (size_t i = 0; i < shaped_body_.inputs.size(); ++i) {
    changed = changed || shaped_body_.inputs[i].strides != strides[i];
    shaped_body_.inputs[i].strides = strides[i];
  }
  EvaluateShaped(changed, inputs, results);
}

void ScalarApplier::Apply(int64_t n, const void* const* inputs, const int64_t* input_strides,
                          void* const* results) {
  if (n <= 0) return;
  if (combine_fn_ != nullptr) {
    ScopedFlushDenormals flush;
    combine_fn_(n, inputs[0], input_strides[0], inputs[1], input_strides[1], results[0]);
    return;
  }
  const int num_in = num_inputs();
  const int num_out = num_results();
  bool aliased = false;
  for (int r = 0; r < num_out && !aliased; ++r) {
    for (int i = 0; i < num_in && !aliased; ++i) {
      const int64_t span = input_strides[i] == 0 ? 1 : (n - 1) * input_strides[i] + 1;
      aliased = Overlaps(results[r], n * result_bytes_[r], inputs[i], span * input_bytes_[i]);
    }
  }
  if (!aliased) {
    Evaluate1D(n, inputs, input_strides, results);
    return;
  }
  // Stage the results of each chunk, then copy them out (the engine may write a result before
  // reading every input of the same element).
  int64_t row_bytes = 0;
  for (int64_t bytes : result_bytes_) row_bytes += bytes;
  const int64_t chunk = std::min(n, kStagedChunk);
  scratch_.resize(chunk * row_bytes);
  std::vector<const void*> chunk_inputs(num_in);
  for (int64_t k0 = 0; k0 < n; k0 += chunk) {
    const int64_t c = std::min(chunk, n - k0);
    int64_t offset = 0;
    for (int r = 0; r < num_out; ++r) {
      scratch_results_[r] = scratch_.data() + offset;
      offset += c * result_bytes_[r];
    }
    for (int i = 0; i < num_in; ++i) {
      chunk_inputs[i] =
          static_cast<const char*>(inputs[i]) + k0 * input_strides[i] * input_bytes_[i];
    }
    Evaluate1D(c, chunk_inputs.data(), input_strides, scratch_results_.data());
    for (int r = 0; r < num_out; ++r) {
      std::memcpy(static_cast<char*>(results[r]) + k0 * result_bytes_[r], scratch_results_[r],
                  c * result_bytes_[r]);
    }
  }
}

}  // namespace sim
}  // namespace pjrtkit
