// Fixtures and helpers shared by the conformance cases.
#ifndef PJRTKIT_TESTS_CONFORMANCE_TEST_BASE_H_
#define PJRTKIT_TESTS_CONFORMANCE_TEST_BASE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance.h"
#include "tests/conformance/handles.h"
#include "tests/conformance/plugin.h"
#include "tests/conformance/status.h"
#include "tests/conformance/test_data.h"
#include "xla/pjrt/c/pjrt_c_api.h"

// Skips the case when the plugin's PJRT_Api has no `slot` (NULL, or past its struct_size).
#define PJRT_REQUIRE_SLOT(slot)                                                   \
  do {                                                                            \
    if (offsetof(PJRT_Api, slot) + sizeof(void*) > api()->struct_size ||          \
        api()->slot == nullptr) {                                                 \
      GTEST_SKIP() << #slot " is not provided by this plugin (NULL or past "      \
                      "PJRT_Api.struct_size)";                                    \
    }                                                                             \
  } while (0)

// Skips with `explanation` when the run declared deviation `name` and `observed` holds;
// otherwise does nothing (the case goes on to assert the contract).
#define PJRT_SKIP_IF_KNOWN_DEVIATION(name, observed, explanation)              \
  do {                                                                         \
    if ((observed) && Tolerates(name)) {                                       \
      GTEST_SKIP() << "known deviation '" << name << "': " << explanation;     \
    }                                                                          \
  } while (0)

// For a case that needs a compiled program: on a device that declares no compiler
// (PluginTraits::compiler false, --no_compiler) checks that PJRT_Client_Compile answers
// UNIMPLEMENTED (any other answer fails the case), then skips naming the capability; otherwise
// does nothing. Usable in a fixture's SetUp and in a case (ClientTestBase only).
#define PJRT_REQUIRE_COMPILER()                                                    \
  do {                                                                             \
    if (!traits().compiler) {                                                      \
      ExpectCompileUnimplemented();                                                \
      if (HasFailure()) return;                                                    \
      GTEST_SKIP() << "the device declares no compiler yet (PluginTraits::compiler " \
                      "= false, --no_compiler), and this case needs a compiled "   \
                      "program; PJRT_Client_Compile answered UNIMPLEMENTED";       \
    }                                                                              \
  } while (0)

// For a case about 4- and 2-bit element types: skips, naming the capability, on a device that
// declares it has none (PluginTraits::sub_byte_types false, --no_sub_byte_types).
#define PJRT_REQUIRE_SUB_BYTE_TYPES()                                              \
  do {                                                                             \
    if (!traits().sub_byte_types) {                                                \
      GTEST_SKIP() << "the device declares no sub-byte element types "            \
                      "(PluginTraits::sub_byte_types = false, --no_sub_byte_types)"; \
    }                                                                              \
  } while (0)

namespace pjrt_conformance {

// Bytes per element of `type` for the types the suite uses (0 for others).
size_t ElementSize(PJRT_Buffer_Type type);

// Product of `dims` (1 for a scalar).
int64_t ElementCount(const std::vector<int64_t>& dims);

// A std::string from a (pointer, size) pair the plugin returned; NULL gives "".
std::string Str(const char* data, size_t size);

// Checks an attribute-style array: names non-empty and unique, known types, sane sizes.
// `what` names the array in failure messages.
void ExpectWellFormedNamedValues(const PJRT_NamedValue* values, size_t count,
                                 const std::string& what);

// The entry named `name` in `values`, or NULL.
const PJRT_NamedValue* FindNamedValue(const PJRT_NamedValue* values, size_t count,
                                      const std::string& name);

// Records `key`=`value` in the test's XML properties and prints it as a REPORT line.
void Report(const std::string& key, const std::string& value);

// Base for cases that need only the API table (plugin initialized, no client).
class ApiTestBase : public ::testing::Test {
 protected:
  void SetUp() override;

  // The plugin's API table.
  const PJRT_Api* api() const { return plugin_->api; }
  // The expectations the run was given.
  const PluginTraits& traits() const { return plugin_->traits; }
  // The registered options.
  const std::vector<NamedOption>& options() const { return plugin_->options; }
  // `wanted` bytes, or a quarter of the declared device memory when that is less
  // (PluginTraits::device_memory_bytes): the size of a case's largest buffer.
  int64_t BufferBytes(int64_t wanted) const {
    const int64_t declared = plugin_->traits.device_memory_bytes;
    return declared < 0 || wanted <= declared / 4 ? wanted : declared / 4;
  }
  // True when the run declared deviation `name` (PluginTraits::known_deviations).
  bool Tolerates(const std::string& name) const {
    return plugin_->traits.known_deviations.count(name) > 0;
  }

 private:
  const Plugin* plugin_ = nullptr;  // Registered plugin (set by SetUp).
};

// Base for cases that use the shared client.
class ClientTestBase : public ApiTestBase {
 protected:
  void SetUp() override;

  // The shared client, or the case's own client after UseClient.
  PJRT_Client* client() const { return client_; }
  // Points client() and every helper below at `client` (a case's own client, not owned), or
  // back at the shared client when `client` is NULL.
  void UseClient(PJRT_Client* client);

  // ---- Devices and memories (a failing query adds a test failure and returns empty) ----
  // PJRT_Client_Devices.
  std::vector<PJRT_Device*> Devices();
  // PJRT_Client_AddressableDevices.
  std::vector<PJRT_Device*> AddressableDevices();
  // PJRT_Device_GetDescription.
  PJRT_DeviceDescription* Description(PJRT_Device* device);
  // PJRT_DeviceDescription_Id of the device (-1 on error).
  int DeviceId(PJRT_Device* device);
  // PJRT_Device_DefaultMemory.
  PJRT_Memory* DefaultMemory(PJRT_Device* device);
  // PJRT_Device_AddressableMemories.
  std::vector<PJRT_Memory*> DeviceMemories(PJRT_Device* device);
  // First addressable device (every case needs one).
  PJRT_Device* FirstDevice();

  // ---- Events ----
  // PJRT_Event_Await: the event's own status.
  Status Await(PJRT_Event* event);
  // PJRT_Event_IsReady (false on error, which also fails the test).
  bool IsReady(PJRT_Event* event);

  // ---- Buffers ----
  // Copies `data` to `device` (or `memory` when `device` is NULL). When `done` is given it
  // receives the done-with-host-buffer event (may be empty); otherwise that event is awaited.
  Status FromHost(const void* data, PJRT_Buffer_Type type, const std::vector<int64_t>& dims,
                  PJRT_Device* device, BufferPtr* out,
                  PJRT_HostBufferSemantics semantics =
                      PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                  EventPtr* done = nullptr, PJRT_Memory* memory = nullptr);
  // Copies a buffer to host (dense, major-to-minor), sizing the destination by a size query.
  Status ToHost(PJRT_Buffer* buffer, std::vector<char>* bytes);
  // Awaits the buffer's ready event.
  Status AwaitReady(PJRT_Buffer* buffer);
  // PJRT_Buffer_Device, PJRT_Buffer_Memory, PJRT_Buffer_IsDeleted.
  Status BufferDevice(PJRT_Buffer* buffer, PJRT_Device** device);
  Status BufferMemory(PJRT_Buffer* buffer, PJRT_Memory** memory);
  Status IsDeleted(PJRT_Buffer* buffer, bool* deleted);

  // Typed conveniences over FromHost/ToHost.
  template <typename T>
  Status FromVector(const std::vector<T>& values, PJRT_Buffer_Type type,
                    const std::vector<int64_t>& dims, PJRT_Device* device, BufferPtr* out) {
    return FromHost(values.data(), type, dims, device, out);
  }
  template <typename T>
  Status ReadVector(PJRT_Buffer* buffer, std::vector<T>* values) {
    std::vector<char> bytes;
    Status status = ToHost(buffer, &bytes);
    if (!status.ok()) return status;
    values->resize(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(values->data(), bytes.data(), bytes.size());
    return status;
  }

  // ---- Compile and execute ----
  // PJRT_Client_Compile of `code` in `format` with serialized CompileOptionsProto bytes.
  Status Compile(const std::string& code, const std::string& format,
                 const std::string& compile_options, LoadedExecutablePtr* out);
  // Compiles MLIR text with the 1x1 (or given) compile options.
  Status CompileMlir(const std::string& text, LoadedExecutablePtr* out,
                     const std::string& compile_options = CompileOptions1x1());
  // Adds a test failure unless compiling kAddOneF32 answers UNIMPLEMENTED (PJRT_REQUIRE_COMPILER
  // on a device that declares no compiler).
  void ExpectCompileUnimplemented();
  // PJRT_LoadedExecutable_GetExecutable.
  Status GetExecutable(PJRT_LoadedExecutable* loaded, ExecutablePtr* out);
  // PJRT_Executable_NumOutputs of the loaded executable.
  Status NumOutputs(PJRT_LoadedExecutable* loaded, size_t* num_outputs);
  // Runs `loaded` with args[device][arg]; fills outputs[device][output]. When `events` is
  // given it receives one completion event per device list. `execute_device` is passed
  // through (NULL: the compiled device assignment).
  Status Execute(PJRT_LoadedExecutable* loaded,
                 const std::vector<std::vector<PJRT_Buffer*>>& args,
                 std::vector<std::vector<BufferPtr>>* outputs,
                 std::vector<EventPtr>* events = nullptr,
                 PJRT_Device* execute_device = nullptr);

 private:
  PJRT_Client* client_ = nullptr;  // The client in use (the shared one is owned by plugin.cc).
};

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_TEST_BASE_H_
