#include "xla_plugin/devices/sim/runtime/rendezvous.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

// Four participants run `kSteps` all-reduces (sums) of one uint64 each through Publish and
// Barrier, each writing only its own value: the values start at 1..4, so the sum is 10 at step 0
// and four times the previous one after that (mod 2^64); a participant that changed its value
// before a peer read it would make some sum differ.
TEST(RendezvousTest, FourThreadsAllReduceOverManySteps) {
  constexpr int kParticipants = 4;
  constexpr int64_t kSteps = 2000;
  Rendezvous rendezvous(kParticipants);
  EXPECT_EQ(rendezvous.participants(), kParticipants);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kParticipants; ++rank) {
    threads.emplace_back([&, rank] {
      uint64_t value = static_cast<uint64_t>(rank) + 1;  // The participant's own buffer.
      uint64_t expected = 10;
      for (int64_t step = 0; step < kSteps; ++step) {
        StatusOr<std::vector<const void*>> all = rendezvous.Publish(rank, step, &value);
        if (!all.ok() || all->size() != kParticipants) {
          ++errors;
          return;
        }
        uint64_t sum = 0;
        for (const void* peer : *all) sum += *static_cast<const uint64_t*>(peer);
        if (sum != expected) ++errors;
        if (!rendezvous.Barrier(rank, step).ok()) {
          ++errors;
          return;
        }
        value = sum;  // Only after every peer has read the old value.
        expected = 4 * sum;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(RendezvousTest, EveryParticipantSeesTheSameValues) {
  constexpr int kParticipants = 4;
  constexpr int64_t kSteps = 500;
  Rendezvous rendezvous(kParticipants);
  std::vector<std::vector<int64_t>> seen(kParticipants);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kParticipants; ++rank) {
    threads.emplace_back([&, rank] {
      for (int64_t step = 0; step < kSteps; ++step) {
        int64_t mine = step * 10 + rank;
        StatusOr<std::vector<const void*>> all = rendezvous.Publish(rank, step, &mine);
        ASSERT_TRUE(all.ok());
        int64_t product_hash = 0;
        for (const void* peer : *all) {
          product_hash = product_hash * 31 + *static_cast<const int64_t*>(peer);
        }
        seen[rank].push_back(product_hash);
        ASSERT_TRUE(rendezvous.Barrier(rank, step).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 1; rank < kParticipants; ++rank) EXPECT_EQ(seen[rank], seen[0]);
  int64_t expected = 0;
  for (int rank = 0; rank < kParticipants; ++rank) expected = expected * 31 + (499 * 10 + rank);
  EXPECT_EQ(seen[0].back(), expected);
}

TEST(RendezvousTest, OneParticipantNeverWaits) {
  Rendezvous rendezvous(1);
  int value = 5;
  StatusOr<std::vector<const void*>> all = rendezvous.Publish(0, 0, &value);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0], &value);
  EXPECT_TRUE(rendezvous.Barrier(0, 0).ok());
}

TEST(RendezvousTest, AbortWakesWaitersAndLaterCallsFail) {
  constexpr int kParticipants = 4;
  Rendezvous rendezvous(kParticipants);
  std::vector<Status> results(kParticipants - 1);
  std::vector<std::thread> threads;
  // Three participants wait in Publish for a fourth that fails instead.
  for (int rank = 0; rank < kParticipants - 1; ++rank) {
    threads.emplace_back([&, rank] {
      int value = rank;
      results[rank] = rendezvous.Publish(rank, 0, &value).status();
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rendezvous.Abort(Status(StatusCode::kInternal, "participant 3 failed: kernel error"));
  for (std::thread& thread : threads) thread.join();
  for (const Status& status : results) {
    EXPECT_EQ(status.code(), StatusCode::kInternal);
    EXPECT_EQ(status.message(), "participant 3 failed: kernel error");
  }
  int value = 3;
  EXPECT_EQ(rendezvous.Publish(3, 0, &value).status().code(), StatusCode::kInternal);
  EXPECT_EQ(rendezvous.Barrier(0, 0).code(), StatusCode::kInternal);
  rendezvous.Abort(Status(StatusCode::kCancelled, "second"));  // The first error wins.
  EXPECT_EQ(rendezvous.Barrier(1, 0).message(), "participant 3 failed: kernel error");
}

TEST(RendezvousTest, AbortWakesBarrierWaiters) {
  Rendezvous rendezvous(2);
  Status barrier_status;
  std::thread first([&] {
    int value = 0;
    if (!rendezvous.Publish(0, 0, &value).ok()) return;
    barrier_status = rendezvous.Barrier(0, 0);
  });
  int value = 1;
  ASSERT_TRUE(rendezvous.Publish(1, 0, &value).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rendezvous.Abort(Status(StatusCode::kAborted, "rank 1 failed after reading"));
  first.join();
  EXPECT_EQ(barrier_status.code(), StatusCode::kAborted);
}

TEST(RendezvousTest, MisuseIsAnErrorThatAbortsThePeers) {
  {
    Rendezvous rendezvous(2);
    int value = 0;
    EXPECT_EQ(rendezvous.Publish(2, 0, &value).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(rendezvous.Publish(0, 0, &value).status().code(), StatusCode::kInvalidArgument)
        << "the rendezvous stays aborted";
  }
  {
    Rendezvous rendezvous(2);
    EXPECT_EQ(rendezvous.Barrier(0, -1).code(), StatusCode::kInvalidArgument);
  }
  {
    Rendezvous rendezvous(2);
    Status peer;
    int value = 0;
    std::thread waiter([&] { peer = rendezvous.Publish(0, 0, &value).status(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const Status twice = rendezvous.Barrier(1, 0);  // Rank 1 never published step 0.
    waiter.join();
    EXPECT_EQ(twice.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(twice.message().find("without publishing"), std::string::npos) << twice.message();
    EXPECT_EQ(peer.code(), StatusCode::kInvalidArgument);
  }
  {
    Rendezvous rendezvous(2);
    Status peer;
    int value = 0;
    std::thread waiter([&] { peer = rendezvous.Publish(0, 0, &value).status(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::thread again([&] {
      int other = 1;
      // Rank 0 publishing step 0 a second time.
      const Status status = rendezvous.Publish(0, 0, &other).status();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(status.message().find("twice"), std::string::npos) << status.message();
    });
    again.join();
    waiter.join();
    EXPECT_EQ(peer.code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
