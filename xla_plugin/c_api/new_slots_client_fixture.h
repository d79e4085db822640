// The fixture of the PJRT C API 0.82-0.117 client, device and executable slot tests
// (new_slots_client_test, new_slots_device_test, new_slots_executable_test): a fake client with
// helpers for topologies, compiled executables and older callers' structs (Sentinel bytes past
// their end, which must stay untouched).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_CLIENT_FIXTURE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_CLIENT_FIXTURE_H_

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {

// An Args struct filled with the byte 0xAB, then given `struct_size`: the bytes past an older
// caller's struct must still be 0xAB after the call.
template <typename Args>
inline Args Sentinel(size_t struct_size) {
  Args args;
  std::memset(&args, 0xAB, sizeof(args));
  args.struct_size = struct_size;
  args.extension_start = nullptr;
  return args;
}

// True when every byte of `args` from `from` to its end is still 0xAB.
template <typename Args>
inline bool UntouchedFrom(const Args& args, size_t from) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&args);
  for (size_t i = from; i < sizeof(Args); ++i) {
    if (bytes[i] != 0xAB) return false;
  }
  return true;
}

// A PJRT_Program for `code` in format "mlir" (the strings must outlive it).
inline PJRT_Program MlirProgram(const std::string& code) {
  auto program = MakeArgs<PJRT_Program>();
  program.code = const_cast<char*>(code.data());
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  return program;
}

class NewClientSlotsTest : public ClientTest {
 protected:
  // PJRT_TopologyDescription_Create with device_count `count` (caller destroys).
  PJRT_TopologyDescription* CreateTopology(int64_t count) {
    PJRT_NamedValue option = IntOption("device_count", count);
    auto args = MakeArgs<PJRT_TopologyDescription_Create_Args>();
    args.create_options = &option;
    args.num_options = 1;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Create(&args));
    return args.topology;
  }
  void DestroyTopology(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Destroy_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Destroy(&args));
  }
  // The client's own topology.
  PJRT_TopologyDescription* ClientTopology() {
    auto args = MakeArgs<PJRT_Client_TopologyDescription_Args>();
    args.client = client_;
    EXPECT_PJRT_OK(api_->PJRT_Client_TopologyDescription(&args));
    return args.topology;
  }
  std::string SerializeTopology(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Serialize_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Serialize(&args));
    std::string bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_topology_deleter(args.serialized_topology);
    return bytes;
  }
  uint64_t Fingerprint(PJRT_TopologyDescription* topology) {
    auto args = MakeArgs<PJRT_TopologyDescription_Fingerprint_Args>();
    args.topology = topology;
    EXPECT_PJRT_OK(api_->PJRT_TopologyDescription_Fingerprint(&args));
    return args.fingerprint;
  }
  // PJRT_Compile of `code` with `options` for `topology`; nullptr on error.
  PJRT_Executable* CompileFor(PJRT_TopologyDescription* topology, const std::string& code,
                              const std::string& options = "") {
    PJRT_Program program = MlirProgram(code);
    auto args = MakeArgs<PJRT_Compile_Args>();
    args.topology = topology;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    ErrorInfo info = Consume(api_->PJRT_Compile(&args));
    EXPECT_TRUE(info.ok) << info.message;
    return info.ok ? args.executable : nullptr;
  }
  // PJRT_Client_Load of `executable` on `client` with `options` (nullptr and `info` on error).
  PJRT_LoadedExecutable* Load(PJRT_Client* client, PJRT_Executable* executable,
                              const std::string& options = "", ErrorInfo* info = nullptr) {
    auto args = MakeArgs<PJRT_Client_Load_Args>();
    args.client = client;
    args.executable = executable;
    args.compile_options = options.empty() ? nullptr : options.data();
    args.compile_options_size = options.size();
    ErrorInfo result = Consume(api_->PJRT_Client_Load(&args));
    if (info != nullptr) *info = result;
    EXPECT_EQ(result.ok, args.loaded_executable != nullptr);
    return result.ok ? args.loaded_executable : nullptr;
  }
  std::string ExecutableName(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_Name_Args>();
    args.executable = executable;
    EXPECT_PJRT_OK(api_->PJRT_Executable_Name(&args));
    return Str(args.executable_name, args.executable_name_size);
  }
  // PJRT_Executable_GetCompileOptions of `executable` (or "error: <message>").
  std::string CompileOptions(PJRT_Executable* executable) {
    auto args = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
    args.executable = executable;
    ErrorInfo info = Consume(api_->PJRT_Executable_GetCompileOptions(&args));
    if (!info.ok) return "error: " + info.message;
    EXPECT_NE(args.serialized_compile_options, nullptr);
    EXPECT_NE(args.serialized_compile_options_deleter, nullptr);
    std::string bytes = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_compile_options_deleter(args.serialized_compile_options);
    return bytes;
  }
  // Runs `loaded` on `device` with one f32 argument of `values` and `dims`; returns the output.
  std::vector<float> RunIdentity(PJRT_LoadedExecutable* loaded, PJRT_Device* device,
                                 const std::vector<float>& values,
                                 const std::vector<int64_t>& dims, int launch_id = 0) {
    PJRT_Buffer* input = MakeF32Buffer(client_, device, values, dims);
    PJRT_Buffer* list[] = {input};
    PJRT_Buffer* const* lists[] = {list};
    PJRT_Buffer* out[1] = {nullptr};
    PJRT_Buffer** outputs[] = {out};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    options.launch_id = launch_id;
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = outputs;
    args.execute_device = nullptr;
    EXPECT_PJRT_OK(api_->PJRT_LoadedExecutable_Execute(&args));
    std::vector<float> result;
    if (out[0] != nullptr) {
      result = ToHostF32(out[0]);
      DestroyBuffer(out[0]);
    }
    DestroyBuffer(input);
    return result;
  }
  testing::FakeDevice* FakeDevice(int i) {
    return static_cast<testing::FakeDevice*>(devices_[i]->device);
  }
};

}  // namespace test
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_CLIENT_FIXTURE_H_
