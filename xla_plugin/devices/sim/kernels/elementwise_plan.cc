#include "xla_plugin/devices/sim/kernels/elementwise_plan.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "xla_plugin/devices/sim/kernels/block_io.h"
#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/ew_kernels.h"
#include "xla_plugin/devices/sim/kernels/flush_denormals.h"

namespace pjrtkit {
namespace sim {
namespace {

// Bytes of one slot: a block of the widest compute kind (c128).
constexpr size_t kSlotBytes = ElementwisePlan::kBlock * 16;
constexpr size_t kAlign = 64;

size_t RoundUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool AllZero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

}  // namespace

StatusOr<ElementwisePlan> ElementwisePlan::Create(const FusedElementwise& fused) {
  PJRTKIT_RETURN_IF_ERROR(Validate(fused));
  return CreateValidated(fused);
}

ElementwisePlan ElementwisePlan::CreateValidated(const FusedElementwise& fused) {
  ElementwisePlan plan;
  plan.total_ = 1;
  for (int64_t d : fused.dims) plan.total_ *= d;
  for (const EwInput& input : fused.inputs) plan.input_bytes_.push_back(StorageBytes(input.type));
  std::vector<bool> is_output(fused.steps.size(), false);
  for (int32_t o : fused.outputs) is_output[o] = true;
  std::vector<std::vector<int64_t>> strides;  // Uncoalesced, per source.
  for (size_t i = 0; i < fused.steps.size(); ++i) {
    const EwStep& s = fused.steps[i];
    PlanStep p;
    p.type = s.type;
    p.attr = s.attr;
    ElementType operand_types[3] = {};
    for (int j = 0; j < NumOperands(s.op); ++j) {
      p.operands[j] = s.operands[j];
      operand_types[j] = fused.steps[s.operands[j]].type;
    }
    if (s.op == EwOp::kInput) {
      p.input = static_cast<int32_t>(s.attr);
      const EwInput& input = fused.inputs[p.input];
      if (AllZero(input.strides)) {
        p.action = Action::kFilled;
      } else {
        p.action = Action::kGather;
        p.source = static_cast<int32_t>(strides.size());
        strides.push_back(input.strides);
      }
    } else if (s.op == EwOp::kConstant) {
      p.action = Action::kFilled;
      p.constant = s.constant;
    } else if (s.op == EwOp::kIota) {
      p.action = Action::kIota;
      p.source = static_cast<int32_t>(strides.size());
      std::vector<int64_t> unit(fused.dims.size(), 0);
      unit[s.attr] = 1;
      strides.push_back(unit);
      const ElementType s64 = ElementType::kS64;
      ResolveStep(EwOp::kConvert, s.type, &s64, 0, &p.kernel).ok();
    } else {
      p.action = Action::kKernel;
      ResolveStep(s.op, s.type, operand_types, s.attr, &p.kernel).ok();
    }
    plan.steps_.push_back(std::move(p));
  }
  if (plan.total_ == 0) return plan;
  plan.CoalesceDims(fused.dims, &strides);
  plan.source_strides_ = std::move(strides);
  // A gathered input read in place: compute form equals storage and the layout is row-major.
  for (size_t i = 0; i < plan.steps_.size(); ++i) {
    PlanStep& p = plan.steps_[i];
    if (p.action != Action::kGather || is_output[i]) continue;
    if (!ComputeIsStorage(p.type)) continue;
    const std::vector<int64_t>& st = plan.source_strides_[p.source];
    int64_t expected = 1;
    bool dense = true;
    for (size_t d = plan.dims_.size(); d-- > 0;) {
      dense = dense && st[d] == expected;
      expected *= plan.dims_[d];
    }
    if (dense) p.action = Action::kDense;
  }
  plan.output_steps_ = fused.outputs;
  for (int32_t o : fused.outputs) plan.output_types_.push_back(fused.steps[o].type);
  plan.AssignSlots(fused.outputs);
  return plan;
}

void ElementwisePlan::CoalesceDims(const std::vector<int64_t>& dims,
                                   std::vector<std::vector<int64_t>>* strides) {
  std::vector<int64_t> kept;
  std::vector<std::vector<int64_t>> kept_strides(strides->size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    kept.push_back(dims[d]);
    for (size_t s = 0; s < strides->size(); ++s) kept_strides[s].push_back((*strides)[s][d]);
  }
  // Merge dimension d into d + 1 (from the inside out) where every source allows it.
  std::vector<int64_t> merged;
  std::vector<std::vector<int64_t>> merged_strides(strides->size());
  for (size_t d = kept.size(); d-- > 0;) {
    bool can_merge = !merged.empty();
    for (size_t s = 0; s < strides->size() && can_merge; ++s) {
      can_merge = kept_strides[s][d] == merged_strides[s].back() * merged.back();
    }
    if (can_merge) {
      merged.back() *= kept[d];
      continue;
    }
    merged.push_back(kept[d]);
    for (size_t s = 0; s < strides->size(); ++s) merged_strides[s].push_back(kept_strides[s][d]);
  }
  if (merged.empty()) {  // Rank 0 or all dimensions of size 1: one element.
    merged.push_back(1);
    for (auto& s : merged_strides) s.push_back(0);
  }
  std::reverse(merged.begin(), merged.end());
  for (auto& s : merged_strides) std::reverse(s.begin(), s.end());
  dims_ = std::move(merged);
  *strides = std::move(merged_strides);
}

void ElementwisePlan::AssignSlots(const std::vector<int32_t>& outputs) {
  const int32_t n = static_cast<int32_t>(steps_.size());
  constexpr int32_t kForever = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> last_use(n, -1);
  for (int32_t s = 0; s < n; ++s) {
    for (int32_t o : steps_[s].operands) {
      if (o >= 0) last_use[o] = std::max(last_use[o], s);
    }
  }
  for (int32_t o : outputs) last_use[o] = kForever;
  std::vector<int32_t> free_slots;
  for (int32_t s = 0; s < n; ++s) {
    PlanStep& p = steps_[s];
    if (last_use[s] < 0) continue;  // Unused: never evaluated.
    if (p.action != Action::kDense) {
      if (p.action == Action::kFilled || free_slots.empty()) {
        p.slot = num_slots_++;
      } else {
        p.slot = free_slots.back();
        free_slots.pop_back();
      }
    }
    for (int j = 0; j < 3; ++j) {
      const int32_t o = p.operands[j];
      if (o < 0 || last_use[o] != s) continue;
      if (std::find(p.operands, p.operands + j, o) != p.operands + j) continue;  // Repeated.
      const PlanStep& op = steps_[o];
      if (op.slot >= 0 && op.action != Action::kFilled) free_slots.push_back(op.slot);
    }
  }
}

size_t ElementwisePlan::scratch_bytes() const {
  if (total_ == 0) return 0;
  return static_cast<size_t>(num_slots_) * kSlotBytes + RoundUp(kBlock * sizeof(int64_t)) +
         RoundUp(2 * dims_.size() * sizeof(int64_t)) + RoundUp(steps_.size() * sizeof(void*));
}

void ElementwisePlan::Run(const void* const* inputs, void* const* outputs) const {
  const size_t bytes = scratch_bytes();
  if (bytes == 0) return;
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[bytes + kAlign]);
  const uintptr_t p = reinterpret_cast<uintptr_t>(buffer.get());
  Run(inputs, outputs, reinterpret_cast<void*>((p + kAlign - 1) / kAlign * kAlign));
}

void ElementwisePlan::GatherBlock(const PlanStep& step, const void* base,
                                  const int64_t* block_index, int64_t n, int64_t* index,
                                  void* dst, int64_t* iota) const {
  const std::vector<int64_t>& strides = source_strides_[step.source];
  const int rank = static_cast<int>(dims_.size());
  const int64_t inner = dims_[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  const int bytes = step.action == Action::kIota ? 0 : input_bytes_[step.input];
  const int out_bytes = ComputeKindBytes(ComputeKindOf(step.type));
  std::copy(block_index, block_index + rank, index);
  for (int64_t pos = 0; pos < n;) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[d] * strides[d];
    const int64_t len = std::min(inner - index[rank - 1], n - pos);
    if (step.action == Action::kIota) {
      for (int64_t j = 0; j < len; ++j) iota[pos + j] = offset + j * inner_stride;
    } else {
      LoadElements(step.type, static_cast<const char*>(base) + offset * bytes, inner_stride,
                   static_cast<char*>(dst) + pos * out_bytes, len);
    }
    pos += len;
    index[rank - 1] += len;
    for (int d = rank - 1; d > 0 && index[d] == dims_[d]; --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

void ElementwisePlan::Run(const void* const* inputs, void* const* outputs, void* scratch) const {
  RunRange(inputs, outputs, scratch, 0, total_);
}

void ElementwisePlan::RunRange(const void* const* inputs, void* const* outputs, void* scratch,
                               int64_t begin, int64_t end) const {
  end = std::min(end, total_);
  if (total_ == 0 || begin >= end) return;
  ScopedFlushDenormals flush;
  unsigned char* slots = static_cast<unsigned char*>(scratch);
  int64_t* iota = reinterpret_cast<int64_t*>(slots + num_slots_ * kSlotBytes);
  int64_t* block_index = iota + RoundUp(kBlock * sizeof(int64_t)) / sizeof(int64_t);
  int64_t* index = block_index + dims_.size();
  const void** ptr = reinterpret_cast<const void**>(
      reinterpret_cast<unsigned char*>(block_index) + RoundUp(2 * dims_.size() * sizeof(int64_t)));
  auto slot = [slots](int32_t s) { return slots + static_cast<size_t>(s) * kSlotBytes; };
  for (const PlanStep& p : steps_) {
    if (p.action != Action::kFilled || p.slot < 0) continue;
    const void* src = p.input >= 0 ? inputs[p.input] : p.constant.data();
    LoadElements(p.type, src, 0, slot(p.slot), kBlock);
  }
  const int rank = static_cast<int>(dims_.size());
  for (int64_t start = begin; start < end; start += kBlock) {
    const int64_t n = std::min(kBlock, end - start);
    int64_t rem = start;
    for (int d = rank - 1; d >= 0; --d) {
      block_index[d] = rem % dims_[d];
      rem /= dims_[d];
    }
    for (size_t s = 0; s < steps_.size(); ++s) {
      const PlanStep& p = steps_[s];
      if (p.slot < 0 && p.action != Action::kDense) continue;  // Unused.
      switch (p.action) {
        case Action::kDense:
          ptr[s] = static_cast<const char*>(inputs[p.input]) + start * input_bytes_[p.input];
          continue;
        case Action::kFilled:
          ptr[s] = slot(p.slot);
          continue;
        case Action::kGather:
          GatherBlock(p, inputs[p.input], block_index, n, index, slot(p.slot), iota);
          ptr[s] = slot(p.slot);
          continue;
        case Action::kIota:
        case Action::kKernel: {
          KernelArgs args;
          if (p.action == Action::kIota) {
            GatherBlock(p, nullptr, block_index, n, index, nullptr, iota);
            args.in[0] = iota;
          } else {
            for (int j = 0; j < 3; ++j) {
              args.in[j] = p.operands[j] >= 0 ? ptr[p.operands[j]] : nullptr;
            }
          }
          args.out = slot(p.slot);
          args.n = n;
          args.attr = p.attr;
          args.aux = p.kernel.aux;
          p.kernel.fn(args);
          if (p.kernel.rounding != 0) {
            ApplyRounding(p.kernel.rounding, static_cast<float*>(args.out), n);
          }
          ptr[s] = args.out;
          continue;
        }
      }
    }
    for (size_t k = 0; k < output_steps_.size(); ++k) {
      const ElementType type = output_types_[k];
      StoreElements(type, ptr[output_steps_[k]],
                    static_cast<char*>(outputs[k]) + start * StorageBytes(type), n);
    }
  }
}

}  // namespace sim
}  // namespace pjrtkit
