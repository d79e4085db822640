// Event: a one-shot, thread-safe future of a Status, shared by its producer and its consumers.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_EVENT_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_EVENT_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "xla_plugin/client/status.h"

namespace pjrtkit {

// An Event becomes ready exactly once, with a Status. It is always held by std::shared_ptr, so a
// callback registered with OnReady keeps working after every other holder (for example the
// framework's PJRT_Event handle) is gone. Device teams create one per asynchronous operation.
class Event {
 public:
  // A new, not-yet-ready event.
  static std::shared_ptr<Event> Create();
  // An event that is already ready with `status`.
  static std::shared_ptr<Event> CreateReady(Status status = OkStatus());
  // An event that becomes ready when all of `events` are, with the first error among them.
  static std::shared_ptr<Event> AfterAll(const std::vector<std::shared_ptr<Event>>& events);

  // Runs still-waiting callbacks with CANCELLED when the last holder drops an event that was
  // never Set: nobody can make it ready any more, and a waiter must not hang.
  ~Event();

  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Makes the event ready with `status` and runs the waiting callbacks on this thread. Only the
  // first call has an effect; it returns false for later calls.
  bool Set(Status status);
  // True once Set has been called.
  bool IsReady() const;
  // Blocks until ready and returns the status.
  Status Await() const;
  // The status; OK while not ready (callers check IsReady first).
  Status status() const;
  // Runs `callback(status)` when ready: now, on this thread, if already ready; otherwise on the
  // thread that calls Set.
  void OnReady(std::function<void(Status)> callback);

 private:
  Event() = default;

  mutable std::mutex mu_;                                // Guards the fields below.
  mutable std::condition_variable cv_;                   // Signalled by Set.
  // Set has run. Written under mu_ (release), so a reader that sees true without the lock
  // (acquire) also sees status_, which never changes afterwards.
  std::atomic<bool> ready_{false};
  Status status_;                                        // The status given to Set.
  std::vector<std::function<void(Status)>> callbacks_;  // Waiting OnReady callbacks.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_EVENT_H_
