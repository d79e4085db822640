#include "xla_plugin/devices/sim/runtime/rendezvous.h"

#include <string>
#include <utility>

namespace pjrtkit {
namespace sim {

Rendezvous::Rendezvous(int participants) : participants_(participants < 1 ? 1 : participants) {}

Status Rendezvous::CheckCall(const char* what, int rank, int64_t step) {
  if (rank >= 0 && rank < participants_ && step >= 0) return OkStatus();
  Status error =
      InvalidArgument(std::string("sim rendezvous: ") + what + " with rank " +
                      std::to_string(rank) + " and step " + std::to_string(step) +
                      "; ranks are 0.." + std::to_string(participants_ - 1) + " and steps >= 0");
  std::lock_guard<std::mutex> lock(mu_);
  AbortLocked(error);
  return error;
}

Rendezvous::Step& Rendezvous::StepLocked(int64_t step) {
  auto it = steps_.find(step);
  if (it == steps_.end()) {
    it = steps_.emplace(step, Step()).first;
    it->second.data.assign(participants_, nullptr);
    it->second.published.assign(participants_, false);
    it->second.at_barrier.assign(participants_, false);
  }
  return it->second;
}

StatusOr<std::vector<const void*>> Rendezvous::Publish(int rank, int64_t step, const void* data) {
  PJRTKIT_RETURN_IF_ERROR(CheckCall("Publish", rank, step));
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  Step& entry = StepLocked(step);
  if (entry.published[rank]) {
    AbortLocked(InvalidArgument("sim rendezvous: rank " + std::to_string(rank) +
                                " published step " + std::to_string(step) + " twice"));
    return aborted_;
  }
  entry.published[rank] = true;
  entry.data[rank] = data;
  if (++entry.published_count == participants_) cv_.notify_all();
  cv_.wait(lock, [&] { return !aborted_.ok() || entry.published_count == participants_; });
  if (!aborted_.ok()) return aborted_;
  return entry.data;
}

Status Rendezvous::Barrier(int rank, int64_t step) {
  PJRTKIT_RETURN_IF_ERROR(CheckCall("Barrier", rank, step));
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  Step& entry = StepLocked(step);
  if (!entry.published[rank]) {
    AbortLocked(InvalidArgument("sim rendezvous: rank " + std::to_string(rank) +
                                " reached the barrier of step " + std::to_string(step) +
                                " without publishing it"));
    return aborted_;
  }
  if (entry.at_barrier[rank]) {
    AbortLocked(InvalidArgument("sim rendezvous: rank " + std::to_string(rank) +
                                " reached the barrier of step " + std::to_string(step) + " twice"));
    return aborted_;
  }
  entry.at_barrier[rank] = true;
  if (++entry.arrived == participants_) cv_.notify_all();
  cv_.wait(lock, [&] { return !aborted_.ok() || entry.arrived == participants_; });
  if (!aborted_.ok()) return aborted_;
  if (++entry.departed == participants_) steps_.erase(step);
  return OkStatus();
}

void Rendezvous::Abort(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  AbortLocked(std::move(status));
}

void Rendezvous::AbortLocked(Status status) {
  if (status.ok()) {
    status = Internal("sim rendezvous: Abort was called with an OK status");
  }
  if (aborted_.ok()) aborted_ = std::move(status);
  cv_.notify_all();
}

}  // namespace sim
}  // namespace pjrtkit
