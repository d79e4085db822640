// Queue: a device's in-order work queue. A device team replaces it with its hardware's stream or
// command queue.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_QUEUE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_QUEUE_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace sim {

// One worker thread runs the work in enqueue order, one piece at a time. Work reports its errors
// through its own Events (the queue has no error state) and must not throw (an exception is
// caught and dropped). Thread-safe: any thread may enqueue, including the worker itself.
//
// Dependencies (EnqueueAfter) work like a GPU stream waiting for an event: the queue stops at the
// waiting piece until its event is ready, and everything behind it waits too, so work on one
// device never overtakes earlier work on the same device (a buffer donated to a later execution
// is not overwritten while an earlier read of it is queued). This cannot deadlock as long as every
// event a piece waits for is produced by work enqueued before it (on any queue) or by the host,
// and the pieces of one multi-device execution are enqueued on all their queues in the same order,
// with no other work enqueued between them (SimClient::launch_mutex()).
class Queue {
 public:
  // A queue whose worker thread is named after `name` (e.g. "sim-0") in error messages.
  explicit Queue(std::string name);
  // Runs everything queued, then joins the worker. A piece still waiting for a dependency that is
  // not ready runs with CANCELLED instead of waiting (nothing else would ever run it). Called from
  // the queue's own work, it does not wait: the worker finishes the queue on its own.
  ~Queue();

  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // Appends `work`.
  void Enqueue(std::function<void()> work);
  // Appends `work`, which runs once `dependency` is ready (null: at once), in enqueue order, with
  // the dependency's status (work that gets an error passes it on to its own events and does
  // nothing else). The queue waits for the dependency without using a thread of its own.
  void EnqueueAfter(std::shared_ptr<Event> dependency, std::function<void(Status)> work);
  // When nothing is queued or running and `dependency` is null or ready, runs `work` on the
  // calling thread with the dependency's status, holding the queue (work enqueued meanwhile waits
  // for it), and returns true; otherwise returns false and leaves `work` to the caller. For short
  // work, whose hand-off to the worker thread would cost more than the work itself.
  bool RunIfIdle(const std::shared_ptr<Event>& dependency,
                 const std::function<void(Status)>& work);
  // RunIfIdle in two steps, for a caller that claims the queue under a lock and runs the work
  // after releasing it: TryHold marks an idle queue busy (false when work is queued or running,
  // or the queue is stopping); the holder runs its work, then calls Release. Work enqueued
  // meanwhile waits. The holder must not wait for the queue (Await) before Release.
  bool TryHold();
  void Release();
  // Returns once everything enqueued before the call has run (including work waiting for a
  // dependency, which it therefore waits for too). From the queue's own work it returns at once.
  void Await();

  // The name given at creation.
  const std::string& name() const { return name_; }

 private:
  struct State;

  // The worker's loop: runs pieces until stopped and drained.
  static void Run(std::shared_ptr<State> state);

  std::string name_;              // For messages.
  std::shared_ptr<State> state_;  // Pieces, lock, flags; shared with the worker and callbacks.
  std::thread worker_;            // Runs the pieces.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_QUEUE_H_
