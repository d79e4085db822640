// FfiRegistry on private instances with fake clients: keeping, forwarding, replaying, duplicate
// and id rules, refusals.

// C++ standard library.
#include <memory>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/ffi_registry.h"
#include "xla_plugin/c_api/testing/fake_client.h"

namespace pjrtkit {
namespace capi {
namespace {

using ::pjrtkit::testing::FakeClient;
using ::pjrtkit::testing::FakeFactory;

// Distinct fake handler addresses (never called).
int handler_a = 0;
int handler_b = 0;

FfiHandlerRegistration Handler(const std::string& name, void* handler = &handler_a,
                               const std::string& platform = "pjrtkit") {
  FfiHandlerRegistration r;
  r.target_name = name;
  r.platform_name = platform;
  r.handler = handler;
  r.traits = 0;
  return r;
}

FfiTypeRegistration Type(const std::string& name, int64_t id = 0) {
  FfiTypeRegistration r;
  r.type_name = name;
  r.type_id = id;
  return r;
}

std::unique_ptr<Client> NewFakeClient() {
  StatusOr<std::unique_ptr<Client>> client = FakeFactory::CreateClient({});
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

FakeClient* AsFake(const std::unique_ptr<Client>& client) {
  return static_cast<FakeClient*>(client.get());
}

TEST(FfiRegistryTest, RegistrationsBeforeAClientAreReplayedInOrderTypesFirst) {
  FfiRegistry registry;
  ASSERT_TRUE(registry.AddHandler(Handler("first")).ok());
  StatusOr<int64_t> id = registry.AddType(Type("my_type"));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, FfiRegistry::kFirstTypeId);
  ASSERT_TRUE(registry.AddHandler(Handler("second", &handler_b)).ok());

  std::unique_ptr<Client> client = NewFakeClient();
  ASSERT_TRUE(registry.Attach(client.get()).ok());
  std::vector<FfiHandlerRegistration> handlers = AsFake(client)->ffi_handlers();
  ASSERT_EQ(handlers.size(), 2u);
  EXPECT_EQ(handlers[0].target_name, "first");
  EXPECT_EQ(handlers[0].handler, &handler_a);
  EXPECT_EQ(handlers[1].target_name, "second");
  EXPECT_EQ(handlers[1].handler, &handler_b);
  std::vector<FfiTypeRegistration> types = AsFake(client)->ffi_types();
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0].type_name, "my_type");
  EXPECT_EQ(types[0].type_id, FfiRegistry::kFirstTypeId);
  registry.Detach(client.get());
}

TEST(FfiRegistryTest, RegistrationsAfterAttachAreForwardedUntilDetach) {
  FfiRegistry registry;
  std::unique_ptr<Client> one = NewFakeClient();
  std::unique_ptr<Client> two = NewFakeClient();
  ASSERT_TRUE(registry.Attach(one.get()).ok());
  ASSERT_TRUE(registry.Attach(two.get()).ok());
  ASSERT_TRUE(registry.AddHandler(Handler("live")).ok());
  EXPECT_EQ(AsFake(one)->ffi_handlers().size(), 1u);
  EXPECT_EQ(AsFake(two)->ffi_handlers().size(), 1u);
  registry.Detach(one.get());
  ASSERT_TRUE(registry.AddHandler(Handler("later")).ok());
  EXPECT_EQ(AsFake(one)->ffi_handlers().size(), 1u);
  EXPECT_EQ(AsFake(two)->ffi_handlers().size(), 2u);
  registry.Detach(two.get());
  EXPECT_EQ(registry.handlers().size(), 2u);
}

TEST(FfiRegistryTest, DuplicateHandlersAreNoOpsAndConflictsAreAlreadyExists) {
  FfiRegistry registry;
  ASSERT_TRUE(registry.AddHandler(Handler("dup")).ok());
  EXPECT_TRUE(registry.AddHandler(Handler("dup")).ok());
  EXPECT_EQ(registry.handlers().size(), 1u);
  Status conflict = registry.AddHandler(Handler("dup", &handler_b));
  EXPECT_EQ(conflict.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(conflict.message(),
            "FFI handler 'dup' (platform 'pjrtkit') is already registered with a different "
            "handler");
  // Another platform is another registration.
  EXPECT_TRUE(registry.AddHandler(Handler("dup", &handler_b, "cpu")).ok());
  EXPECT_EQ(registry.handlers().size(), 2u);
}

TEST(FfiRegistryTest, InvalidHandlers) {
  FfiRegistry registry;
  EXPECT_EQ(registry.AddHandler(Handler("")).code(), StatusCode::kInvalidArgument);
  Status null_handler = registry.AddHandler(Handler("x", nullptr));
  EXPECT_EQ(null_handler.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(null_handler.message(), "FFI handler for 'x' is null");
  EXPECT_TRUE(registry.handlers().empty());
}

TEST(FfiRegistryTest, TypeIds) {
  FfiRegistry registry;
  StatusOr<int64_t> a = registry.AddType(Type("a"));
  StatusOr<int64_t> b = registry.AddType(Type("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, FfiRegistry::kFirstTypeId);
  EXPECT_EQ(*b, FfiRegistry::kFirstTypeId + 1);
  // Same name: the same id, asked for (0) or given.
  EXPECT_EQ(*registry.AddType(Type("a")), *a);
  EXPECT_EQ(*registry.AddType(Type("a", *a)), *a);
  // A caller-chosen id.
  EXPECT_EQ(*registry.AddType(Type("c", 7)), 7);
  // Conflicts.
  StatusOr<int64_t> renumbered = registry.AddType(Type("a", 8));
  EXPECT_EQ(renumbered.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(renumbered.status().message(),
            "FFI type 'a' (id " + std::to_string(*a) + ") is already registered; cannot "
            "register it with id 8");
  StatusOr<int64_t> taken = registry.AddType(Type("d", 7));
  EXPECT_EQ(taken.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(taken.status().message(), "FFI type 'd': id 7 is already used by another type");
  EXPECT_EQ(registry.AddType(Type("", 0)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddType(Type("e", -1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.types().size(), 3u);
}

TEST(FfiRegistryTest, ALiveClientsRefusalFailsTheRegistration) {
  FfiRegistry registry;
  std::unique_ptr<Client> client = NewFakeClient();
  ASSERT_TRUE(registry.Attach(client.get()).ok());
  Status refused = registry.AddHandler(Handler("refuse_me"));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "registering FFI handler 'refuse_me' (platform 'pjrtkit') with fake client: fake: "
            "refusing FFI handler 'refuse_me'");
  EXPECT_TRUE(registry.handlers().empty());
  EXPECT_EQ(registry.AddType(Type("refuse_type")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.types().empty());
  registry.Detach(client.get());
}

TEST(FfiRegistryTest, ARefusalBySomeClientsKeepsTheRegistrationOthersAccepted) {
  FfiRegistry registry;
  std::unique_ptr<Client> accepting = NewFakeClient();
  AsFake(accepting)->set_accept_all_ffi(true);
  std::unique_ptr<Client> refusing = NewFakeClient();
  ASSERT_TRUE(registry.Attach(accepting.get()).ok());
  ASSERT_TRUE(registry.Attach(refusing.get()).ok());
  Status status = registry.AddHandler(Handler("refuse_partly"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);  // The caller still hears of it.
  ASSERT_EQ(registry.handlers().size(), 1u);  // Kept: the accepting client (and XLA) hold it.
  EXPECT_EQ(registry.handlers()[0].target_name, "refuse_partly");
  ASSERT_EQ(AsFake(accepting)->ffi_handlers().size(), 1u);
  std::vector<Status> refusals = registry.refusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].message(),
            "registering FFI handler 'refuse_partly' (platform 'pjrtkit') with fake client: "
            "fake: refusing FFI handler 'refuse_partly'");
  // A client created later gets it replayed.
  std::unique_ptr<Client> later = NewFakeClient();
  AsFake(later)->set_accept_all_ffi(true);
  ASSERT_TRUE(registry.Attach(later.get()).ok());
  ASSERT_EQ(AsFake(later)->ffi_handlers().size(), 1u);
  EXPECT_EQ(AsFake(later)->ffi_handlers()[0].target_name, "refuse_partly");
  registry.Detach(later.get());
  registry.Detach(refusing.get());
  registry.Detach(accepting.get());
}

TEST(FfiRegistryTest, AReplayRefusalIsRecordedAndDoesNotFailAttach) {
  FfiRegistry registry;
  ASSERT_TRUE(registry.AddHandler(Handler("refuse_later")).ok());
  ASSERT_TRUE(registry.AddHandler(Handler("fine")).ok());
  std::unique_ptr<Client> client = NewFakeClient();
  ASSERT_TRUE(registry.Attach(client.get()).ok());
  std::vector<FfiHandlerRegistration> handlers = AsFake(client)->ffi_handlers();
  ASSERT_EQ(handlers.size(), 1u);
  EXPECT_EQ(handlers[0].target_name, "fine");
  std::vector<Status> refusals = registry.refusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refusals[0].message(),
            "replaying FFI handler 'refuse_later' (platform 'pjrtkit') to fake client: fake: "
            "refusing FFI handler 'refuse_later'");
  // The registration is kept for clients that may accept it.
  EXPECT_EQ(registry.handlers().size(), 2u);
  registry.Detach(client.get());
}

TEST(FfiRegistryTest, AReplayRefusalIsLoggedAndNamedInACompileErrorOfThatClient) {
  FfiRegistry registry;
  ASSERT_TRUE(registry.AddHandler(Handler("refuse_replayed")).ok());
  std::unique_ptr<Client> client = NewFakeClient();
  std::unique_ptr<Client> other = NewFakeClient();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(registry.Attach(client.get()).ok());
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(logged,
            "pjrtkit: warning: INVALID_ARGUMENT: replaying FFI handler 'refuse_replayed' "
            "(platform 'pjrtkit') to fake client: fake: refusing FFI handler 'refuse_replayed'; "
            "programs calling 'refuse_replayed' will not compile\n");
  const Status compile_error =
      NotFound("No FFI handler registered for refuse_replayed on platform Host");
  Status explained = registry.ExplainCompileError(client.get(), compile_error);
  EXPECT_EQ(explained.code(), StatusCode::kNotFound);
  EXPECT_EQ(explained.message(),
            "No FFI handler registered for refuse_replayed on platform Host; 'refuse_replayed' "
            "was refused when registered: INVALID_ARGUMENT: replaying FFI handler "
            "'refuse_replayed' (platform 'pjrtkit') to fake client: fake: refusing FFI handler "
            "'refuse_replayed'");
  // Errors that do not name it, and other clients' errors, are left alone.
  EXPECT_EQ(registry.ExplainCompileError(client.get(), NotFound("No FFI handler for x")).message(),
            "No FFI handler for x");
  EXPECT_EQ(registry.ExplainCompileError(other.get(), compile_error).message(),
            compile_error.message());
  EXPECT_TRUE(registry.ExplainCompileError(client.get(), OkStatus()).ok());
  // A detached client's refusals go with it.
  registry.Detach(client.get());
  EXPECT_TRUE(registry.refusals().empty());
  EXPECT_EQ(registry.ExplainCompileError(client.get(), compile_error).message(),
            compile_error.message());
}

TEST(FfiRegistryTest, UnimplementedIsARefusalNotAnAcceptance) {
  FfiRegistry registry;
  // Replayed: recorded (and logged) like any refusal.
  ASSERT_TRUE(registry.AddHandler(Handler("unimplemented_replayed")).ok());
  std::unique_ptr<Client> client = NewFakeClient();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(registry.Attach(client.get()).ok());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("UNIMPLEMENTED: replaying FFI handler "
                                                          "'unimplemented_replayed'"),
            std::string::npos);
  ASSERT_EQ(registry.refusals().size(), 1u);
  EXPECT_TRUE(AsFake(client)->ffi_handlers().empty());
  // Live: the only client did not take it, so the registration fails and is not kept.
  Status live = registry.AddHandler(Handler("unimplemented_live", &handler_b));
  EXPECT_EQ(live.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(live.message(),
            "registering FFI handler 'unimplemented_live' (platform 'pjrtkit') with fake client: "
            "fake: no FFI support for 'unimplemented_live'");
  ASSERT_EQ(registry.handlers().size(), 1u);
  EXPECT_EQ(registry.handlers()[0].target_name, "unimplemented_replayed");
  EXPECT_EQ(registry.refusals().size(), 2u);
  EXPECT_NE(registry.ExplainCompileError(client.get(), NotFound("unimplemented_live")).message()
                .find("was refused when registered: UNIMPLEMENTED"),
            std::string::npos);
  registry.Detach(client.get());
}

TEST(FfiRegistryTest, AttachNullIsInvalid) {
  FfiRegistry registry;
  EXPECT_EQ(registry.Attach(nullptr).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace capi
}  // namespace pjrtkit
