// PJRT_Event_*: readiness, OnReady before/after ready, early destroy, error propagation.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

// What OnReady callbacks saw. Heap-allocated; leaked on purpose if a callback never came,
// so that a late callback cannot touch freed memory.
struct CallbackLog {
  const PJRT_Api* api = nullptr;  // For reading and destroying the callback's error.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Status> statuses;  // One per callback, in arrival order.
};

void RecordCallback(PJRT_Error* error, void* user_arg) {
  auto* log = static_cast<CallbackLog*>(user_arg);
  Status status = TakeError(log->api, error);  // The callback owns `error`.
  std::lock_guard<std::mutex> lock(log->mu);
  log->statuses.push_back(status);
  log->cv.notify_all();
}

class EventTest : public ClientTestBase {
 protected:
  void TearDown() override {
    if (log_ == nullptr) return;
    bool all_arrived = false;
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      all_arrived = log_->statuses.size() >= registered_;
    }
    if (all_arrived) delete log_;  // Otherwise leaked: a callback may still arrive.
  }

  CallbackLog* Log() {
    if (log_ == nullptr) {
      log_ = new CallbackLog();
      log_->api = api();
    }
    return log_;
  }

  Status OnReady(PJRT_Event* event) {
    PJRT_ARGS(PJRT_Event_OnReady_Args, args);
    args.event = event;
    args.callback = &RecordCallback;
    args.user_arg = Log();
    const Status status = PJRT_CALL(api()->PJRT_Event_OnReady(&args));
    if (status.ok()) ++registered_;
    return status;
  }

  // Waits up to 60 s for `count` callbacks; returns what they saw.
  std::vector<Status> WaitForCallbacks(size_t count) {
    CallbackLog* log = Log();
    std::unique_lock<std::mutex> lock(log->mu);
    log->cv.wait_for(lock, std::chrono::seconds(60),
                     [&] { return log->statuses.size() >= count; });
    return log->statuses;
  }

  // An event for a fresh buffer's readiness.
  EventPtr ReadyEvent(PJRT_Buffer* buffer) {
    PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args, args);
    args.buffer = buffer;
    const Status status = PJRT_CALL(api()->PJRT_Buffer_ReadyEvent(&args));
    EXPECT_TRUE(status.ok()) << status;
    return EventPtr(api(), args.event);
  }

  // Starts a 16 MiB device-to-host copy (BufferBytes: less on a device declaring less memory)
  // and returns its (likely still pending) event.
  Status StartLargeCopy(std::vector<float>* host, BufferPtr* source, EventPtr* event) {
    const int64_t elements = BufferBytes(int64_t{16} << 20) / 4;
    host->assign(elements, 0.5f);
    Status status = FromVector(*host, PJRT_Buffer_Type_F32, {elements}, FirstDevice(), source);
    if (!status.ok()) return status;
    PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, args);
    args.src = source->get();
    args.dst = host->data();
    args.dst_size = host->size() * sizeof(float);
    status = PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&args));
    *event = EventPtr(api(), args.event);
    return status;
  }

  // Makes a buffer whose readiness carries an error: an async host-to-device transfer
  // whose buffer is failed with SetBufferError.
  Status FailedBuffer(BufferPtr* buffer) {
    const std::vector<int64_t> dims = {8};
    PJRT_ARGS(PJRT_ShapeSpec, spec);
    spec.dims = dims.data();
    spec.num_dims = dims.size();
    spec.element_type = PJRT_Buffer_Type_F32;
    PJRT_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, create);
    create.client = client();
    create.shape_specs = &spec;
    create.num_shape_specs = 1;
    create.memory = DefaultMemory(FirstDevice());
    Status status = PJRT_CALL(api()->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create));
    if (!status.ok()) return status;
    TransferManagerPtr manager(api(), create.transfer_manager);
    PJRT_ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args, fail);
    fail.transfer_manager = manager.get();
    fail.buffer_index = 0;
    fail.error_code = PJRT_Error_Code_DATA_LOSS;
    fail.error_message = kFailure;
    fail.error_message_size = sizeof(kFailure) - 1;
    status = PJRT_CALL(api()->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&fail));
    if (!status.ok()) return status;
    PJRT_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args, retrieve);
    retrieve.transfer_manager = manager.get();
    retrieve.buffer_index = 0;
    status = PJRT_CALL(api()->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&retrieve));
    if (status.ok()) *buffer = BufferPtr(api(), retrieve.buffer_out);
    return status;
  }

  static constexpr char kFailure[] = "conformance: injected transfer failure";
  CallbackLog* log_ = nullptr;  // Created on first use.
  size_t registered_ = 0;       // Successful OnReady registrations.
};

constexpr char EventTest::kFailure[];

TEST_F(EventTest, AwaitingAReadyEventSucceedsTwice) {
  const std::vector<float> host = {1, 2};
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromVector(host, PJRT_Buffer_Type_F32, {2}, FirstDevice(), &buffer));
  EventPtr event = ReadyEvent(buffer.get());
  ASSERT_TRUE(event);
  PJRT_ASSERT_OK(Await(event.get()));
  PJRT_ASSERT_OK(Await(event.get()));
  EXPECT_TRUE(IsReady(event.get()));
}

TEST_F(EventTest, ErrorOfASuccessfulEventIsNull) {
  const std::vector<float> host = {1, 2};
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromVector(host, PJRT_Buffer_Type_F32, {2}, FirstDevice(), &buffer));
  EventPtr event = ReadyEvent(buffer.get());
  PJRT_ASSERT_OK(Await(event.get()));
  PJRT_ARGS(PJRT_Event_Error_Args, args);
  args.event = event.get();
  PJRT_EXPECT_OK(PJRT_CALL(api()->PJRT_Event_Error(&args)));
}

TEST_F(EventTest, OnReadyAfterReadyCallsBackWithoutError) {
  const std::vector<float> host = {1, 2};
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromVector(host, PJRT_Buffer_Type_F32, {2}, FirstDevice(), &buffer));
  EventPtr event = ReadyEvent(buffer.get());
  PJRT_ASSERT_OK(Await(event.get()));
  PJRT_ASSERT_OK(OnReady(event.get()));
  const std::vector<Status> seen = WaitForCallbacks(1);
  ASSERT_EQ(seen.size(), 1u) << "callback never ran";
  EXPECT_TRUE(seen[0].ok()) << seen[0];
}

TEST_F(EventTest, OnReadyBeforeReadyCallsBackWithoutError) {
  std::vector<float> host;
  BufferPtr source;
  EventPtr event;
  PJRT_ASSERT_OK(StartLargeCopy(&host, &source, &event));
  ASSERT_TRUE(event) << "ToHostBuffer gave no event";
  PJRT_ASSERT_OK(OnReady(event.get()));
  const std::vector<Status> seen = WaitForCallbacks(1);
  ASSERT_EQ(seen.size(), 1u) << "callback never ran";
  EXPECT_TRUE(seen[0].ok()) << seen[0];
  EXPECT_TRUE(IsReady(event.get()));
  EXPECT_EQ(host[12345], 0.5f);
}

TEST_F(EventTest, DestroyingTheEventRightAfterOnReadyStillCallsBack) {
  std::vector<float> host;
  BufferPtr source;
  EventPtr event;
  PJRT_ASSERT_OK(StartLargeCopy(&host, &source, &event));
  ASSERT_TRUE(event);
  PJRT_ASSERT_OK(OnReady(event.get()));
  event.reset();  // The framework may drop its handle at once; the callback must still run.
  const std::vector<Status> seen = WaitForCallbacks(1);
  ASSERT_EQ(seen.size(), 1u) << "callback never ran after the event was destroyed";
  EXPECT_TRUE(seen[0].ok()) << seen[0];
}

TEST_F(EventTest, EveryOnReadyCallbackRuns) {
  std::vector<float> host;
  BufferPtr source;
  EventPtr event;
  PJRT_ASSERT_OK(StartLargeCopy(&host, &source, &event));
  ASSERT_TRUE(event);
  for (int i = 0; i < 3; ++i) PJRT_ASSERT_OK(OnReady(event.get()));
  const std::vector<Status> seen = WaitForCallbacks(3);
  ASSERT_EQ(seen.size(), 3u);
  for (const Status& status : seen) EXPECT_TRUE(status.ok()) << status;
}

TEST_F(EventTest, ExecutionCompletionEventSupportsOnReady) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &executable));
  const std::vector<float> input = {1, 2, 3, 4};
  BufferPtr arg;
  PJRT_ASSERT_OK(FromVector(input, PJRT_Buffer_Type_F32, {4}, FirstDevice(), &arg));
  std::vector<std::vector<BufferPtr>> outputs;
  std::vector<EventPtr> events;
  PJRT_ASSERT_OK(Execute(executable.get(), {{arg.get()}}, &outputs, &events));
  ASSERT_TRUE(events[0]);
  PJRT_ASSERT_OK(OnReady(events[0].get()));
  events.clear();
  const std::vector<Status> seen = WaitForCallbacks(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].ok()) << seen[0];
}

TEST_F(EventTest, BufferErrorPropagatesToAwaitWithCodeAndMessage) {
  BufferPtr buffer;
  PJRT_SKIP_IF_UNIMPLEMENTED(FailedBuffer(&buffer), "async host-to-device transfers");
  EventPtr event = ReadyEvent(buffer.get());
  ASSERT_TRUE(event);
  const Status status = Await(event.get());
  EXPECT_EQ(status.code, PJRT_Error_Code_DATA_LOSS) << status;
  EXPECT_NE(status.message.find(kFailure), std::string::npos) << status;
  PJRT_ARGS(PJRT_Event_Error_Args, args);
  args.event = event.get();
  const Status stored = PJRT_CALL(api()->PJRT_Event_Error(&args));
  EXPECT_EQ(stored.code, PJRT_Error_Code_DATA_LOSS) << stored;
}

TEST_F(EventTest, BufferErrorPropagatesToOnReady) {
  BufferPtr buffer;
  PJRT_SKIP_IF_UNIMPLEMENTED(FailedBuffer(&buffer), "async host-to-device transfers");
  EventPtr event = ReadyEvent(buffer.get());
  ASSERT_TRUE(event);
  PJRT_ASSERT_OK(OnReady(event.get()));
  const std::vector<Status> seen = WaitForCallbacks(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].code, PJRT_Error_Code_DATA_LOSS) << seen[0];
}

TEST_F(EventTest, BufferErrorPropagatesToReadsOfTheBuffer) {
  BufferPtr buffer;
  PJRT_SKIP_IF_UNIMPLEMENTED(FailedBuffer(&buffer), "async host-to-device transfers");
  std::vector<char> bytes;
  PJRT_ASSERT_ERROR(ToHost(buffer.get(), &bytes));
}

TEST_F(EventTest, AsyncHostToDeviceTransferDeliversData) {
  const std::vector<int64_t> dims = {6};
  PJRT_ARGS(PJRT_ShapeSpec, spec);
  spec.dims = dims.data();
  spec.num_dims = dims.size();
  spec.element_type = PJRT_Buffer_Type_S32;
  PJRT_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, create);
  create.client = client();
  create.shape_specs = &spec;
  create.num_shape_specs = 1;
  create.memory = DefaultMemory(FirstDevice());
  PJRT_SKIP_IF_UNIMPLEMENTED(
      PJRT_CALL(api()->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create)),
      "PJRT_Client_CreateBuffersForAsyncHostToDevice");
  TransferManagerPtr manager(api(), create.transfer_manager);
  const std::vector<int32_t> data = {3, 1, 4, 1, 5, 9};
  for (int half = 0; half < 2; ++half) {  // Two chunks of 12 bytes.
    PJRT_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args, send);
    send.transfer_manager = manager.get();
    send.buffer_index = 0;
    send.data = data.data() + 3 * half;
    send.offset = 12 * half;
    send.transfer_size = 12;
    send.is_last_transfer = half == 1;
    PJRT_ASSERT_OK(
        PJRT_CALL(api()->PJRT_AsyncHostToDeviceTransferManager_TransferData(&send)));
    EventPtr done(api(), send.done_with_h2d_transfer);
    if (done) PJRT_ASSERT_OK(Await(done.get()));
  }
  PJRT_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args, retrieve);
  retrieve.transfer_manager = manager.get();
  retrieve.buffer_index = 0;
  PJRT_ASSERT_OK(
      PJRT_CALL(api()->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&retrieve)));
  BufferPtr buffer(api(), retrieve.buffer_out);
  std::vector<int32_t> back;
  PJRT_ASSERT_OK(ReadVector(buffer.get(), &back));
  EXPECT_EQ(back, data);
}

}  // namespace
}  // namespace pjrt_conformance
