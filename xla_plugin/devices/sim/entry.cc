#include "xla_plugin/devices/sim/entry.h"

#include <utility>

#include "xla_plugin/devices/sim/sim_factory.h"

namespace pjrtkit {
namespace sim {

registry::DeviceEntry Entry() {
  registry::DeviceEntry facts;
  facts.name = "sim";
  facts.runs_like = registry::kRunsLikeStablehlo;
  facts.summary =
      "a simulated accelerator with its own StableHLO compiler, memory, queues and C++ kernels "
      "(4 devices by default)";
  facts.auto_priority = 0;  // Only when named: it stands where a team's hardware will.
  facts.available_reason = "the sim device runs everywhere";
  return registry::MakeEntry<SimFactory>(std::move(facts));
}

}  // namespace sim
}  // namespace pjrtkit
