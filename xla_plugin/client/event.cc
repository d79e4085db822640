#include "xla_plugin/client/event.h"

#include <atomic>
#include <utility>

namespace pjrtkit {

std::shared_ptr<Event> Event::Create() { return std::shared_ptr<Event>(new Event()); }

std::shared_ptr<Event> Event::CreateReady(Status status) {
  std::shared_ptr<Event> event = Create();
  event->Set(std::move(status));
  return event;
}

std::shared_ptr<Event> Event::AfterAll(const std::vector<std::shared_ptr<Event>>& events) {
  if (events.empty()) return CreateReady();
  if (events.size() == 1) return events[0];
  // Shared countdown state; the result event holds the first error seen.
  struct Join {
    std::shared_ptr<Event> result = Event::Create();
    std::atomic<size_t> pending;
    std::mutex mu;
    Status first_error;
  };
  auto join = std::make_shared<Join>();
  join->pending = events.size();
  for (const std::shared_ptr<Event>& event : events) {
    event->OnReady([join](Status status) {
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(join->mu);
        if (join->first_error.ok()) join->first_error = status;
      }
      if (--join->pending == 0) {
        Status final_status;
        {
          std::lock_guard<std::mutex> lock(join->mu);
          final_status = join->first_error;
        }
        join->result->Set(final_status);
      }
    });
  }
  return join->result;
}

bool Event::Set(Status status) {
  std::vector<std::function<void(Status)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ready_.load(std::memory_order_relaxed)) return false;
    status_ = std::move(status);
    ready_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& callback : callbacks) callback(status_);
  return true;
}

Event::~Event() {
  if (ready_.load(std::memory_order_acquire)) return;
  std::vector<std::function<void(Status)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    callbacks.swap(callbacks_);
  }
  const Status abandoned(StatusCode::kCancelled,
                         "pjrtkit: the event was destroyed before it became ready (its producer "
                         "dropped it without setting it)");
  for (auto& callback : callbacks) callback(abandoned);
}

bool Event::IsReady() const { return ready_.load(std::memory_order_acquire); }

Status Event::Await() const {
  if (ready_.load(std::memory_order_acquire)) return status_;  // No lock once ready.
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return ready_.load(std::memory_order_relaxed); });
  return status_;
}

Status Event::status() const {
  if (ready_.load(std::memory_order_acquire)) return status_;  // Immutable once ready.
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void Event::OnReady(std::function<void(Status)> callback) {
  if (!ready_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback(status_);
}

}  // namespace pjrtkit
