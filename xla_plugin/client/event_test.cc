#include "xla_plugin/client/event.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

TEST(EventTest, SetOnceRunsCallbacksWithStatus) {
  std::shared_ptr<Event> event = Event::Create();
  EXPECT_FALSE(event->IsReady());
  int calls = 0;
  StatusCode seen = StatusCode::kOk;
  event->OnReady([&](Status s) { ++calls; seen = s.code(); });
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(event->Set(Internal("boom")));
  EXPECT_FALSE(event->Set(OkStatus()));  // Only the first Set counts.
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, StatusCode::kInternal);
  EXPECT_TRUE(event->IsReady());
  EXPECT_EQ(event->Await().message(), "boom");
}

TEST(EventTest, OnReadyAfterReadyRunsNow) {
  std::shared_ptr<Event> event = Event::CreateReady();
  bool ran = false;
  event->OnReady([&](Status s) { ran = s.ok(); });
  EXPECT_TRUE(ran);
}

TEST(EventTest, CallbackKeepsWorkingAfterLastOutsideHolderIsGone) {
  std::shared_ptr<Event> event = Event::Create();
  std::weak_ptr<Event> weak = event;
  std::atomic<int> calls{0};
  event->OnReady([&](Status) { ++calls; });
  std::shared_ptr<Event> producer = event;
  event.reset();  // The consumer's handle is destroyed right after OnReady.
  producer->Set(OkStatus());
  EXPECT_EQ(calls.load(), 1);
  producer.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(EventTest, DroppingAnUnsetEventRunsWaitingCallbacksWithCancelled) {
  std::shared_ptr<Event> event = Event::Create();
  int calls = 0;
  Status seen;
  event->OnReady([&](Status s) { ++calls; seen = s; });
  event.reset();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), StatusCode::kCancelled);
}

TEST(EventTest, AwaitBlocksUntilSetFromAnotherThread) {
  std::shared_ptr<Event> event = Event::Create();
  std::thread setter([event] { event->Set(NotFound("late")); });
  Status s = event->Await();
  setter.join();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "late");
}

TEST(EventTest, AfterAllCarriesFirstErrorAndWaitsForAll) {
  auto a = Event::Create();
  auto b = Event::Create();
  auto c = Event::Create();
  auto all = Event::AfterAll({a, b, c});
  a->Set(OkStatus());
  b->Set(InvalidArgument("second"));
  EXPECT_FALSE(all->IsReady());
  c->Set(Internal("third"));
  ASSERT_TRUE(all->IsReady());
  EXPECT_EQ(all->status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(all->status().message(), "second");
  EXPECT_TRUE(Event::AfterAll({})->IsReady());
}

}  // namespace
}  // namespace pjrtkit
