// The PJRT_Api table as a whole, checked against xla_plugin/c_api/slot_decisions.txt: version,
// every slot non-NULL and decided, the UNIMPLEMENTED slots, and the argument validation every
// other entry point shares (null args, short struct_size).

// C++ standard library.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// One line of slot_decisions.txt: how pjrtkit serves a slot.
struct SlotDecision {
  std::string slot;      // PJRT_Api slot name.
  std::string decision;  // pjrtkit, device, unimplemented or undecided.
  std::string note;      // The reason (unimplemented), the client-layer method (device), or "".
};

// The path of xla_plugin/c_api/slot_decisions.txt in this test's runfiles.
std::string DecisionsPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr) return "xla_plugin/c_api/slot_decisions.txt";  // Outside Bazel.
  return std::string(srcdir) + "/" + (workspace != nullptr ? workspace : "pjrtkit") +
         "/xla_plugin/c_api/slot_decisions.txt";
}

// Reads slot_decisions.txt (SLOT<TAB>DECISION<TAB>NOTE; '#' lines and blank lines skipped). A
// malformed line becomes a decision named "malformed: <line>", which the tests below reject.
std::vector<SlotDecision> ReadDecisions() {
  std::vector<SlotDecision> decisions;
  std::ifstream in(DecisionsPath());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos || line.find('\t', second + 1) != std::string::npos) {
      decisions.push_back({line, "malformed: " + line, ""});
      continue;
    }
    decisions.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1),
                         line.substr(second + 1)});
  }
  return decisions;
}

// The decisions file, read once.
const std::vector<SlotDecision>& Decisions() {
  static const std::vector<SlotDecision>* decisions =
      new std::vector<SlotDecision>(ReadDecisions());
  return *decisions;
}

// The decision for `slot` ("" when the file does not list it).
std::string DecisionOf(const std::string& slot) {
  for (const SlotDecision& d : Decisions()) {
    if (d.slot == slot) return d.decision;
  }
  return "";
}

// True for the slots the decisions file marks `unimplemented`.
bool IsUnimplemented(const std::string& slot) { return DecisionOf(slot) == "unimplemented"; }

// The slots of tools/api_coverage/pjrt_api_slots.inc (the pinned header's PJRT_Api), in order.
std::vector<std::string> HeaderSlots() {
  std::vector<std::string> slots;
#define PJRT_API_SLOT(name) slots.push_back(#name);
#include "tools/api_coverage/pjrt_api_slots.inc"
  return slots;
}

// True for PJRT_Error_* (they take the error they describe, not a checked Args struct).
bool IsErrorSlot(const std::string& name) { return name.rfind("PJRT_Error_", 0) == 0; }

// Calls `fn` with `args`; nullopt for the slots that return void.
template <typename Args, typename Result>
std::optional<ErrorInfo> Call(Result (*fn)(Args*), void* args) {
  if constexpr (std::is_void_v<Result>) {
    fn(static_cast<Args*>(args));
    return std::nullopt;
  } else {
    return Consume(fn(static_cast<Args*>(args)));
  }
}

// A zero-filled Args buffer large enough for any Args struct, with struct_size = `struct_size`.
struct ZeroArgs {
  explicit ZeroArgs(size_t struct_size) {
    std::memset(bytes, 0, sizeof(bytes));
    std::memcpy(bytes, &struct_size, sizeof(struct_size));
  }
  alignas(16) unsigned char bytes[1024];
};

TEST(ApiTableTest, VersionAndStructSize) {
  const PJRT_Api* api = Api();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
  EXPECT_EQ(api->pjrt_api_version.struct_size, static_cast<size_t>(PJRT_Api_Version_STRUCT_SIZE));
  EXPECT_EQ(api->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_EQ(api->pjrt_api_version.minor_version, PJRT_API_MINOR);
  // The extension chain holds the FFI extension (ffi_extension_test checks it in detail).
  bool has_ffi = false;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    has_ffi = has_ffi || e->type == PJRT_Extension_Type_FFI;
  }
  EXPECT_TRUE(has_ffi);
}

TEST(ApiTableTest, TheTableIsBuiltOnce) {
  EXPECT_EQ(CreatePjrtApi<testing::FakeFactory>(), CreatePjrtApi<testing::FakeFactory>());
}

TEST(ApiTableTest, DecisionsListEverySlotOnceInHeaderOrder) {
  std::vector<std::string> listed;
  for (const SlotDecision& d : Decisions()) listed.push_back(d.slot);
  ASSERT_FALSE(listed.empty()) << "cannot read " << DecisionsPath();
  // Equal lists: every slot exactly once, in header order, and nothing else.
  EXPECT_EQ(listed, HeaderSlots())
      << DecisionsPath() << " is out of date with pjrt_c_api.h; run "
      << "tools/pjrt_headers/uplift.py --write (tools/pjrt_headers/README.md)";
}

TEST(ApiTableTest, EverySlotIsDecided) {
  for (const SlotDecision& d : Decisions()) {
    EXPECT_NE(d.decision, "undecided")
        << d.slot << " is new in pjrt_c_api.h: decide it in slot_decisions.txt "
        << "(pjrtkit, device or unimplemented with the reason)";
    EXPECT_TRUE(d.decision == "pjrtkit" || d.decision == "device" ||
                d.decision == "unimplemented" || d.decision == "undecided")
        << d.slot << ": unknown decision '" << d.decision << "'";
    if (d.decision == "unimplemented") {
      EXPECT_FALSE(d.note.empty()) << d.slot << " is unimplemented without a reason";
    }
  }
}

TEST(ApiTableTest, EverySlotIsNonNull) {
  const PJRT_Api* api = Api();
  int slots = 0;
  size_t end = 0;  // Where the last slot of the list ends.
#define PJRT_API_SLOT(name)                                                    \
  EXPECT_NE(reinterpret_cast<void*>(api->name), nullptr) << #name;             \
  ++slots;                                                                     \
  end = std::max(end, offsetof(PJRT_Api, name) + sizeof(api->name));
#include "tools/api_coverage/pjrt_api_slots.inc"
  EXPECT_EQ(slots, static_cast<int>(HeaderSlots().size()));
  // The list covers the whole table: its last slot ends the struct.
  EXPECT_EQ(end, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
}

TEST(ApiTableTest, UnimplementedSlotsReturnUnimplementedNamingTheFunction) {
  const PJRT_Api* api = Api();
  int unimplemented = 0;
#define PJRT_API_SLOT(name)                                                                   \
  if (IsUnimplemented(#name)) {                                                               \
    ++unimplemented;                                                                          \
    ZeroArgs args(sizeof(ZeroArgs::bytes));                                                   \
    std::optional<ErrorInfo> info = Call(api->name, args.bytes);                              \
    ASSERT_TRUE(info.has_value()) << #name;                                                   \
    EXPECT_FALSE(info->ok) << #name;                                                          \
    EXPECT_EQ(info->code, PJRT_Error_Code_UNIMPLEMENTED) << #name;                            \
    EXPECT_EQ(info->message, std::string(#name) + " is not implemented by pjrtkit") << #name; \
    /* Null args too: the slot never looks at them. */                                        \
    std::optional<ErrorInfo> null_info = Call(api->name, nullptr);                            \
    ASSERT_TRUE(null_info.has_value()) << #name;                                              \
    EXPECT_EQ(null_info->code, PJRT_Error_Code_UNIMPLEMENTED) << #name;                       \
    EXPECT_EQ(null_info->message, std::string(#name) + " is not implemented by pjrtkit");     \
  }
#include "tools/api_coverage/pjrt_api_slots.inc"
  int expected = 0;
  for (const SlotDecision& d : Decisions()) expected += d.decision == "unimplemented";
  EXPECT_EQ(unimplemented, expected);
  EXPECT_GT(unimplemented, 0);
}

TEST(ApiTableTest, EveryOtherSlotRejectsNullArgs) {
  const PJRT_Api* api = Api();
  int checked = 0;
#define PJRT_API_SLOT(name)                                                   \
  if (!IsUnimplemented(#name) && !IsErrorSlot(#name)) {                       \
    ++checked;                                                                \
    std::optional<ErrorInfo> info = Call(api->name, nullptr);                 \
    ASSERT_TRUE(info.has_value()) << #name;                                   \
    EXPECT_EQ(info->code, PJRT_Error_Code_INVALID_ARGUMENT) << #name;         \
    EXPECT_EQ(info->message, std::string(#name) + ": args is null") << #name; \
  }
#include "tools/api_coverage/pjrt_api_slots.inc"
  int expected = 0;
  for (const SlotDecision& d : Decisions()) {
    expected += d.decision != "unimplemented" && !IsErrorSlot(d.slot);
  }
  EXPECT_EQ(checked, expected);
  EXPECT_GT(checked, 0);
}

TEST(ApiTableTest, EveryOtherSlotRejectsStructSizeZero) {
  const PJRT_Api* api = Api();
#define PJRT_API_SLOT(name)                                                                  \
  if (!IsUnimplemented(#name) && !IsErrorSlot(#name)) {                                      \
    ZeroArgs args(0);                                                                        \
    std::optional<ErrorInfo> info = Call(api->name, args.bytes);                             \
    ASSERT_TRUE(info.has_value()) << #name;                                                  \
    EXPECT_EQ(info->code, PJRT_Error_Code_INVALID_ARGUMENT) << #name;                        \
    EXPECT_EQ(info->message.rfind(std::string(#name) + ": " #name "_Args struct_size is 0, " \
                                                       "expected at least ",                 \
                                  0),                                                        \
              0u)                                                                            \
        << info->message;                                                                    \
  }
#include "tools/api_coverage/pjrt_api_slots.inc"
}

TEST(ApiTableTest, StructSizeOneByteShortIsRejectedWithTheSizes) {
  auto args =
      MakeArgs<PJRT_Client_PlatformName_Args>(PJRT_Client_PlatformName_Args_STRUCT_SIZE - 1);
  ErrorInfo info = Consume(Api()->PJRT_Client_PlatformName(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Client_PlatformName: PJRT_Client_PlatformName_Args struct_size is " +
                std::to_string(PJRT_Client_PlatformName_Args_STRUCT_SIZE - 1) +
                ", expected at least " + std::to_string(PJRT_Client_PlatformName_Args_STRUCT_SIZE) +
                " (the caller was built against an incompatible pjrt_c_api.h)");
}

TEST(ApiTableTest, NewerCallersWithBiggerStructsAreAccepted) {
  PJRT_Client* client = CreateClient();
  ASSERT_NE(client, nullptr);
  struct Bigger {
    PJRT_Client_PlatformName_Args args;
    char future_fields[64];
  } bigger;
  std::memset(&bigger, 0, sizeof(bigger));
  bigger.args.struct_size = sizeof(bigger);
  bigger.args.client = client;
  EXPECT_PJRT_OK(Api()->PJRT_Client_PlatformName(&bigger.args));
  EXPECT_EQ(std::string(bigger.args.platform_name, bigger.args.platform_name_size), "fake");
  DestroyClient(client);
}

TEST(ApiTableTest, OlderClientCreateWithoutTryGetCallbackIsAccepted) {
  // Before kv_try_get_callback existed, PJRT_Client_Create_Args ended at `client`.
  auto args = MakeArgs<PJRT_Client_Create_Args>(PJRTKIT_ARGS_SIZE(PJRT_Client_Create_Args, client));
  EXPECT_PJRT_OK(Api()->PJRT_Client_Create(&args));
  ASSERT_NE(args.client, nullptr);
  DestroyClient(args.client);
}

TEST(ApiTableTest, NullHandlesAreInvalidArgumentNamingTheField) {
  auto name = MakeArgs<PJRT_Client_PlatformName_Args>();
  ErrorInfo info = Consume(Api()->PJRT_Client_PlatformName(&name));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "PJRT_Client_PlatformName: args->client is null");

  auto dims = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  info = Consume(Api()->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(info.message, "PJRT_Buffer_Dimensions: args->buffer is null");

  auto to_host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  info = Consume(Api()->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: args->src is null");
}

TEST(ApiTableTest, DestroyingNullHandlesIsFine) {
  auto client = MakeArgs<PJRT_Client_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Client_Destroy(&client));
  auto buffer = MakeArgs<PJRT_Buffer_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Buffer_Destroy(&buffer));
  auto event = MakeArgs<PJRT_Event_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Event_Destroy(&event));
  auto executable = MakeArgs<PJRT_Executable_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_Executable_Destroy(&executable));
  auto loaded = MakeArgs<PJRT_LoadedExecutable_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_LoadedExecutable_Destroy(&loaded));
  auto topology = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
  EXPECT_PJRT_OK(Api()->PJRT_TopologyDescription_Destroy(&topology));
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
