#include "xla_plugin/devices/xla_gpu/entry.h"

#include <dirent.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "xla_plugin/client/library_locator.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_policy.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_log_level.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

bool Available() {
  return NvidiaGpuVisible() &&
         LibraryLocator::LocateFromProcess(XlaGpuFactory::PluginSearch()).ok();
}

StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> LoadProcessPlugin() {
  PJRTKIT_ASSIGN_OR_RETURN(LocatedLibrary located,
                           LibraryLocator::LocateFromProcess(XlaGpuFactory::PluginSearch()));
  // The CUDA plugin may log while it initializes: at the level the device would give it.
  const plugin_wrapper::InnerPluginName name = XlaGpuPolicy(AttributeMap()).inner_plugin();
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<plugin_wrapper::InnerLogLevel> log_level,
                           plugin_wrapper::InnerLogLevel::ForThisProcess(name));
  return plugin_wrapper::InnerApi::Load(located.path, located.how, name);
}

}  // namespace

bool NvidiaGpuVisible() {
  const char* visible = getenv("CUDA_VISIBLE_DEVICES");
  if (visible != nullptr && (visible[0] == '\0' || std::string(visible) == "-1")) return false;
  DIR* gpus = opendir("/proc/driver/nvidia/gpus");
  if (gpus == nullptr) return false;
  bool any = false;
  while (dirent* entry = readdir(gpus)) any = any || entry->d_name[0] != '.';
  closedir(gpus);
  return any;
}

registry::DeviceEntry Entry() {
  registry::DeviceEntry facts;
  facts.name = "xla_gpu";
  facts.runs_like = registry::kRunsLikeXlaGpu;
  facts.summary = "OpenXLA's CUDA PJRT plugin (jax-cuda13-pjrt or jax-cuda12-pjrt) on NVIDIA GPUs";
  facts.auto_priority = 20;
  facts.available_reason = "an NVIDIA GPU and OpenXLA's CUDA plugin were found";
  facts.unavailable_reason = "no NVIDIA GPU with OpenXLA's CUDA plugin was found";
  facts.inner_plugin =
      registry::InnerPluginFacts{kPluginPathOption, kPluginPathEnv, &LoadProcessPlugin};
  facts.available = &Available;
  return registry::MakeEntry<XlaGpuFactory>(std::move(facts));
}

}  // namespace xla_gpu
}  // namespace pjrtkit
