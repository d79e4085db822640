// The PJRT_Api table as a whole: version, every slot non-NULL, the UNIMPLEMENTED slots, and the
// argument validation every implemented entry point shares (null args, short struct_size).

// C++ standard library.
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

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

// The slots pjrtkit leaves UNIMPLEMENTED (see unimplemented.cc for the reasons).
const std::set<std::string>& UnimplementedSlots() {
  static const std::set<std::string> slots = {
      "PJRT_CopyToDeviceStream_Destroy",
      "PJRT_CopyToDeviceStream_AddChunk",
      "PJRT_CopyToDeviceStream_TotalBytes",
      "PJRT_CopyToDeviceStream_GranuleSize",
      "PJRT_CopyToDeviceStream_CurrentBytes",
      "PJRT_Client_DmaMap",
      "PJRT_Client_DmaUnmap",
      "PJRT_Client_CreateAliasBuffer",
      "PJRT_Client_FulfillAliasBuffer",
  };
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
  EXPECT_EQ(api->pjrt_api_version.major_version, 0);
  EXPECT_EQ(api->pjrt_api_version.minor_version, 81);
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

TEST(ApiTableTest, EverySlotIsNonNull) {
  const PJRT_Api* api = Api();
  int slots = 0;
#define PJRT_API_SLOT(name)                                        \
  EXPECT_NE(reinterpret_cast<void*>(api->name), nullptr) << #name; \
  ++slots;
#include "tools/api_coverage/pjrt_api_slots.inc"
  EXPECT_EQ(slots, 118);
}

TEST(ApiTableTest, UnimplementedSlotsReturnUnimplementedNamingTheFunction) {
  const PJRT_Api* api = Api();
  int unimplemented = 0;
#define PJRT_API_SLOT(name)                                                                   \
  if (UnimplementedSlots().count(#name) > 0) {                                                \
    ++unimplemented;                                                                          \
    ZeroArgs args(sizeof(ZeroArgs::bytes));                                                   \
    std::optional<ErrorInfo> info = Call(api->name, args.bytes);                              \
    ASSERT_TRUE(info.has_value()) << #name;                                                   \
    EXPECT_FALSE(info->ok) << #name;                                                          \
    EXPECT_EQ(info->code, PJRT_Error_Code_UNIMPLEMENTED) << #name;                            \
    EXPECT_EQ(info->message, std::string(#name) + " is not implemented by pjrtkit") << #name; \
    /* Null args too: the slot never looks at them. */                                        \
    std::optional<ErrorInfo> null_info = Call(api->name, nullptr);                            \
    EXPECT_EQ(null_info->code, PJRT_Error_Code_UNIMPLEMENTED) << #name;                       \
  }
#include "tools/api_coverage/pjrt_api_slots.inc"
  EXPECT_EQ(unimplemented, static_cast<int>(UnimplementedSlots().size()));
}

TEST(ApiTableTest, EveryImplementedSlotRejectsNullArgs) {
  const PJRT_Api* api = Api();
  int checked = 0;
#define PJRT_API_SLOT(name)                                                   \
  if (UnimplementedSlots().count(#name) == 0 && !IsErrorSlot(#name)) {        \
    ++checked;                                                                \
    std::optional<ErrorInfo> info = Call(api->name, nullptr);                 \
    ASSERT_TRUE(info.has_value()) << #name;                                   \
    EXPECT_EQ(info->code, PJRT_Error_Code_INVALID_ARGUMENT) << #name;         \
    EXPECT_EQ(info->message, std::string(#name) + ": args is null") << #name; \
  }
#include "tools/api_coverage/pjrt_api_slots.inc"
  EXPECT_EQ(checked, 118 - 9 - 3);
}

TEST(ApiTableTest, EveryImplementedSlotRejectsStructSizeZero) {
  const PJRT_Api* api = Api();
#define PJRT_API_SLOT(name)                                                                  \
  if (UnimplementedSlots().count(#name) == 0 && !IsErrorSlot(#name)) {                       \
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
