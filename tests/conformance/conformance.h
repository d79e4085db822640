// The way into the PJRT C-API conformance suite.
//
// A plugin's own cc_test links //tests/conformance:suite and, before RUN_ALL_TESTS
// (in main, or from a static initializer with gtest_main), calls
//
//   pjrt_conformance::RegisterPlugin(GetPjrtApi(), {NamedOption::Int("device_count", 4)},
//                                    traits);
//
// The runner (//tests/conformance:runner) does the same for any plugin .so given on its
// command line.
#ifndef PJRTKIT_TESTS_CONFORMANCE_CONFORMANCE_H_
#define PJRTKIT_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {

// One PJRT_Client_Create option.
struct NamedOption {
  std::string name;                    // Option name as the plugin spells it.
  PJRT_NamedValue_Type type = PJRT_NamedValue_kString;  // Which value field is used.
  std::string string_value;            // kString.
  int64_t int64_value = 0;             // kInt64.
  std::vector<int64_t> int64_list;     // kInt64List.
  float float_value = 0;               // kFloat.
  bool bool_value = false;             // kBool.

  // Builders for each value type.
  static NamedOption Int(std::string name, int64_t value);
  static NamedOption Str(std::string name, std::string value);
  static NamedOption Bool(std::string name, bool value);
  static NamedOption Float(std::string name, float value);
  static NamedOption IntList(std::string name, std::vector<int64_t> value);
};

// Facts the run expects of the plugin; an unset field is checked only for sanity.
struct PluginTraits {
  std::string platform_name;          // PJRT_Client_PlatformName; "" = any non-empty name.
  int device_count = -1;              // PJRT_Client_Devices; -1 = any positive count.
  int addressable_device_count = -1;  // -1 = same as device_count (single process).
  int process_index = 0;              // PJRT_Client_ProcessIndex.
  std::string device_kind;            // PJRT_DeviceDescription_Kind; "" = any non-empty.
  int api_minor_version = -1;         // PJRT_Api_Version.minor_version; -1 = any.
  bool require_all_api_slots = false;  // Every PJRT_Api slot must be non-NULL.
  // Named departures from the C API contract that the run accepts; a case that observes a
  // listed one skips with its explanation instead of failing (README lists the names).
  std::set<std::string> known_deviations;

  // Declared capabilities: what the device can do yet. A case that needs a capability the
  // device declares it lacks skips, naming the capability (never silently).
  // PJRT_Client_Compile makes executables. false ("no compiler yet", the first state of a
  // device with its own runtime): every case that needs a compiled program first checks that
  // PJRT_Client_Compile answers UNIMPLEMENTED (anything else fails the case), then skips.
  bool compiler = true;
  // Buffers of the 4- and 2-bit element types (S4, U4, S2, U2, F4E2M1FN).
  bool sub_byte_types = true;
  // Bytes of memory per device the suite may use; -1 = as much as it needs (64 MiB on one device
  // at a time). A declared amount (at least kMinDeviceMemoryBytes) caps each case's largest
  // buffer at a quarter of it (README, "Memory the suite needs").
  int64_t device_memory_bytes = -1;
};

// The least device memory (per device) a run may declare: 4 MiB.
inline constexpr int64_t kMinDeviceMemoryBytes = int64_t{4} << 20;

// Registers the plugin the suite runs against. Call once, before RUN_ALL_TESTS. The suite
// calls PJRT_Plugin_Initialize and creates one shared client lazily with `create_options`;
// the client is destroyed after the last test.
void RegisterPlugin(const PJRT_Api* api, std::vector<NamedOption> create_options,
                    PluginTraits traits);

// Parses "name=int:4", "name=str:text", "name=bool:true", "name=float:1.5" or
// "name=ints:1,2,3" into `out`. Returns false (and an explanation in `error`) when
// malformed.
bool ParseNamedOption(const std::string& spec, NamedOption* out, std::string* error);

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_CONFORMANCE_H_
