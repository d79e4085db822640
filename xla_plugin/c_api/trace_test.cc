// PJRTKIT_TRACE: the table is untraced when the variable is unset, empty or 0; traced, every call
// is one exact line (the microseconds normalised to "Nus"), errors included; the summary's
// counts and times; handle ids given in order of first appearance and forgotten on destroy.

// C and POSIX.
#include <stdlib.h>
#include <unistd.h>

// C++ standard library.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/buffer.h"
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/error.h"
#include "xla_plugin/c_api/loaded_executable.h"
#include "xla_plugin/c_api/test_util.h"
#include "xla_plugin/c_api/trace/trace_sink.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// Each table is built once per Factory type, with PJRTKIT_TRACE as it is then.
struct UnsetFactory : testing::FakeFactory {};
struct EmptyFactory : testing::FakeFactory {};
struct ZeroFactory : testing::FakeFactory {};
struct TracedFactory : testing::FakeFactory {};

template <typename Factory>
const PJRT_Api* ApiWithTrace(const char* value) {
  if (value == nullptr) {
    unsetenv("PJRTKIT_TRACE");
  } else {
    setenv("PJRTKIT_TRACE", value, 1);
  }
  const PJRT_Api* api = CreatePjrtApi<Factory>();
  unsetenv("PJRTKIT_TRACE");
  return api;
}

template <typename Factory>
void ExpectUntraced(const PJRT_Api* api) {
  EXPECT_EQ(api->PJRT_Plugin_Initialize, &PluginInitialize<Factory>);
  EXPECT_EQ(api->PJRT_Client_Create, &ClientCreate<Factory>);
  EXPECT_EQ(api->PJRT_Client_Destroy, &ClientDestroy);
  EXPECT_EQ(api->PJRT_Error_Message, &ErrorMessage);
  EXPECT_EQ(api->PJRT_Buffer_Destroy, &BufferDestroy);
  EXPECT_EQ(api->PJRT_LoadedExecutable_Execute, &LoadedExecutableExecute);
  // The whole table is MakePjrtApi's.
  const PJRT_Api& untraced = FactoryApiTable<Factory>().untraced();
  EXPECT_EQ(api, FactoryApiTable<Factory>().api());
  EXPECT_EQ(std::memcmp(api, &untraced, sizeof(PJRT_Api)), 0);
  EXPECT_EQ(FactoryApiTable<Factory>().sink(), nullptr);
}

TEST(TraceTest, OffWhenUnsetEmptyOrZero) {
  ExpectUntraced<UnsetFactory>(ApiWithTrace<UnsetFactory>(nullptr));
  ExpectUntraced<EmptyFactory>(ApiWithTrace<EmptyFactory>(""));
  ExpectUntraced<ZeroFactory>(ApiWithTrace<ZeroFactory>("0"));
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  const std::regex micros(" [0-9]+\\.[0-9]us$");
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::regex_replace(line, micros, " Nus"));
  }
  return lines;
}

TEST(TraceTest, EveryCallIsOneExactLine) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/trace_test_" +
                           std::to_string(getpid()) + ".txt";
  unlink(path.c_str());
  const PJRT_Api* api = ApiWithTrace<TracedFactory>(path.c_str());
  EXPECT_NE(api->PJRT_Buffer_Destroy, &BufferDestroy);
  EXPECT_NE(api->PJRT_Error_Destroy, &ErrorDestroy);
  const PJRT_Api& untraced = FactoryApiTable<TracedFactory>().untraced();
  EXPECT_EQ(untraced.PJRT_Buffer_Destroy, &BufferDestroy);

  auto init = MakeArgs<PJRT_Plugin_Initialize_Args>();
  ASSERT_EQ(api->PJRT_Plugin_Initialize(&init), nullptr);

  std::vector<PJRT_NamedValue> options = {IntOption("device_count", 2)};
  auto create = MakeArgs<PJRT_Client_Create_Args>();
  create.create_options = options.data();
  create.num_options = options.size();
  ASSERT_EQ(api->PJRT_Client_Create(&create), nullptr);

  auto devices = MakeArgs<PJRT_Client_AddressableDevices_Args>();
  devices.client = create.client;
  ASSERT_EQ(api->PJRT_Client_AddressableDevices(&devices), nullptr);

  const float data[3] = {1, 2, 3};
  const int64_t dims[1] = {3};
  auto put = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
  put.client = create.client;
  put.data = data;
  put.type = PJRT_Buffer_Type_F32;
  put.dims = dims;
  put.num_dims = 1;
  put.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  put.device = devices.addressable_devices[1];
  ASSERT_EQ(api->PJRT_Client_BufferFromHostBuffer(&put), nullptr);
  auto done = MakeArgs<PJRT_Event_Destroy_Args>();
  done.event = put.done_with_host_buffer;
  ASSERT_EQ(api->PJRT_Event_Destroy(&done), nullptr);

  auto shape = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  shape.buffer = put.buffer;
  ASSERT_EQ(api->PJRT_Buffer_Dimensions(&shape), nullptr);

  // An error, read and destroyed through the traced table.
  auto bad = MakeArgs<PJRT_Buffer_Dimensions_Args>();
  PJRT_Error* error = api->PJRT_Buffer_Dimensions(&bad);
  ASSERT_NE(error, nullptr);
  auto code = MakeArgs<PJRT_Error_GetCode_Args>();
  code.error = error;
  ASSERT_EQ(api->PJRT_Error_GetCode(&code), nullptr);
  auto message = MakeArgs<PJRT_Error_Message_Args>();
  message.error = error;
  api->PJRT_Error_Message(&message);
  auto destroy_error = MakeArgs<PJRT_Error_Destroy_Args>();
  destroy_error.error = error;
  api->PJRT_Error_Destroy(&destroy_error);

  // An older caller's struct: members past its struct_size are not read.
  auto old_shape = MakeArgs<PJRT_Buffer_Dimensions_Args>(
      offsetof(PJRT_Buffer_Dimensions_Args, buffer));
  Consume(api->PJRT_Buffer_Dimensions(&old_shape), &untraced);

  auto read = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  read.src = put.buffer;
  ASSERT_EQ(api->PJRT_Buffer_ToHostBuffer(&read), nullptr);  // Size query.

  auto destroy_buffer = MakeArgs<PJRT_Buffer_Destroy_Args>();
  destroy_buffer.buffer = put.buffer;
  ASSERT_EQ(api->PJRT_Buffer_Destroy(&destroy_buffer), nullptr);
  // A buffer made after the first one's destruction gets the next id even at the same address.
  put.device = devices.addressable_devices[0];
  ASSERT_EQ(api->PJRT_Client_BufferFromHostBuffer(&put), nullptr);
  done.event = put.done_with_host_buffer;
  ASSERT_EQ(api->PJRT_Event_Destroy(&done), nullptr);
  destroy_buffer.buffer = put.buffer;
  ASSERT_EQ(api->PJRT_Buffer_Destroy(&destroy_buffer), nullptr);

  auto destroy_client = MakeArgs<PJRT_Client_Destroy_Args>();
  destroy_client.client = create.client;
  ASSERT_EQ(api->PJRT_Client_Destroy(&destroy_client), nullptr);
  ASSERT_NE(api->PJRT_Client_Destroy(nullptr), nullptr);  // Never read: args=null.

  const std::string null_buffer =
      "\"PJRT_Buffer_Dimensions: args->buffer is null\"";
  EXPECT_EQ(ReadLines(path), (std::vector<std::string>{
      "pjrtkit-trace PJRT_Plugin_Initialize = OK Nus",
      "pjrtkit-trace PJRT_Client_Create create_options=[device_count] -> client#1 = OK Nus",
      "pjrtkit-trace PJRT_Client_AddressableDevices client#1 -> "
      "addressable_devices=[device#1,device#2] = OK Nus",
      "pjrtkit-trace PJRT_Client_BufferFromHostBuffer client#1 type=F32 dims=[3] "
      "byte_strides=[] host_buffer_semantics=kImmutableOnlyDuringCall device#2 memory=null -> "
      "done_with_host_buffer=event#1 buffer#1 = OK Nus",
      "pjrtkit-trace PJRT_Event_Destroy event#1 = OK Nus",
      "pjrtkit-trace PJRT_Buffer_Dimensions buffer#1 -> dims=[3] = OK Nus",
      "pjrtkit-trace PJRT_Buffer_Dimensions buffer=null = INVALID_ARGUMENT error#1 " +
          null_buffer + " Nus",
      "pjrtkit-trace PJRT_Error_GetCode error#1 -> code=INVALID_ARGUMENT = OK Nus",
      "pjrtkit-trace PJRT_Error_Message error#1 -> message=" + null_buffer + " = void Nus",
      "pjrtkit-trace PJRT_Error_Destroy error#1 = void Nus",
      "pjrtkit-trace PJRT_Buffer_Dimensions = INVALID_ARGUMENT error#2 \"PJRT_Buffer_Dimensions: "
      "PJRT_Buffer_Dimensions_Args struct_size is 16, expected at least 40 (the caller was built "
      "against an incompatible pjrt_c_api.h)\" Nus",
      "pjrtkit-trace PJRT_Buffer_ToHostBuffer src=buffer#1 -> dst=null dst_size=12 event=null = OK Nus",
      "pjrtkit-trace PJRT_Buffer_Destroy buffer#1 = OK Nus",
      "pjrtkit-trace PJRT_Client_BufferFromHostBuffer client#1 type=F32 dims=[3] "
      "byte_strides=[] host_buffer_semantics=kImmutableOnlyDuringCall device#1 memory=null -> "
      "done_with_host_buffer=event#2 buffer#2 = OK Nus",
      "pjrtkit-trace PJRT_Event_Destroy event#2 = OK Nus",
      "pjrtkit-trace PJRT_Buffer_Destroy buffer#2 = OK Nus",
      "pjrtkit-trace PJRT_Client_Destroy client#1 = OK Nus",
      "pjrtkit-trace PJRT_Client_Destroy args=null = INVALID_ARGUMENT error#3 "
      "\"PJRT_Client_Destroy: args is null\" Nus",
  }));
  unlink(path.c_str());
}

TEST(TraceTest, SummaryCountsCallsErrorsAndTimes) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/trace_summary_" +
                           std::to_string(getpid()) + ".txt";
  unlink(path.c_str());
  {
    auto sink = trace::TraceSink::FromSetting(path.c_str(), {"PJRT_A", "PJRT_B", "PJRT_C"});
    ASSERT_NE(sink, nullptr);
    {
      auto lock = sink->lock();
      sink->WriteLocked(0, "PJRT_A one", false, 1.5);
      sink->WriteLocked(1, "PJRT_B one", true, 10.0);
      sink->WriteLocked(0, "PJRT_A two", false, 2.5);
    }
    EXPECT_EQ(sink->Summary(),
              "pjrtkit-trace summary: 3 calls, 1 errors, 14.0 us in 2 functions\n"
              "pjrtkit-trace summary PJRT_B calls=1 errors=1 total_us=10.0 mean_us=10.00\n"
              "pjrtkit-trace summary PJRT_A calls=2 errors=0 total_us=4.0 mean_us=2.00\n");
    sink->WriteSummary();
  }
  EXPECT_EQ(ReadLines(path), (std::vector<std::string>{
      "pjrtkit-trace PJRT_A one",
      "pjrtkit-trace PJRT_B one",
      "pjrtkit-trace PJRT_A two",
      "pjrtkit-trace summary: 3 calls, 1 errors, 14.0 us in 2 functions",
      "pjrtkit-trace summary PJRT_B calls=1 errors=1 total_us=10.0 mean_us=10.00",
      "pjrtkit-trace summary PJRT_A calls=2 errors=0 total_us=4.0 mean_us=2.00",
  }));
  unlink(path.c_str());
  EXPECT_EQ(trace::TraceSink::FromSetting(nullptr, {}), nullptr);
  EXPECT_EQ(trace::TraceSink::FromSetting("", {}), nullptr);
  EXPECT_EQ(trace::TraceSink::FromSetting("0", {}), nullptr);
  EXPECT_EQ(trace::TraceSink::FromSetting("/nonexistent-dir/trace.txt", {}), nullptr);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
