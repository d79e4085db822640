#include "kernels/native/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace pjrtkit_kernels {

int ParallelFor::MaxThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

int ParallelFor::Workers(int64_t items, int max_threads) {
  int64_t limit = max_threads > 0 ? std::min(max_threads, MaxThreads()) : MaxThreads();
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(items, limit)));
}

void ParallelFor::Run(int64_t items, int max_threads, const Body& fn) {
  if (items <= 0) return;
  const int workers = Workers(items, max_threads);
  std::atomic<int64_t> next{0};
  auto loop = [&](int worker) {
    for (int64_t i = next.fetch_add(1); i < items; i = next.fetch_add(1)) fn(worker, i);
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(loop, w);
    } catch (const std::system_error&) {
      break;  // Fewer threads: the ones running claim the remaining items.
    }
  }
  loop(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace pjrtkit_kernels
