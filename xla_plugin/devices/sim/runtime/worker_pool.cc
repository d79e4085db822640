#include "xla_plugin/devices/sim/runtime/worker_pool.h"

#include <atomic>

namespace pjrtkit {
namespace sim {

struct WorkerPool::Job {
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};      // The next part to take.
  std::atomic<int64_t> finished{0};  // Parts that returned.
  std::mutex mu;
  std::condition_variable done;
};

WorkerPool::WorkerPool(int threads, std::string name) : name_(std::move(name)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::Drain(Job& job) {
  bool ran = false;
  for (int64_t i = job.next.fetch_add(1); i < job.count; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    ran = true;
    if (job.finished.fetch_add(1) + 1 == job.count) {
      std::lock_guard<std::mutex> lock(job.mu);
      job.done.notify_all();
    }
  }
  return ran;
}

void WorkerPool::Work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // Stopping.
      job = jobs_.front();
      if (job->next.load() >= job->count) {
        jobs_.pop_front();  // Every part taken; the caller waits for the rest to finish.
        continue;
      }
    }
    Drain(*job);
  }
}

void WorkerPool::ParallelFor(int64_t count, const std::function<void(int64_t)>& fn) {
  if (count <= 0) return;
  if (threads_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->count = count;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(job);
  }
  cv_.notify_all();
  Drain(*job);
  std::unique_lock<std::mutex> lock(job->mu);
  job->done.wait(lock, [&] { return job->finished.load() == count; });
  // A helper may still hold `job` (it found nothing left to take); it no longer reads `fn`.
}

}  // namespace sim
}  // namespace pjrtkit
