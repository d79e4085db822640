// Helpers for the C-API tests: every call goes through the PJRT_Api function pointers of
// CreatePjrtApi<FakeFactory>(); these helpers only shorten the Args boilerplate.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TEST_UTIL_H_

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_client.h"

namespace pjrtkit {
namespace capi {
namespace test {

// The table under test: CreatePjrtApi<testing::FakeFactory>().
const PJRT_Api* Api();

// What a returned PJRT_Error* said; Consume() reads and destroys the error.
struct ErrorInfo {
  bool ok = true;                             // The call returned nullptr.
  PJRT_Error_Code code = PJRT_Error_Code_OK;  // Its code.
  std::string message;                        // Its message.
};

// Reads `error` through PJRT_Error_GetCode / PJRT_Error_Message and destroys it.
ErrorInfo Consume(PJRT_Error* error, const PJRT_Api* api = Api());

// A zero-filled Args struct with struct_size = `size` (default: the full size).
template <typename Args>
Args MakeArgs(size_t size = sizeof(Args)) {
  Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = size;
  return args;
}

// Creates a client through PJRT_Client_Create with `options`; fails the test on error.
PJRT_Client* CreateClient(const std::vector<PJRT_NamedValue>& options = {});
// Destroys `client` through PJRT_Client_Destroy.
void DestroyClient(PJRT_Client* client);

// PJRT_NamedValue builders (the strings / lists must outlive the value).
PJRT_NamedValue IntOption(const char* name, int64_t value);
PJRT_NamedValue StringOption(const char* name, const std::string& value);
PJRT_NamedValue BoolOption(const char* name, bool value);
PJRT_NamedValue FloatOption(const char* name, float value);
PJRT_NamedValue ListOption(const char* name, const std::vector<int64_t>& value);

// PJRT_Client_AddressableDevices / PJRT_Client_Devices / PJRT_Client_AddressableMemories.
std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client);
std::vector<PJRT_Device*> AllDevices(PJRT_Client* client);
std::vector<PJRT_Memory*> AddressableMemories(PJRT_Client* client);

// An f32 buffer with `values` and `dims` on `device` (kImmutableOnlyDuringCall); the
// done_with_host_buffer event is awaited and destroyed.
PJRT_Buffer* MakeF32Buffer(PJRT_Client* client, PJRT_Device* device,
                           const std::vector<float>& values, const std::vector<int64_t>& dims);
// Reads an f32 buffer back (size query, then copy, then await).
std::vector<float> ToHostF32(PJRT_Buffer* buffer);
// PJRT_Buffer_Destroy.
void DestroyBuffer(PJRT_Buffer* buffer);
// PJRT_Buffer_IsDeleted.
bool IsDeleted(PJRT_Buffer* buffer);

// PJRT_Client_Compile of `code` in format "mlir" with `options`; fails the test on error.
PJRT_LoadedExecutable* Compile(PJRT_Client* client, const std::string& code,
                               const std::string& options = "");
// PJRT_LoadedExecutable_Destroy.
void DestroyLoaded(PJRT_LoadedExecutable* executable);
// PJRT_LoadedExecutable_GetExecutable.
PJRT_Executable* GetExecutable(PJRT_LoadedExecutable* loaded);
// PJRT_Executable_Destroy.
void DestroyExecutable(PJRT_Executable* executable);

// PJRT_Event_Await then PJRT_Event_Destroy; returns the await result.
ErrorInfo AwaitAndDestroy(PJRT_Event* event);

// The fake C++ client behind `client` (for the fake's test hooks).
testing::FakeClient* Fake(PJRT_Client* client);

// A string out of a (pointer, size) pair.
inline std::string Str(const char* data, size_t size) { return std::string(data, size); }

// The text of the struct_size refusal of `fn` for `got` bytes when `want` are needed.
std::string ShortStruct(const std::string& fn, size_t got, size_t want);

// Payload visitor (PJRT_Error's for_each_payload): appends "key=value;" to the std::string at
// `user_arg`.
void AppendPayload(const char* key, size_t key_size, const char* value, size_t value_size,
                   void* user_arg);

// A tiled layout with `minor_to_major` (which must outlive it) and no tiles.
PJRT_Buffer_MemoryLayout TiledLayout(const std::vector<int64_t>& minor_to_major);

// A fixture with a default fake client (2 addressable devices).
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const PJRT_Api* api_ = nullptr;      // The table.
  PJRT_Client* client_ = nullptr;      // The client.
  std::vector<PJRT_Device*> devices_;  // Its addressable devices.
};

}  // namespace test
}  // namespace capi
}  // namespace pjrtkit

// EXPECT/ASSERT that a PJRT call returned no error (printing the error otherwise).
#define EXPECT_PJRT_OK(expr)                                                            \
  do {                                                                                  \
    ::pjrtkit::capi::test::ErrorInfo pjrt_info_ = ::pjrtkit::capi::test::Consume(expr); \
    EXPECT_TRUE(pjrt_info_.ok) << #expr << ": " << pjrt_info_.message;                  \
  } while (0)
#define ASSERT_PJRT_OK(expr)                                                            \
  do {                                                                                  \
    ::pjrtkit::capi::test::ErrorInfo pjrt_info_ = ::pjrtkit::capi::test::Consume(expr); \
    ASSERT_TRUE(pjrt_info_.ok) << #expr << ": " << pjrt_info_.message;                  \
  } while (0)

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TEST_UTIL_H_
