// Rendezvous: how the participants of one multi-device execution meet for a collective. A device
// team replaces it with its hardware's collective library (NCCL-like) or its interconnect.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace sim {

// One per multi-device execution, shared by its `participants` (one per device, numbered
// 0..participants-1 by rank), each running on its own device's queue. For its step-th collective
// (steps 0, 1, 2, ... in the same order on every participant) each participant
//   1. Publish(rank, step, data): makes `data` (e.g. its input buffer) visible and blocks until
//      every participant has published that step; returns all their pointers (index = rank);
//   2. reads what it needs from the others' pointers (writes only its own buffers);
//   3. Barrier(rank, step): blocks until every participant has read, so that nobody touches a
//      published buffer again while another may still read it.
// Thread-safe; nothing is allocated per step beyond one small map entry, removed when the last
// participant leaves the step's barrier.
class Rendezvous {
 public:
  // A rendezvous of `participants` (>= 1).
  explicit Rendezvous(int participants);

  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // Publishes `data` for participant `rank`'s `step`-th collective and waits for all
  // participants to publish it. Returns every participant's pointer (index = rank); the Abort
  // status once aborted; INVALID_ARGUMENT for a rank out of range, a negative step, or a rank
  // that publishes one step twice (the rendezvous is then aborted with that error, so that its
  // peers do not wait forever).
  StatusOr<std::vector<const void*>> Publish(int rank, int64_t step, const void* data);
  // Waits until every participant has reached Barrier for `step` (after its Publish of that step).
  // The Abort status once aborted; INVALID_ARGUMENT as for Publish, and for a rank that reaches
  // the barrier of a step it did not publish or reaches it twice (each also aborting).
  Status Barrier(int rank, int64_t step);
  // Wakes every waiter with `status` (not OK: a participant failed); every later call returns it.
  // The first non-OK status given wins.
  void Abort(Status status);

  // Number of participants.
  int participants() const { return participants_; }

 private:
  // What one step's participants have done so far.
  struct Step {
    std::vector<const void*> data;  // Published pointers, by rank.
    std::vector<bool> published;    // Which ranks published.
    std::vector<bool> at_barrier;   // Which ranks reached the barrier.
    int published_count = 0;        // How many published.
    int arrived = 0;                // How many reached the barrier.
    int departed = 0;               // How many left the barrier.
  };

  // INVALID_ARGUMENT for a rank out of range or a negative step (aborting), else OK.
  Status CheckCall(const char* what, int rank, int64_t step);
  // The entry of `step`, created when missing. Requires mu_.
  Step& StepLocked(int64_t step);
  // Aborts with `status`. Requires mu_.
  void AbortLocked(Status status);

  const int participants_;         // Participant count.
  std::mutex mu_;                  // Guards the fields below.
  std::condition_variable cv_;     // Signalled on every change.
  std::map<int64_t, Step> steps_;  // Steps in progress.
  Status aborted_;                 // Non-OK once aborted.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_
