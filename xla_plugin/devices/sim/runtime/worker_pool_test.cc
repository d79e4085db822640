// WorkerPool: every part runs once, callers finish while the helpers are busy, no helpers.
#include "xla_plugin/devices/sim/runtime/worker_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TEST(WorkerPoolTest, EveryPartRunsOnce) {
  WorkerPool pool(3, "test");
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, [&](int64_t i) { hits[i].fetch_add(1); });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(WorkerPoolTest, WithoutHelpersTheCallerRunsEverything) {
  WorkerPool pool(0, "test");
  const std::thread::id me = std::this_thread::get_id();
  int ran = 0;
  pool.ParallelFor(5, [&](int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    ++ran;
  });
  EXPECT_EQ(ran, 5);
}

// Eight callers at once (a program on eight devices), each with many parts, on one helper.
TEST(WorkerPoolTest, ConcurrentCallersAllFinish) {
  WorkerPool pool(1, "test");
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        pool.ParallelFor(16, [&](int64_t i) { total.fetch_add(i); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), int64_t{8} * 50 * (15 * 16 / 2));
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
