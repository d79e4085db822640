#include "xla_plugin/devices/xla_cpu/entry.h"

#include <optional>

#include "xla_plugin/client/library_locator.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_log_level.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> LoadProcessPlugin() {
  PJRTKIT_ASSIGN_OR_RETURN(LocatedLibrary located,
                           LibraryLocator::LocateFromProcess(XlaCpuFactory::PluginSearch()));
  // XLA:CPU may log while it initializes: at the level the device would give it.
  const plugin_wrapper::InnerPluginName name = XlaCpuPolicy().inner_plugin();
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<plugin_wrapper::InnerLogLevel> log_level,
                           plugin_wrapper::InnerLogLevel::ForThisProcess(name));
  return plugin_wrapper::InnerApi::Load(located.path, located.how, name);
}

}  // namespace

registry::DeviceEntry Entry() {
  registry::DeviceEntry facts;
  facts.name = "xla_cpu";
  facts.runs_like = registry::kRunsLikeXlaCpu;
  facts.summary = "OpenXLA's XLA:CPU plugin under pjrtkit's device model (4 devices by default)";
  facts.auto_priority = 10;
  facts.inner_plugin =
      registry::InnerPluginFacts{kPluginPathOption, kPluginPathEnv, &LoadProcessPlugin};
  return registry::MakeEntry<XlaCpuFactory>(std::move(facts));
}

}  // namespace xla_cpu
}  // namespace pjrtkit
