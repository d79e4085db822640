// PJRT_Error_* (conversion from pjrtkit::Status, exceptions) and PJRT_Event_* (lifetime,
// callbacks, errors).

// C++ standard library.
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// A factory whose entry points throw or fail, to check what crosses the C boundary.
struct MisbehavingFactory {
  static Status Initialize() { return Status(StatusCode::kPermissionDenied, "no init for you"); }
  static AttributeMap PluginAttributes() { throw std::runtime_error("attributes exploded"); }
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap&) {
    throw std::runtime_error("boom");
  }
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string&,
                                                            const AttributeMap&) {
    return Status(StatusCode::kDataLoss, "topology lost");
  }
};

TEST(ErrorTest, StatusCodeAndMessageCrossTheBoundary) {
  const PJRT_Api* api = CreatePjrtApi<MisbehavingFactory>();
  auto init = MakeArgs<PJRT_Plugin_Initialize_Args>();
  PJRT_Error* error = api->PJRT_Plugin_Initialize(&init);
  ASSERT_NE(error, nullptr);

  auto code = MakeArgs<PJRT_Error_GetCode_Args>();
  code.error = error;
  ASSERT_EQ(api->PJRT_Error_GetCode(&code), nullptr);
  EXPECT_EQ(code.code, PJRT_Error_Code_PERMISSION_DENIED);

  auto message = MakeArgs<PJRT_Error_Message_Args>();
  message.error = error;
  api->PJRT_Error_Message(&message);
  EXPECT_EQ(std::string(message.message, message.message_size), "no init for you");
  // The message lives as long as the error: a second call returns the same pointer.
  const char* first = message.message;
  api->PJRT_Error_Message(&message);
  EXPECT_EQ(message.message, first);

  auto destroy = MakeArgs<PJRT_Error_Destroy_Args>();
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
}

TEST(ErrorTest, EveryStatusCodeMapsToTheSamePjrtCode) {
  for (int c = 1; c <= 16; ++c) {
    PJRT_Error* error = ToPjrtError(Status(static_cast<StatusCode>(c), "x"));
    ErrorInfo info = Consume(error);
    EXPECT_EQ(static_cast<int>(info.code), c);
  }
  EXPECT_EQ(ToPjrtError(OkStatus()), nullptr);
}

TEST(ErrorTest, MessagesAreMadeValidUtf8) {
  // jaxlib decodes messages as UTF-8; a device quoting binary program bytes must not break that.
  ErrorInfo info = Consume(ToPjrtError(
      Status(StatusCode::kInvalidArgument, "bad \xf6 byte, caf\xc3\xa9 ok, cut \xe2\x82")));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "bad \\xf6 byte, caf\xc3\xa9 ok, cut \\xe2\\x82");
  EXPECT_EQ(ToValidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");       // A surrogate is invalid.
  EXPECT_EQ(ToValidUtf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600 is fine.
}

TEST(ErrorTest, FactoryErrorsKeepTheirCode) {
  const PJRT_Api* api = CreatePjrtApi<MisbehavingFactory>();
  auto args = MakeArgs<PJRT_TopologyDescription_Create_Args>();
  ErrorInfo info = Consume(api->PJRT_TopologyDescription_Create(&args), api);
  EXPECT_EQ(info.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_EQ(info.message, "topology lost");
}

TEST(ErrorTest, ExceptionsBecomeInternalErrors) {
  const PJRT_Api* api = CreatePjrtApi<MisbehavingFactory>();
  auto create = MakeArgs<PJRT_Client_Create_Args>();
  ErrorInfo info = Consume(api->PJRT_Client_Create(&create), api);
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message, "PJRT_Client_Create: unexpected exception: boom");
  EXPECT_EQ(create.client, nullptr);

  auto attributes = MakeArgs<PJRT_Plugin_Attributes_Args>();
  info = Consume(api->PJRT_Plugin_Attributes(&attributes), api);
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message, "PJRT_Plugin_Attributes: unexpected exception: attributes exploded");
}

TEST(ErrorTest, ErrorSlotsTolerateBadArgs) {
  const PJRT_Api* api = Api();
  api->PJRT_Error_Destroy(nullptr);
  api->PJRT_Error_Message(nullptr);
  auto destroy = MakeArgs<PJRT_Error_Destroy_Args>();  // error == nullptr
  api->PJRT_Error_Destroy(&destroy);
  auto code = MakeArgs<PJRT_Error_GetCode_Args>();  // error == nullptr
  ErrorInfo info = Consume(api->PJRT_Error_GetCode(&code));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Error_GetCode: args->error is null");
}

// ---- Events -----------------------------------------------------------------------------------

// What an OnReady callback saw.
struct CallbackRecord {
  std::atomic<int> calls{0};
  std::atomic<int> code{-1};
  std::string message;
};

// PJRT_Event_OnReadyCallback that records and destroys the error.
void RecordCallback(PJRT_Error* error, void* user_arg) {
  auto* record = static_cast<CallbackRecord*>(user_arg);
  ErrorInfo info = Consume(error);
  record->message = info.message;
  record->code = info.ok ? 0 : static_cast<int>(info.code);
  ++record->calls;
}

// Registers RecordCallback on `event`.
void OnReady(PJRT_Event* event, CallbackRecord* record) {
  auto args = MakeArgs<PJRT_Event_OnReady_Args>();
  args.event = event;
  args.callback = &RecordCallback;
  args.user_arg = record;
  EXPECT_PJRT_OK(Api()->PJRT_Event_OnReady(&args));
}

// PJRT_Event_IsReady.
bool IsReady(PJRT_Event* event) {
  auto args = MakeArgs<PJRT_Event_IsReady_Args>();
  args.event = event;
  EXPECT_PJRT_OK(Api()->PJRT_Event_IsReady(&args));
  return args.is_ready;
}

// PJRT_Buffer_ReadyEvent.
PJRT_Event* ReadyEvent(PJRT_Buffer* buffer) {
  auto args = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
  args.buffer = buffer;
  EXPECT_PJRT_OK(Api()->PJRT_Buffer_ReadyEvent(&args));
  return args.event;
}

// PJRT_Event_Destroy.
void DestroyEvent(PJRT_Event* event) {
  auto args = MakeArgs<PJRT_Event_Destroy_Args>();
  args.event = event;
  EXPECT_PJRT_OK(Api()->PJRT_Event_Destroy(&args));
}

// A client whose buffers become ready only at ReleasePendingEvents().
class DelayedClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<PJRT_NamedValue> options = {BoolOption("delay_ready", true)};
    client_ = CreateClient(options);
    ASSERT_NE(client_, nullptr);
    device_ = AddressableDevices(client_)[0];
    buffer_ = MakeF32Buffer(client_, device_, {1.0f, 2.0f}, {2});
    ASSERT_NE(buffer_, nullptr);
  }
  void TearDown() override {
    Fake(client_)->ReleasePendingEvents();
    DestroyBuffer(buffer_);
    DestroyClient(client_);
  }

  PJRT_Client* client_ = nullptr;
  PJRT_Device* device_ = nullptr;
  PJRT_Buffer* buffer_ = nullptr;
};

TEST_F(DelayedClientTest, EventDestroyedRightAfterOnReadyStillFiresTheCallback) {
  PJRT_Event* event = ReadyEvent(buffer_);
  EXPECT_FALSE(IsReady(event));
  CallbackRecord record;
  OnReady(event, &record);
  DestroyEvent(event);  // The framework may do this at once.
  EXPECT_EQ(record.calls.load(), 0);
  Fake(client_)->ReleasePendingEvents();
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.code.load(), 0);
}

TEST_F(DelayedClientTest, AwaitBlocksUntilTheEventIsSet) {
  PJRT_Event* event = ReadyEvent(buffer_);
  std::thread setter([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Fake(client_)->ReleasePendingEvents();
  });
  ErrorInfo info = AwaitAndDestroy(event);
  setter.join();
  EXPECT_TRUE(info.ok) << info.message;
}

TEST_F(DelayedClientTest, OnReadyOnAReadyEventRunsAtOnce) {
  Fake(client_)->ReleasePendingEvents();
  PJRT_Event* event = ReadyEvent(buffer_);
  EXPECT_TRUE(IsReady(event));
  CallbackRecord record;
  OnReady(event, &record);
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.code.load(), 0);
  DestroyEvent(event);
}

TEST_F(DelayedClientTest, ErrorEventsReportTheirErrorEverywhere) {
  auto del = MakeArgs<PJRT_Buffer_Delete_Args>();
  del.buffer = buffer_;
  EXPECT_PJRT_OK(Api()->PJRT_Buffer_Delete(&del));
  PJRT_Event* event = ReadyEvent(buffer_);
  EXPECT_TRUE(IsReady(event));
  const std::string expected = "PJRT_Buffer_ReadyEvent: the buffer has been deleted or donated";

  auto error = MakeArgs<PJRT_Event_Error_Args>();
  error.event = event;
  ErrorInfo info = Consume(Api()->PJRT_Event_Error(&error));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message, expected);
  // Each call returns an independent error.
  info = Consume(Api()->PJRT_Event_Error(&error));
  EXPECT_EQ(info.message, expected);

  CallbackRecord record;
  OnReady(event, &record);
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.code.load(), PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(record.message, expected);

  info = AwaitAndDestroy(event);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
}

TEST(EventTest, OnReadyCallbackSurvivesHandleDestroyWhileProducerHoldsEvent) {
  std::shared_ptr<Event> producer = Event::Create();
  PJRT_Event* handle = WrapEvent(producer);
  CallbackRecord record;
  OnReady(handle, &record);
  DestroyEvent(handle);  // The framework drops its handle right after OnReady.
  EXPECT_EQ(record.calls.load(), 0);
  producer->Set(Status(StatusCode::kAborted, "cancelled by producer"));
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.code.load(), PJRT_Error_Code_ABORTED);
  EXPECT_EQ(record.message, "cancelled by producer");
}

TEST(EventTest, AbandonedEventRunsOnReadyCallbackWithCancelledInsteadOfLeaking) {
  // The PJRT_Event is the only owner and no producer will ever set it.
  std::shared_ptr<Event> event = Event::Create();
  std::weak_ptr<Event> weak = event;
  PJRT_Event* handle = WrapEvent(std::move(event));
  CallbackRecord record;
  OnReady(handle, &record);
  DestroyEvent(handle);
  EXPECT_TRUE(weak.expired());  // No self-reference keeps it alive.
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.code.load(), PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(record.message,
            "pjrtkit: the event was destroyed before it became ready (its producer dropped it "
            "without setting it)");
}

TEST(EventTest, OnReadyNeedsACallback) {
  PJRT_Client* client = CreateClient();
  PJRT_Buffer* buffer = MakeF32Buffer(client, AddressableDevices(client)[0], {1.0f}, {1});
  PJRT_Event* event = ReadyEvent(buffer);
  auto args = MakeArgs<PJRT_Event_OnReady_Args>();
  args.event = event;
  ErrorInfo info = Consume(Api()->PJRT_Event_OnReady(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_OnReady: args->callback is null");
  DestroyEvent(event);
  DestroyBuffer(buffer);
  DestroyClient(client);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
