#include "xla_plugin/devices/sim/runtime/queue.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

namespace pjrtkit {
namespace sim {

// What the worker, the queue object and dependency callbacks share.
struct Queue::State {
  // One piece of work.
  struct Piece {
    std::shared_ptr<Event> dependency;  // Waited for first; null: none.
    std::function<void(Status)> work;   // Gets the dependency's status.
  };

  std::string name;            // The queue's name.
  std::mutex mu;               // Guards the fields below.
  std::condition_variable cv;  // New piece, stop, or a dependency became ready.
  std::deque<Piece> pieces;    // Waiting to run, in order.
  bool stopping = false;       // ~Queue was called.
  bool busy = false;           // A piece runs (on the worker or, by RunIfIdle, on a caller).
};

namespace {

// Waits (holding `lock` on `state->mu`) until `dependency` is ready or the queue stops; returns
// its status, or CANCELLED when the queue stopped first.
template <typename State>
Status WaitForDependency(const std::shared_ptr<State>& state, std::unique_lock<std::mutex>& lock,
                         const std::shared_ptr<Event>& dependency) {
  if (!dependency->IsReady()) {
    std::weak_ptr<State> weak = state;
    lock.unlock();
    dependency->OnReady([weak](const Status&) {
      if (std::shared_ptr<State> alive = weak.lock()) {
        { std::lock_guard<std::mutex> wake(alive->mu); }
        alive->cv.notify_all();
      }
    });
    lock.lock();
    state->cv.wait(lock, [&] { return dependency->IsReady() || state->stopping; });
    if (!dependency->IsReady()) {
      return Status(StatusCode::kCancelled,
                    "sim queue " + state->name +
                        " was destroyed while its work waited for an event that never became "
                        "ready");
    }
  }
  return dependency->status();
}

}  // namespace

Queue::Queue(std::string name) : name_(std::move(name)), state_(std::make_shared<State>()) {
  state_->name = name_;
  worker_ = std::thread(&Queue::Run, state_);
}

Queue::~Queue() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (worker_.get_id() == std::this_thread::get_id()) {
    worker_.detach();  // Destroyed by its own work: the worker drains the queue and exits.
  } else {
    worker_.join();
  }
}

void Queue::Enqueue(std::function<void()> work) {
  EnqueueAfter(nullptr, [work = std::move(work)](const Status&) { work(); });
}

void Queue::EnqueueAfter(std::shared_ptr<Event> dependency, std::function<void(Status)> work) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->pieces.push_back(State::Piece{std::move(dependency), std::move(work)});
  }
  state_->cv.notify_all();
}

bool Queue::TryHold() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->busy || state_->stopping || !state_->pieces.empty()) return false;
  state_->busy = true;
  return true;
}

void Queue::Release() {
  const std::shared_ptr<State> state = state_;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    state->busy = false;
    wake = state->stopping || !state->pieces.empty();
  }
  // Only the worker waits on cv; waking it for nothing would cost the thread switch saved here.
  if (wake) state->cv.notify_all();
}

bool Queue::RunIfIdle(const std::shared_ptr<Event>& dependency,
                      const std::function<void(Status)>& work) {
  if (dependency != nullptr && !dependency->IsReady()) return false;
  if (!TryHold()) return false;
  try {
    work(dependency != nullptr ? dependency->status() : OkStatus());
  } catch (...) {
    // As on the worker: work reports through its own events.
  }
  Release();
  return true;
}

void Queue::Await() {
  if (worker_.get_id() == std::this_thread::get_id()) return;
  auto done = Event::Create();
  Enqueue([done] { done->Set(OkStatus()); });
  done->Await();
}

void Queue::Run(std::shared_ptr<State> state) {
  for (;;) {
    State::Piece piece;
    Status status;
    {
      std::unique_lock<std::mutex> lock(state->mu);
      state->cv.wait(lock, [&] {
        return !state->busy && (state->stopping || !state->pieces.empty());
      });
      if (state->pieces.empty()) return;  // Stopping, and nothing left.
      piece = std::move(state->pieces.front());
      state->pieces.pop_front();
      state->busy = true;  // Until the piece ran, RunIfIdle leaves the queue alone.
      if (piece.dependency != nullptr) {
        status = WaitForDependency(state, lock, piece.dependency);
      }
    }
    try {
      piece.work(std::move(status));
    } catch (...) {
      // Work reports through its own events; one that throws loses only its own report.
    }
    piece = State::Piece{};  // Its captures go before the next piece may run.
    std::lock_guard<std::mutex> lock(state->mu);
    state->busy = false;  // Nobody waits for this but the worker itself (RunIfIdle never waits).
  }
}

}  // namespace sim
}  // namespace pjrtkit
