#include "xla_plugin/devices/sim/runtime/queue.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

// Work records its number here; the vector is only touched by the queue's worker and read after
// Await().
struct Log {
  std::mutex mu;
  std::vector<int> order;
  void Add(int i) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(i);
  }
  std::vector<int> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return order;
  }
};

TEST(QueueTest, RunsInEnqueueOrderAndAwaitWaits) {
  Log log;
  Queue queue("sim-test");
  EXPECT_EQ(queue.name(), "sim-test");
  std::vector<int> expected;
  for (int i = 0; i < 1000; ++i) {
    queue.Enqueue([&log, i] { log.Add(i); });
    expected.push_back(i);
  }
  queue.Await();
  EXPECT_EQ(log.Get(), expected);
}

TEST(QueueTest, AwaitWaitsForSlowWork) {
  std::atomic<bool> done{false};
  Queue queue("sim-test");
  queue.Enqueue([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    done = true;
  });
  queue.Await();
  EXPECT_TRUE(done.load());
}

TEST(QueueTest, WorkRunsOnOneThreadThatIsNotTheCaller) {
  std::mutex mu;
  Queue queue("sim-test");
  std::vector<std::thread::id> ids;
  for (int i = 0; i < 20; ++i) {
    queue.Enqueue([&] {
      std::lock_guard<std::mutex> lock(mu);
      ids.push_back(std::this_thread::get_id());
    });
  }
  queue.Await();
  ASSERT_EQ(ids.size(), 20u);
  for (const std::thread::id& id : ids) {
    EXPECT_EQ(id, ids[0]);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(QueueTest, ManyProducersKeepTheirOwnOrder) {
  Log log;  // Declared first: outlives the queue, whose destructor runs what is left.
  Queue queue("sim-test");
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < 500; ++i) queue.Enqueue([&log, p, i] { log.Add(p * 1000 + i); });
    });
  }
  for (std::thread& producer : producers) producer.join();
  queue.Await();
  const std::vector<int> order = log.Get();
  ASSERT_EQ(order.size(), 2000u);
  std::vector<int> last(4, -1);
  for (int value : order) {
    EXPECT_GT(value % 1000, last[value / 1000]);
    last[value / 1000] = value % 1000;
  }
}

TEST(QueueTest, EnqueueAfterWaitsAndLaterWorkWaitsBehindIt) {
  Log log;  // Declared first: outlives the queue, whose destructor runs what is left.
  Queue queue("sim-test");
  std::shared_ptr<Event> dependency = Event::Create();
  queue.Enqueue([&] { log.Add(1); });
  queue.EnqueueAfter(dependency, [&](Status status) {
    EXPECT_TRUE(status.ok());
    log.Add(2);
  });
  queue.Enqueue([&] { log.Add(3); });  // Must not overtake the waiting piece.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(log.Get(), std::vector<int>({1}));
  dependency->Set(OkStatus());
  queue.Await();
  EXPECT_EQ(log.Get(), std::vector<int>({1, 2, 3}));
}

TEST(QueueTest, EnqueueAfterPassesTheDependencysError) {
  Status seen;
  Queue queue("sim-test");
  std::shared_ptr<Event> failed = Event::CreateReady(Status(StatusCode::kDataLoss, "lost"));
  queue.EnqueueAfter(failed, [&](Status status) { seen = status; });
  queue.EnqueueAfter(nullptr, [&](Status status) { EXPECT_TRUE(status.ok()); });
  queue.Await();
  EXPECT_EQ(seen.code(), StatusCode::kDataLoss);
  EXPECT_EQ(seen.message(), "lost");
}

TEST(QueueTest, DependencySetFromAnotherQueuesWork) {
  Log log;
  Queue first("sim-0");
  Queue second("sim-1");
  std::shared_ptr<Event> produced = Event::Create();
  second.EnqueueAfter(produced, [&](Status) { log.Add(2); });
  first.Enqueue([&, produced] {
    log.Add(1);
    produced->Set(OkStatus());
  });
  second.Await();
  EXPECT_EQ(log.Get(), std::vector<int>({1, 2}));
}

TEST(QueueTest, WorkMayEnqueueMoreWork) {
  Log log;
  Queue queue("sim-test");
  std::shared_ptr<Event> first_ran = Event::Create();
  queue.Enqueue([&, first_ran] {
    log.Add(1);
    queue.Enqueue([&] { log.Add(3); });
    queue.Await();  // From the queue's own work: returns at once instead of deadlocking.
    log.Add(2);
    first_ran->Set(OkStatus());
  });
  ASSERT_TRUE(first_ran->Await().ok());
  queue.Await();  // The nested piece is queued by now, before this Await's marker.
  EXPECT_EQ(log.Get(), std::vector<int>({1, 2, 3}));
}

TEST(QueueTest, DestructorRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    Queue queue("sim-test");
    for (int i = 0; i < 100; ++i) {
      queue.Enqueue([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(QueueTest, DestructorCancelsWorkWaitingForAnEventThatNeverComes) {
  std::shared_ptr<Event> never = Event::Create();
  Status seen;
  std::atomic<int> after{0};
  {
    Queue queue("sim-test");
    queue.EnqueueAfter(never, [&](Status status) { seen = status; });
    queue.Enqueue([&] { ++after; });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(seen.code(), StatusCode::kCancelled);
  EXPECT_NE(seen.message().find("sim queue sim-test was destroyed"), std::string::npos)
      << seen.message();
  EXPECT_EQ(after.load(), 1);
  never->Set(OkStatus());  // The queue's callback outlives it harmlessly.
}

TEST(QueueTest, DestroyedByItsOwnWork) {
  auto queue = std::make_shared<Queue>("sim-test");
  std::shared_ptr<Event> done = Event::Create();
  std::shared_ptr<Queue>* holder = new std::shared_ptr<Queue>(queue);
  queue->Enqueue([holder] { delete holder; });  // The last reference goes on the worker.
  queue->Enqueue([done] { done->Set(OkStatus()); });
  queue.reset();
  EXPECT_TRUE(done->Await().ok());
}

TEST(QueueTest, ThrowingWorkDoesNotStopTheQueue) {
  std::atomic<bool> ran{false};
  Queue queue("sim-test");
  queue.Enqueue([] { throw 42; });
  queue.Enqueue([&] { ran = true; });
  queue.Await();
  EXPECT_TRUE(ran.load());
}

TEST(QueueTest, RunIfIdleRunsOnTheCallerWhenNothingIsQueued) {
  Queue queue("sim-test");
  std::thread::id ran_on;
  Status got = Status(StatusCode::kUnknown, "not run");
  EXPECT_TRUE(queue.RunIfIdle(nullptr, [&](Status status) {
    ran_on = std::this_thread::get_id();
    got = status;
  }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(got.ok());
  // A ready dependency's status is passed on, error included.
  EXPECT_TRUE(queue.RunIfIdle(Event::CreateReady(Status(StatusCode::kDataLoss, "lost")),
                              [&](Status status) { got = status; }));
  EXPECT_EQ(got.code(), StatusCode::kDataLoss);
  EXPECT_EQ(got.message(), "lost");
}

TEST(QueueTest, RunIfIdleDeclinesBehindQueuedWorkAndForUnreadyDependencies) {
  Queue queue("sim-test");
  Log log;
  std::shared_ptr<Event> gate = Event::Create();
  queue.EnqueueAfter(gate, [&log](Status) { log.Add(1); });
  bool ran = false;
  // Work is queued (waiting for `gate`): running now would overtake it.
  EXPECT_FALSE(queue.RunIfIdle(nullptr, [&](Status) { ran = true; }));
  gate->Set(OkStatus());
  queue.Await();
  // The queue is idle, but the dependency is not ready.
  std::shared_ptr<Event> unready = Event::Create();
  EXPECT_FALSE(queue.RunIfIdle(unready, [&](Status) { ran = true; }));
  EXPECT_FALSE(ran);
  EXPECT_EQ(log.Get(), std::vector<int>({1}));
  unready->Set(OkStatus());
}

TEST(QueueTest, WorkEnqueuedWhileRunIfIdleRunsWaitsForIt) {
  Queue queue("sim-test");
  Log log;
  std::shared_ptr<Event> inside = Event::Create();
  std::shared_ptr<Event> produced = Event::Create();
  std::thread producer([&] {
    inside->Await();
    queue.Enqueue([&log] { log.Add(2); });
    // And RunIfIdle from another thread declines while the queue is held.
    EXPECT_FALSE(queue.RunIfIdle(nullptr, [&log](Status) { log.Add(99); }));
    produced->Set(OkStatus());
  });
  EXPECT_TRUE(queue.RunIfIdle(nullptr, [&](Status) {
    inside->Set(OkStatus());
    produced->Await();  // The worker has work now, and must not start it yet.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    log.Add(1);
  }));
  producer.join();
  queue.Await();
  EXPECT_EQ(log.Get(), std::vector<int>({1, 2}));
}

TEST(QueueTest, HeldQueueRunsNothingUntilReleased) {
  Queue queue("sim-test");
  Log log;
  ASSERT_TRUE(queue.TryHold());
  EXPECT_FALSE(queue.TryHold());  // Held already.
  queue.Enqueue([&log] { log.Add(2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(log.Get(), std::vector<int>());  // The worker waits for the holder.
  log.Add(1);                                // The holder's own work.
  queue.Release();
  queue.Await();
  EXPECT_EQ(log.Get(), std::vector<int>({1, 2}));
  EXPECT_FALSE(queue.RunIfIdle(Event::Create(), [](Status) {}));  // Dependency not ready.
  // Idle again once the worker has finished the piece Await waited for.
  bool held = false;
  for (int i = 0; i < 2000 && !held; ++i) {
    held = queue.TryHold();
    if (!held) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(held);
  queue.Release();
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
