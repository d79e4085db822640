#include "xla_plugin/devices/sim/kernels/ordered_updates.h"

#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/reduction_util.h"

namespace pjrtkit {
namespace sim {

OrderedUpdates::OrderedUpdates(const ScalarComputation& computation,
                               const std::vector<void*>& results,
                               const std::vector<const void*>& updates)
    : results_(results), updates_(updates), applier_(computation) {
  const size_t n = results.size();
  for (size_t i = 0; i < n; ++i) bytes_.push_back(TypeBytes(applier_.result_type(i)));
  typed_ = n == 1 && GetTypedCombiner(computation.combiner, applier_.result_type(0), &loops_);
  targets_.reserve(kBatch);
  sources_.reserve(kBatch);
  if (typed_) return;
  slot_keys_.assign(kSlots, 0);
  slot_stamps_.assign(kSlots, 0);
  current_.resize(n);
  update_.resize(n);
  out_.resize(n);
  call_inputs_.resize(2 * n);
  call_results_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    current_[i].resize(kBatch * bytes_[i]);
    update_[i].resize(kBatch * bytes_[i]);
    out_[i].resize(kBatch * bytes_[i]);
    call_inputs_[i] = current_[i].data();
    call_inputs_[n + i] = update_[i].data();
    call_results_[i] = out_[i].data();
  }
}

bool OrderedUpdates::Seen(int64_t target) {
  uint64_t slot = (static_cast<uint64_t>(target) * 0x9E3779B97F4A7C15ull) >> 53;  // 11 bits.
  while (slot_stamps_[slot] == stamp_) {
    if (slot_keys_[slot] == target) return true;
    slot = (slot + 1) & (kSlots - 1);
  }
  slot_stamps_[slot] = stamp_;
  slot_keys_[slot] = target;
  return false;
}

void OrderedUpdates::AddRun(int64_t target, int64_t target_step, int64_t source,
                            int64_t source_step, int64_t count) {
  if (typed_ && count >= kDirectRun) {
    Flush();
    loops_.accumulate(count, static_cast<char*>(results_[0]) + target * bytes_[0], target_step,
                      static_cast<const char*>(updates_[0]) + source * bytes_[0], source_step);
    return;
  }
  for (int64_t k = 0; k < count; ++k) Add(target + k * target_step, source + k * source_step);
}

void OrderedUpdates::Flush() {
  const int64_t count = static_cast<int64_t>(targets_.size());
  if (count == 0) return;
  if (typed_) {
    loops_.pairs(count, results_[0], targets_.data(), updates_[0], sources_.data());
  } else {
    const size_t n = results_.size();
    for (size_t i = 0; i < n; ++i) {
      GatherElements(results_[i], targets_.data(), count, bytes_[i], current_[i].data());
      GatherElements(updates_[i], sources_.data(), count, bytes_[i], update_[i].data());
    }
    const std::vector<int64_t> strides(2 * n, 1);
    applier_.Apply(count, call_inputs_.data(), strides.data(), call_results_.data());
    for (size_t i = 0; i < n; ++i) {
      ScatterElements(out_[i].data(), targets_.data(), count, bytes_[i], results_[i]);
    }
    if (++stamp_ == 0) {
      slot_stamps_.assign(kSlots, 0);
      stamp_ = 1;
    }
  }
  targets_.clear();
  sources_.clear();
}

}  // namespace sim
}  // namespace pjrtkit
