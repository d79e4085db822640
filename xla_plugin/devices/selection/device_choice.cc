#include "xla_plugin/devices/selection/device_choice.h"

#include <dirent.h>
#include <stdlib.h>

#include <set>

#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"

namespace pjrtkit {
namespace selection {
namespace {

// The names of `specs`.
std::set<std::string> Names(const std::vector<OptionSpec>& specs) {
  std::set<std::string> names;
  for (const OptionSpec& spec : specs) names.insert(spec.name);
  return names;
}

// Reads a device name ("xla_cpu", "xla_gpu", "auto" or "") from `value`, given by `source`.
// Sets `*kind` unless it is "auto" or ""; returns whether it did.
StatusOr<bool> ReadDeviceName(const std::string& value, const std::string& source,
                              DeviceKind* kind) {
  if (value.empty() || value == "auto") return false;
  if (value == "xla_cpu") {
    *kind = DeviceKind::kXlaCpu;
    return true;
  }
  if (value == "xla_gpu") {
    *kind = DeviceKind::kXlaGpu;
    return true;
  }
  return InvalidArgument(source + " must be 'xla_cpu', 'xla_gpu' or 'auto', got '" + value + "'");
}

}  // namespace

const char* DeviceChoice::Name(DeviceKind kind) {
  return kind == DeviceKind::kXlaGpu ? "xla_gpu" : "xla_cpu";
}

OptionSpec DeviceChoice::DeviceOptionSpec() {
  return {kDeviceOption, AttributeValue(std::string("auto")),
          "which device: xla_cpu, xla_gpu or auto (default: $PJRTKIT_DEVICE, else xla_gpu when "
          "an NVIDIA GPU and the CUDA plugin are there, else xla_cpu)"};
}

StatusOr<DeviceKind> DeviceChoice::Choose(const AttributeMap& options, const MachineFacts& facts) {
  DeviceKind kind = DeviceKind::kXlaCpu;
  bool chosen = false;
  auto it = options.find(kDeviceOption);
  if (it != options.end()) {
    if (!std::holds_alternative<std::string>(it->second)) {
      return InvalidArgument("create option 'device' must be string, got " +
                             std::string(AttributeTypeName(it->second)));
    }
    PJRTKIT_ASSIGN_OR_RETURN(chosen, ReadDeviceName(std::get<std::string>(it->second),
                                                    "create option 'device'", &kind));
  }
  // Options only one device accepts.
  const std::set<std::string> cpu = Names(xla_cpu::XlaCpuFactory::OptionSpecs());
  const std::set<std::string> gpu = Names(xla_gpu::XlaGpuFactory::OptionSpecs());
  std::string cpu_only, gpu_only;
  for (const auto& [name, value] : options) {
    if (cpu.count(name) > 0 && gpu.count(name) == 0 && cpu_only.empty()) cpu_only = name;
    if (gpu.count(name) > 0 && cpu.count(name) == 0 && gpu_only.empty()) gpu_only = name;
  }
  if (chosen) {
    const std::string& other = kind == DeviceKind::kXlaCpu ? gpu_only : cpu_only;
    if (!other.empty()) {
      return InvalidArgument("create option '" + other + "' belongs to the " +
                             Name(kind == DeviceKind::kXlaCpu ? DeviceKind::kXlaGpu
                                                              : DeviceKind::kXlaCpu) +
                             " device, but option 'device' is '" + Name(kind) + "'");
    }
    return kind;
  }
  if (!cpu_only.empty() && !gpu_only.empty()) {
    return InvalidArgument("create options '" + cpu_only + "' (xla_cpu device) and '" + gpu_only +
                           "' (xla_gpu device) select different devices; pass one device's "
                           "options, or choose with option 'device'");
  }
  if (!cpu_only.empty()) return DeviceKind::kXlaCpu;
  if (!gpu_only.empty()) return DeviceKind::kXlaGpu;
  PJRTKIT_ASSIGN_OR_RETURN(
      chosen, ReadDeviceName(facts.device_env, "environment variable " + std::string(kDeviceEnv),
                             &kind));
  if (chosen) return kind;
  return facts.nvidia_gpu && facts.gpu_plugin ? DeviceKind::kXlaGpu : DeviceKind::kXlaCpu;
}

bool DeviceChoice::NvidiaGpuVisible() {
  const char* visible = getenv("CUDA_VISIBLE_DEVICES");
  if (visible != nullptr && (visible[0] == '\0' || std::string(visible) == "-1")) return false;
  DIR* gpus = opendir("/proc/driver/nvidia/gpus");
  if (gpus == nullptr) return false;
  bool any = false;
  while (dirent* entry = readdir(gpus)) any = any || entry->d_name[0] != '.';
  closedir(gpus);
  return any;
}

MachineFacts DeviceChoice::FromProcess() {
  MachineFacts facts;
  const char* env = getenv(kDeviceEnv);
  facts.device_env = env != nullptr ? env : "";
  facts.nvidia_gpu = NvidiaGpuVisible();
  facts.gpu_plugin =
      facts.nvidia_gpu &&
      inner::PluginLocator::LocateFromProcess(xla_gpu::XlaGpuFactory::PluginSearch()).ok();
  return facts;
}

}  // namespace selection
}  // namespace pjrtkit
