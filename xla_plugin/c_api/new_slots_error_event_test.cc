// The PJRT C API 0.82-0.117 slots of errors, memories and events against the fake device:
// PJRT_Error_ForEachPayload and the function table every PJRT_Error starts with (destroy,
// message, code, payloads through `error->vtable`), the PJRT_Memory function table (user data
// set, replaced, destroyed with the client), and events the framework makes and sets
// (PJRT_Event_Create / PJRT_Event_Set).

// C++ standard library.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/error.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// An error with payloads "b" = "2" then "a" = "1" (set in that order).
PJRT_Error* ErrorWithPayloads() {
  Status status(StatusCode::kAborted, "two payloads");
  status.SetPayload("b", "2");
  status.SetPayload("a", "1");
  return ToPjrtError(std::move(status));
}

// The payloads of `error` through PJRT_Error_ForEachPayload, as "key=value;...".
std::string Payloads(const PJRT_Error* error) {
  std::string out;
  auto args = MakeArgs<PJRT_Error_ForEachPayload_Args>();
  args.error = error;
  args.visitor = &AppendPayload;
  args.user_arg = &out;
  ErrorInfo info = Consume(Api()->PJRT_Error_ForEachPayload(&args));
  EXPECT_TRUE(info.ok) << info.message;
  return out;
}

// ---- PJRT_Error_ForEachPayload ----------------------------------------------------------------

TEST(NewErrorSlotsTest, ForEachPayloadVisitsEveryPayloadInTheOrderSet) {
  PJRT_Error* error = ErrorWithPayloads();
  EXPECT_EQ(Payloads(error), "b=2;a=1;");
  // A payload set again keeps its place and takes the new value.
  Status status(StatusCode::kAborted, "replaced");
  status.SetPayload("k", "old");
  status.SetPayload("z", "last");
  status.SetPayload("k", "new");
  PJRT_Error* replaced = ToPjrtError(std::move(status));
  EXPECT_EQ(Payloads(replaced), "k=new;z=last;");
  // No payloads: the visitor is never called.
  PJRT_Error* plain = ToPjrtError(Status(StatusCode::kInternal, "none"));
  EXPECT_EQ(Payloads(plain), "");
  // The error itself is unchanged by the visit.
  ErrorInfo info = Consume(error);
  EXPECT_EQ(info.code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(info.message, "two payloads");
  Consume(replaced);
  Consume(plain);
}

TEST(NewErrorSlotsTest, ForEachPayloadChecksItsArguments) {
  const PJRT_Api* api = Api();
  ErrorInfo info = Consume(api->PJRT_Error_ForEachPayload(nullptr));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Error_ForEachPayload: args is null");

  PJRT_Error* error = ErrorWithPayloads();
  std::string seen;
  auto args = MakeArgs<PJRT_Error_ForEachPayload_Args>();
  args.error = error;
  args.visitor = &AppendPayload;
  args.user_arg = &seen;
  EXPECT_EQ(sizeof(PJRT_Error_ForEachPayload_Args), 40u);
  args.struct_size = 32;  // One field short of user_arg.
  info = Consume(api->PJRT_Error_ForEachPayload(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Error_ForEachPayload", 32, 40));
  EXPECT_EQ(seen, "");  // Refused before visiting.

  args.struct_size = PJRT_Error_ForEachPayload_Args_STRUCT_SIZE;
  args.visitor = nullptr;
  info = Consume(api->PJRT_Error_ForEachPayload(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Error_ForEachPayload: args->visitor is null");

  args.visitor = &AppendPayload;
  args.error = nullptr;
  info = Consume(api->PJRT_Error_ForEachPayload(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Error_ForEachPayload: args->error is null");

  // A newer caller's bigger struct is accepted.
  struct Bigger {
    PJRT_Error_ForEachPayload_Args args;
    char future_fields[16];
  } bigger;
  std::memset(&bigger, 0, sizeof(bigger));
  bigger.args.struct_size = sizeof(bigger);
  bigger.args.error = error;
  bigger.args.visitor = &AppendPayload;
  bigger.args.user_arg = &seen;
  EXPECT_PJRT_OK(api->PJRT_Error_ForEachPayload(&bigger.args));
  EXPECT_EQ(seen, "b=2;a=1;");
  Consume(error);
}

TEST(NewErrorSlotsTest, AnErrorFromAnEntryPointCarriesNoPayloads) {
  // Errors the table returns are ordinary PJRT_Errors: the slot works on them too.
  auto code = MakeArgs<PJRT_Error_GetCode_Args>();  // error == nullptr
  PJRT_Error* error = Api()->PJRT_Error_GetCode(&code);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(Payloads(error), "");
  EXPECT_EQ(Consume(error).message, "PJRT_Error_GetCode: args->error is null");
}

// ---- The PJRT_Error function table ------------------------------------------------------------

TEST(NewErrorSlotsTest, EveryErrorStartsWithTheFunctionTable) {
  PJRT_Error* first = ErrorWithPayloads();
  auto code = MakeArgs<PJRT_Error_GetCode_Args>();
  PJRT_Error* second = Api()->PJRT_Error_GetCode(&code);  // From an entry point.
  ASSERT_NE(second, nullptr);
  const PJRT_Error_FunctionTable* table = first->vtable;
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(second->vtable, table);
  EXPECT_EQ(EmergencyError()->vtable, table);
  EXPECT_EQ(table, ErrorFunctionTable());
  EXPECT_EQ(table->struct_size, PJRT_Error_FunctionTable_STRUCT_SIZE);
  EXPECT_EQ(table->struct_size, 56u);
  EXPECT_EQ(table->instance_size, sizeof(ErrorImpl));
  EXPECT_EQ(table->extension_start, nullptr);
  EXPECT_NE(table->destroy, nullptr);
  EXPECT_NE(table->message, nullptr);
  EXPECT_NE(table->get_code, nullptr);
  EXPECT_NE(table->for_each_payload, nullptr);
  table->destroy(first);
  table->destroy(second);
}

TEST(NewErrorSlotsTest, TheFunctionTableAnswersLikeTheApi) {
  PJRT_Error* error = ErrorWithPayloads();
  const PJRT_Error_FunctionTable* table = error->vtable;
  EXPECT_EQ(table->get_code(error), PJRT_Error_Code_ABORTED);
  const char* message = nullptr;
  size_t size = 99;
  table->message(error, &message, &size);
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(std::string(message, size), "two payloads");
  // The same storage as PJRT_Error_Message's.
  auto api_message = MakeArgs<PJRT_Error_Message_Args>();
  api_message.error = error;
  Api()->PJRT_Error_Message(&api_message);
  EXPECT_EQ(api_message.message, message);
  EXPECT_EQ(api_message.message_size, size);
  std::string seen;
  table->for_each_payload(error, &AppendPayload, &seen);
  EXPECT_EQ(seen, "b=2;a=1;");
  // A null visitor or null outputs are tolerated (nothing to report an error to).
  table->for_each_payload(error, nullptr, &seen);
  table->message(error, nullptr, nullptr);
  EXPECT_EQ(seen, "b=2;a=1;");
  // So is a null error: OK, an empty message, no payloads.
  EXPECT_EQ(table->get_code(nullptr), PJRT_Error_Code_OK);
  table->message(nullptr, &message, &size);
  EXPECT_EQ(std::string(message, size), "");
  table->for_each_payload(nullptr, &AppendPayload, &seen);
  EXPECT_EQ(seen, "b=2;a=1;");
  table->destroy(nullptr);
  // The emergency error is never freed through the table either.
  PJRT_Error* emergency = EmergencyError();
  table->destroy(emergency);
  EXPECT_EQ(table->get_code(emergency), PJRT_Error_Code_RESOURCE_EXHAUSTED);
  table->message(emergency, &message, &size);
  EXPECT_EQ(std::string(message, size), "pjrtkit: out of memory while reporting an error");
  // destroy frees the error (LeakSanitizer would report it otherwise).
  table->destroy(error);
}

TEST(NewErrorSlotsTest, AMessageMadeValidUtf8IsWhatTheTableReturns) {
  PJRT_Error* error = ToPjrtError(Status(StatusCode::kDataLoss, "bad \xff byte"));
  const char* message = nullptr;
  size_t size = 0;
  error->vtable->message(error, &message, &size);
  EXPECT_EQ(std::string(message, size), "bad \\xff byte");
  EXPECT_EQ(error->vtable->get_code(error), PJRT_Error_Code_DATA_LOSS);
  error->vtable->destroy(error);
}

// ---- The PJRT_Memory function table -----------------------------------------------------------

// What the user-data destructors saw, in order.
std::vector<void*>& DestroyedUserData() {
  static std::vector<void*> destroyed;
  return destroyed;
}
void RecordDestroyed(void* data) { DestroyedUserData().push_back(data); }

class MemoryTableTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    DestroyedUserData().clear();
    memories_ = AddressableMemories(client_);
    ASSERT_EQ(memories_.size(), 3u);  // Two "device" memories and the shared "pinned_host".
  }

  std::vector<PJRT_Memory*> memories_;  // The client's memories.
  int key_a_ = 0, key_b_ = 0;           // Keys (their addresses).
  int value_1_ = 1, value_2_ = 2, value_3_ = 3;  // User data (their addresses).
};

TEST_F(MemoryTableTest, EveryMemoryStartsWithTheFunctionTable) {
  const PJRT_Memory_FunctionTable* table = memories_[0]->vtable;
  ASSERT_NE(table, nullptr);
  for (PJRT_Memory* memory : memories_) EXPECT_EQ(memory->vtable, table);
  // A device's memories are the same handles.
  auto device_memories = MakeArgs<PJRT_Device_AddressableMemories_Args>();
  device_memories.device = devices_[1];
  EXPECT_PJRT_OK(api_->PJRT_Device_AddressableMemories(&device_memories));
  ASSERT_EQ(device_memories.num_memories, 2u);
  EXPECT_EQ(device_memories.memories[0]->vtable, table);
  EXPECT_EQ(table->struct_size, PJRT_Memory_FunctionTable_STRUCT_SIZE);
  EXPECT_EQ(table->struct_size, 40u);
  EXPECT_EQ(table->instance_struct_size, PJRT_Memory_STRUCT_SIZE);
  EXPECT_EQ(table->instance_struct_size, 8u);
  EXPECT_EQ(table->extension_start, nullptr);
  EXPECT_NE(table->get_user_data, nullptr);
  EXPECT_NE(table->set_user_data, nullptr);
}

TEST_F(MemoryTableTest, UserDataIsKeptPerMemoryAndPerKey) {
  PJRT_Memory* m0 = memories_[0];
  PJRT_Memory* m1 = memories_[1];
  const PJRT_Memory_FunctionTable* table = m0->vtable;
  EXPECT_EQ(table->get_user_data(m0, &key_a_), nullptr);
  table->set_user_data(m0, &key_a_, &value_1_, &RecordDestroyed);
  EXPECT_EQ(table->get_user_data(m0, &key_a_), &value_1_);
  EXPECT_EQ(table->get_user_data(m0, &key_b_), nullptr);  // Another key.
  EXPECT_EQ(table->get_user_data(m1, &key_a_), nullptr);  // Another memory.
  table->set_user_data(m1, &key_a_, &value_2_, &RecordDestroyed);
  table->set_user_data(m0, &key_b_, &value_3_, nullptr);  // No destructor.
  EXPECT_EQ(table->get_user_data(m0, &key_a_), &value_1_);
  EXPECT_EQ(table->get_user_data(m1, &key_a_), &value_2_);
  EXPECT_EQ(table->get_user_data(m0, &key_b_), &value_3_);
  EXPECT_TRUE(DestroyedUserData().empty());
  // A null memory is tolerated.
  EXPECT_EQ(table->get_user_data(nullptr, &key_a_), nullptr);
  table->set_user_data(nullptr, &key_a_, &value_1_, &RecordDestroyed);
  EXPECT_TRUE(DestroyedUserData().empty());
}

TEST_F(MemoryTableTest, ReplacingUserDataDestroysTheOldDataOnce) {
  PJRT_Memory* m0 = memories_[0];
  const PJRT_Memory_FunctionTable* table = m0->vtable;
  table->set_user_data(m0, &key_a_, &value_1_, &RecordDestroyed);
  table->set_user_data(m0, &key_a_, &value_2_, &RecordDestroyed);
  EXPECT_EQ(table->get_user_data(m0, &key_a_), &value_2_);
  EXPECT_EQ(DestroyedUserData(), std::vector<void*>{&value_1_});
  // Setting the same data again destroys nothing.
  table->set_user_data(m0, &key_a_, &value_2_, &RecordDestroyed);
  EXPECT_EQ(DestroyedUserData(), std::vector<void*>{&value_1_});
  // Replacing data that had no destructor destroys nothing.
  table->set_user_data(m0, &key_b_, &value_3_, nullptr);
  table->set_user_data(m0, &key_b_, &value_1_, &RecordDestroyed);
  EXPECT_EQ(DestroyedUserData(), std::vector<void*>{&value_1_});
  EXPECT_EQ(table->get_user_data(m0, &key_b_), &value_1_);
}

TEST_F(MemoryTableTest, UserDataIsDestroyedWithTheClient) {
  const PJRT_Memory_FunctionTable* table = memories_[0]->vtable;
  table->set_user_data(memories_[0], &key_a_, &value_1_, &RecordDestroyed);
  table->set_user_data(memories_[2], &key_b_, &value_2_, &RecordDestroyed);
  table->set_user_data(memories_[1], &key_a_, &value_3_, nullptr);
  DestroyClient(client_);
  client_ = nullptr;
  std::vector<void*> destroyed = DestroyedUserData();
  std::sort(destroyed.begin(), destroyed.end());
  std::vector<void*> expected = {&value_1_, &value_2_};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(destroyed, expected);
}

TEST_F(MemoryTableTest, UserDataLivesAsLongAsTheClientDoes) {
  // A buffer keeps the client (and its memories) alive past PJRT_Client_Destroy.
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  PJRT_Memory* memory = memories_[0];
  memory->vtable->set_user_data(memory, &key_a_, &value_1_, &RecordDestroyed);
  DestroyClient(client_);
  client_ = nullptr;
  EXPECT_TRUE(DestroyedUserData().empty());
  EXPECT_EQ(memory->vtable->get_user_data(memory, &key_a_), &value_1_);
  DestroyBuffer(buffer);
  EXPECT_EQ(DestroyedUserData(), std::vector<void*>{&value_1_});
}

// ---- PJRT_Event_Create / PJRT_Event_Set -------------------------------------------------------

// What an OnReady callback saw.
struct Seen {
  int calls = 0;
  ErrorInfo info;
};
void RecordReady(PJRT_Error* error, void* user_arg) {
  auto* seen = static_cast<Seen*>(user_arg);
  seen->info = Consume(error);
  ++seen->calls;
}

class FrameworkEventTest : public ClientTest {
 protected:
  // PJRT_Event_Create; fails the test on error.
  PJRT_Event* Create() {
    auto args = MakeArgs<PJRT_Event_Create_Args>();
    EXPECT_PJRT_OK(api_->PJRT_Event_Create(&args));
    EXPECT_NE(args.event, nullptr);
    return args.event;
  }
  // PJRT_Event_Set of `event` with `code` and `message`.
  ErrorInfo Set(PJRT_Event* event, PJRT_Error_Code code, const std::string& message = "") {
    auto args = MakeArgs<PJRT_Event_Set_Args>();
    args.event = event;
    args.error_code = code;
    args.error_message = message.empty() ? nullptr : message.data();
    args.error_message_size = message.size();
    return Consume(api_->PJRT_Event_Set(&args));
  }
  bool IsReady(PJRT_Event* event) {
    auto args = MakeArgs<PJRT_Event_IsReady_Args>();
    args.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }
  void OnReady(PJRT_Event* event, Seen* seen) {
    auto args = MakeArgs<PJRT_Event_OnReady_Args>();
    args.event = event;
    args.callback = &RecordReady;
    args.user_arg = seen;
    EXPECT_PJRT_OK(api_->PJRT_Event_OnReady(&args));
  }
  void Destroy(PJRT_Event* event) {
    auto args = MakeArgs<PJRT_Event_Destroy_Args>();
    args.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_Destroy(&args));
  }
};

TEST_F(FrameworkEventTest, ACreatedEventIsReadyWhenSet) {
  PJRT_Event* event = Create();
  EXPECT_FALSE(IsReady(event));
  Seen seen;
  OnReady(event, &seen);
  EXPECT_EQ(seen.calls, 0);
  EXPECT_TRUE(Set(event, PJRT_Error_Code_OK).ok);
  EXPECT_TRUE(IsReady(event));
  EXPECT_EQ(seen.calls, 1);
  EXPECT_TRUE(seen.info.ok);
  EXPECT_TRUE(AwaitAndDestroy(event).ok);
}

TEST_F(FrameworkEventTest, AnEventSetWithAnErrorFailsWithIt) {
  PJRT_Event* event = Create();
  Seen before;
  OnReady(event, &before);
  EXPECT_TRUE(Set(event, PJRT_Error_Code_RESOURCE_EXHAUSTED, "the host ran out").ok);
  EXPECT_EQ(before.calls, 1);
  EXPECT_EQ(before.info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(before.info.message, "the host ran out");
  // A callback registered after the fact sees the same error, at once.
  Seen after;
  OnReady(event, &after);
  EXPECT_EQ(after.calls, 1);
  EXPECT_EQ(after.info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(after.info.message, "the host ran out");
  auto error = MakeArgs<PJRT_Event_Error_Args>();
  error.event = event;
  ErrorInfo info = Consume(api_->PJRT_Event_Error(&error));
  EXPECT_EQ(info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(info.message, "the host ran out");
  info = AwaitAndDestroy(event);
  EXPECT_EQ(info.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(info.message, "the host ran out");
}

TEST_F(FrameworkEventTest, AnErrorWithoutAMessageHasAnEmptyOne) {
  PJRT_Event* event = Create();
  EXPECT_TRUE(Set(event, PJRT_Error_Code_CANCELLED).ok);
  ErrorInfo info = AwaitAndDestroy(event);
  EXPECT_EQ(info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(info.message, "");
  // With OK, a message is ignored.
  event = Create();
  EXPECT_TRUE(Set(event, PJRT_Error_Code_OK, "ignored").ok);
  EXPECT_TRUE(AwaitAndDestroy(event).ok);
  // The message is copied: the caller's storage may go right after the call.
  event = Create();
  {
    std::string message = "copied";
    EXPECT_TRUE(Set(event, PJRT_Error_Code_UNAVAILABLE, message).ok);
    message.assign("overwritten");
  }
  info = AwaitAndDestroy(event);
  EXPECT_EQ(info.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_EQ(info.message, "copied");
}

TEST_F(FrameworkEventTest, AnEventIsSetOnce) {
  PJRT_Event* event = Create();
  EXPECT_TRUE(Set(event, PJRT_Error_Code_OK).ok);
  ErrorInfo again = Set(event, PJRT_Error_Code_INTERNAL, "too late");
  EXPECT_EQ(again.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(again.message, "PJRT_Event_Set: the event was set already");
  // The first outcome stands.
  EXPECT_TRUE(AwaitAndDestroy(event).ok);

  event = Create();
  EXPECT_TRUE(Set(event, PJRT_Error_Code_ABORTED, "first").ok);
  again = Set(event, PJRT_Error_Code_OK);
  EXPECT_EQ(again.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(again.message, "PJRT_Event_Set: the event was set already");
  ErrorInfo info = AwaitAndDestroy(event);
  EXPECT_EQ(info.code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(info.message, "first");
}

TEST_F(FrameworkEventTest, OnlyEventsOfEventCreateCanBeSet) {
  // A buffer's ready event is the plugin's.
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1}, {1});
  ASSERT_NE(buffer, nullptr);
  auto ready = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
  ready.buffer = buffer;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_ReadyEvent(&ready));
  ErrorInfo info = Set(ready.event, PJRT_Error_Code_INTERNAL, "not yours");
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Event_Set: the event was not made by PJRT_Event_Create; only those can be set");
  EXPECT_TRUE(AwaitAndDestroy(ready.event).ok);  // Untouched.
  DestroyBuffer(buffer);
}

TEST_F(FrameworkEventTest, SetChecksItsArguments) {
  ErrorInfo info = Consume(api_->PJRT_Event_Set(nullptr));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_Set: args is null");
  PJRT_Event* event = Create();
  auto args = MakeArgs<PJRT_Event_Set_Args>();
  args.event = event;
  EXPECT_EQ(sizeof(PJRT_Event_Set_Args), 48u);
  args.struct_size = 40;  // error_message_size missing.
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Event_Set", 40, 48));
  args.struct_size = PJRT_Event_Set_Args_STRUCT_SIZE;
  args.event = nullptr;
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.message, "PJRT_Event_Set: args->event is null");
  args.event = event;
  args.error_code = static_cast<PJRT_Error_Code>(17);
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_Set: error_code 17 is not a PJRT_Error_Code (0..16)");
  // Any int the framework puts there is read as an int (not loaded as the enum).
  const int negative = -1;
  std::memcpy(&args.error_code, &negative, sizeof(negative));
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_Set: error_code -1 is not a PJRT_Error_Code (0..16)");
  const int large = 1000;
  std::memcpy(&args.error_code, &large, sizeof(large));
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.message, "PJRT_Event_Set: error_code 1000 is not a PJRT_Error_Code (0..16)");
  args.error_code = PJRT_Error_Code_INTERNAL;
  args.error_message = nullptr;
  args.error_message_size = 3;
  info = Consume(api_->PJRT_Event_Set(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_Set: args->error_message is null");
  // None of the refusals set the event.
  EXPECT_FALSE(IsReady(event));
  EXPECT_TRUE(Set(event, PJRT_Error_Code_OK).ok);
  EXPECT_TRUE(AwaitAndDestroy(event).ok);
}

TEST_F(FrameworkEventTest, CreateChecksItsArguments) {
  ErrorInfo info = Consume(api_->PJRT_Event_Create(nullptr));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Event_Create: args is null");
  auto args = MakeArgs<PJRT_Event_Create_Args>();
  EXPECT_EQ(sizeof(PJRT_Event_Create_Args), 24u);
  args.struct_size = 16;
  info = Consume(api_->PJRT_Event_Create(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, ShortStruct("PJRT_Event_Create", 16, 24));
  EXPECT_EQ(args.event, nullptr);
  // Every call makes a new event.
  PJRT_Event* a = Create();
  PJRT_Event* b = Create();
  EXPECT_NE(a, b);
  EXPECT_TRUE(Set(a, PJRT_Error_Code_OK).ok);
  EXPECT_FALSE(IsReady(b));
  Destroy(a);
  Destroy(b);
}

TEST_F(FrameworkEventTest, AnEventDestroyedUnsetCancelsItsCallbacks) {
  PJRT_Event* event = Create();
  Seen seen;
  OnReady(event, &seen);
  Destroy(event);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(seen.info.message,
            "pjrtkit: the event was destroyed before it became ready (its producer dropped it "
            "without setting it)");
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
