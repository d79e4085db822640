// ParallelFor: runs independent work items on this library's own short-lived threads.
//
// The native kernels must not use XLA's thread pool (XLA FFI 0.2, which pjrtkit's reference
// device declares, has none), and keep no process-wide state: each call starts up to
// MaxThreads() - 1 std::threads, the calling thread works too, and all are joined before Run
// returns. Starting a thread costs ~20 us, so callers size items to be much larger than that.
#ifndef PJRTKIT_KERNELS_NATIVE_PARALLEL_FOR_H_
#define PJRTKIT_KERNELS_NATIVE_PARALLEL_FOR_H_

#include <cstdint>
#include <functional>

namespace pjrtkit_kernels {

class ParallelFor {
 public:
  // fn(worker, item): worker is in [0, Workers(items, max_threads)), item in [0, items).
  using Body = std::function<void(int worker, int64_t item)>;

  // CPUs this process may run on (sched_getaffinity), at least 1.
  static int MaxThreads();

  // Number of workers Run uses for `items` items and at most `max_threads` threads (<= 0: all).
  static int Workers(int64_t items, int max_threads);

  // Runs fn for every item; items are claimed one at a time from a shared counter. If a thread
  // cannot be started, the threads already running (at least the caller) do all the work.
  static void Run(int64_t items, int max_threads, const Body& fn);
};

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_NATIVE_PARALLEL_FOR_H_
