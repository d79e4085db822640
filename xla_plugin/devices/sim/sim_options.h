// SimOptions: the create options of the sim device (PJRT_Client_Create and
// PJRT_TopologyDescription_Create).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/options.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// Option names.
inline constexpr char kDeviceCountOption[] = "device_count";
inline constexpr char kMemoryMibOption[] = "memory_mib";
inline constexpr char kStablehloLibraryPathOption[] = "stablehlo_library_path";

// Limits and defaults.
inline constexpr int64_t kMinDeviceCount = 1;
inline constexpr int64_t kMaxDeviceCount = 64;
inline constexpr int64_t kDefaultDeviceCount = 4;
inline constexpr int64_t kMinMemoryMib = 1;
// 2^27 MiB = 128 TiB, the user address space of x86-64 Linux: each device reserves its memory
// as address space up front.
inline constexpr int64_t kMaxMemoryMib = int64_t{1} << 27;
inline constexpr int64_t kDefaultMemoryMib = 2048;

// The parsed and checked create options:
//   device_count (int64, default 4, 1..64): number of devices.
//   memory_mib (int64, default 2048, 1..134217728): MiB of memory per device, reserved as address
//       space at client creation (pages are committed only when used).
//   stablehlo_library_path (string, default ""): where torch-mlir's libTorchMLIRAggregateCAPI.so
//       is, for the compiler's StableHLO reader ("": the compiler looks for it itself).
// JAX's string form of create options ("device_count:2") is accepted for the int64 ones.
class SimOptions {
 public:
  // The defaults.
  SimOptions() = default;

  // The accepted options (names, types, defaults, one-line descriptions).
  static std::vector<OptionSpec> Specs();
  // Parses and checks `options`: an unknown name or a value of the wrong type is INVALID_ARGUMENT
  // listing the accepted options; a value out of range is INVALID_ARGUMENT naming the option and
  // the accepted values.
  static StatusOr<SimOptions> Parse(const AttributeMap& options);

  // Number of devices.
  int device_count() const { return device_count_; }
  // MiB of memory per device.
  int64_t memory_mib() const { return memory_mib_; }
  // Bytes of memory per device (memory_mib * 2^20).
  int64_t memory_bytes() const { return memory_mib_ << 20; }
  // Path of the StableHLO library; empty when not given.
  const std::string& stablehlo_library_path() const { return stablehlo_library_path_; }
  // The device kind (PJRT_DeviceDescription_Kind) and "backend" attribute the devices report:
  // "pjrtkit_sim" and "sim", or a device made from the sim device's (tools/new_device.py
  // --from sim) names its own. Not create options: set by a factory.
  const std::string& device_kind() const { return device_kind_; }
  const std::string& backend_name() const { return backend_name_; }
  // These options with `kind` and `backend` as the device kind and backend name.
  SimOptions WithDeviceModel(std::string kind, std::string backend) const;
  // Whether the client and topology compile programs (true), or answer every compile and
  // executable load UNIMPLEMENTED, as a device whose compiler is not ready yet does (a test
  // device of the conformance suite's --no_compiler; not a create option: set by a factory).
  bool compiler() const { return compiler_; }
  // These options without a compiler.
  SimOptions WithoutCompiler() const;

 private:
  int device_count_ = static_cast<int>(kDefaultDeviceCount);  // device_count.
  int64_t memory_mib_ = kDefaultMemoryMib;                    // memory_mib.
  std::string stablehlo_library_path_;                        // stablehlo_library_path.
  std::string device_kind_ = "pjrtkit_sim";                   // See device_kind().
  std::string backend_name_ = "sim";                          // See backend_name().
  bool compiler_ = true;                                      // See compiler().
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_OPTIONS_H_
