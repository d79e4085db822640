#include "xla_plugin/devices/sim/sim_options.h"

namespace pjrtkit {
namespace sim {
namespace {

// INVALID_ARGUMENT "create option '<name>' of the sim device must be in [<min>, <max>]<unit>,
// got <value>" when `value` is outside [min, max].
Status CheckRange(const char* name, int64_t value, int64_t min, int64_t max, const char* unit) {
  if (value >= min && value <= max) return OkStatus();
  return InvalidArgument("create option '" + std::string(name) +
                         "' of the sim device must be in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]" + unit + ", got " + std::to_string(value));
}

}  // namespace

std::vector<OptionSpec> SimOptions::Specs() {
  return {
      {kDeviceCountOption, AttributeValue(kDefaultDeviceCount),
       "number of sim devices, 1..64 (default 4)"},
      {kMemoryMibOption, AttributeValue(kDefaultMemoryMib),
       "MiB of memory per sim device, reserved as address space at client creation, "
       "1..134217728 (default 2048)"},
      {kStablehloLibraryPathOption, AttributeValue(std::string()),
       "path of torch-mlir's libTorchMLIRAggregateCAPI.so, the StableHLO reader of the sim "
       "device's compiler (default: found by the compiler)"},
  };
}

StatusOr<SimOptions> SimOptions::Parse(const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, Options::Parse(options, Specs()));
  SimOptions out;
  const int64_t device_count = parsed.GetInt(kDeviceCountOption);
  PJRTKIT_RETURN_IF_ERROR(
      CheckRange(kDeviceCountOption, device_count, kMinDeviceCount, kMaxDeviceCount, ""));
  const int64_t memory_mib = parsed.GetInt(kMemoryMibOption);
  PJRTKIT_RETURN_IF_ERROR(
      CheckRange(kMemoryMibOption, memory_mib, kMinMemoryMib, kMaxMemoryMib, " (MiB per device)"));
  out.device_count_ = static_cast<int>(device_count);
  out.memory_mib_ = memory_mib;
  out.stablehlo_library_path_ = parsed.GetString(kStablehloLibraryPathOption);
  return out;
}

SimOptions SimOptions::WithDeviceModel(std::string kind, std::string backend) const {
  SimOptions copy = *this;
  copy.device_kind_ = std::move(kind);
  copy.backend_name_ = std::move(backend);
  return copy;
}

SimOptions SimOptions::WithoutCompiler() const {
  SimOptions copy = *this;
  copy.compiler_ = false;
  return copy;
}

}  // namespace sim
}  // namespace pjrtkit
