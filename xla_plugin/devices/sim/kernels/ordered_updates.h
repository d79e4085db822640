// OrderedUpdates: applies result[t] = f(result[t], update[s]) for many (t, s) element pairs in the
// order they are added (scatter, select_and_scatter), with the combiner's typed loop or in batches
// through the engine (a batch never holds one target twice, so order is kept).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ORDERED_UPDATES_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ORDERED_UPDATES_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/devices/sim/kernels/scalar_computation.h"
#include "xla_plugin/devices/sim/kernels/typed_combiner.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

class OrderedUpdates {
 public:
  // `computation` takes 2n parameters (current values, then updates) and returns n values; it
  // must have passed CheckScalarComputation and outlive this object. `results[i]` and
  // `updates[i]` hold elements of the computation's result type i.
  OrderedUpdates(const ScalarComputation& computation, const std::vector<void*>& results,
                 const std::vector<const void*>& updates);

  // Queues result[target] = f(result[target], update[source]) (element indices).
  void Add(int64_t target, int64_t source) {
    if (!typed_ && Seen(target)) {
      Flush();
      Seen(target);  // Into the new batch's set.
    }
    targets_.push_back(target);
    sources_.push_back(source);
    if (static_cast<int64_t>(targets_.size()) == kBatch) Flush();
  }

  // Queues `count` updates: target + k * target_step from source + k * source_step, k in order.
  // With the typed loop a long run is applied at once (after everything queued before it).
  void AddRun(int64_t target, int64_t target_step, int64_t source, int64_t source_step,
              int64_t count);

  // Applies every queued update. Call it once all are added.
  void Flush();

 private:
  // Pairs applied per batch.
  static constexpr int64_t kBatch = 1024;
  // Runs at least this long go to the typed loop directly.
  static constexpr int64_t kDirectRun = 8;
  // Slots of the batch's target set (a power of two, twice the batch).
  static constexpr int64_t kSlots = 2 * kBatch;

  // Whether `target` is in the current batch; adds it when not.
  bool Seen(int64_t target);

  std::vector<void*> results_;         // The arrays updated in place.
  std::vector<const void*> updates_;   // The update arrays.
  std::vector<int64_t> bytes_;         // Element bytes of each pair of arrays.
  TypedCombiner loops_;                // Typed loops (one array pair with a combiner).
  bool typed_ = false;                 // Whether loops_ are used.
  ScalarApplier applier_;              // The engine path.
  std::vector<int64_t> targets_;       // Queued target indices.
  std::vector<int64_t> sources_;       // Queued source indices.
  std::vector<int64_t> slot_keys_;     // Target set: keys.
  std::vector<uint32_t> slot_stamps_;  // Target set: slot in use when equal to stamp_.
  uint32_t stamp_ = 1;                 // Generation of the current batch.
  std::vector<std::vector<char>> current_, update_, out_;  // Engine buffers per array.
  std::vector<const void*> call_inputs_;                   // Engine inputs.
  std::vector<void*> call_results_;                        // Engine results.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ORDERED_UPDATES_H_
