// WorkerPool: threads that help a device's queue thread with one large piece of work (a fusion
// over millions of elements) by taking parts of it. One pool per client, shared by its devices.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_WORKER_POOL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_WORKER_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pjrtkit {
namespace sim {

class WorkerPool {
 public:
  // `threads` helper threads (0: ParallelFor runs everything on its caller); `name` is for
  // messages and debuggers (the threads are not renamed: pthread_setname_np needs a glibc newer
  // than the plugin's floor, xla_plugin/glibc_floor).
  WorkerPool(int threads, std::string name);
  // Joins the threads; no ParallelFor may be running.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }
  const std::string& name() const { return name_; }

  // Runs fn(0) .. fn(count - 1), each once, on the caller and whichever helpers are free, and
  // returns when all have returned. The caller takes parts itself, so the call finishes even
  // when every helper is busy with other callers' work. `fn` must not throw.
  void ParallelFor(int64_t count, const std::function<void(int64_t)>& fn);

 private:
  struct Job;
  void Work();
  // Runs parts of `job` until none is left to take; true when it ran any.
  static bool Drain(Job& job);

  const std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> jobs_;  // Jobs with parts left to take.
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_WORKER_POOL_H_
