// The placeholder of sim_compile.h's functions until the sim device's compiler is linked in:
// every compile is UNIMPLEMENTED; the StableHLO versions are {1, 0, 0}.
#include <cstdint>
#include <vector>

#include "xla_plugin/devices/sim/sim_compile.h"

namespace pjrtkit {
namespace sim {

StatusOr<std::unique_ptr<LoadedExecutable>> CompileAndLoad(SimClient& /*client*/,
                                                           const Program& /*program*/,
                                                           const std::string& /*options*/) {
  return Unimplemented("PJRT_Client_Compile: the sim device's compiler is not linked in");
}

StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
    SimClient& /*client*/, const std::string& /*serialized*/,
    const std::optional<std::string>& /*compile_options*/) {
  return Unimplemented(
      "PJRT_Executable_DeserializeAndLoad: the sim device's compiler is not linked in");
}

AttributeMap StablehloAttributesForProcess() {
  AttributeMap attributes;
  attributes["stablehlo_current_version"] = std::vector<int64_t>{1, 0, 0};
  attributes["stablehlo_minimum_version"] = std::vector<int64_t>{1, 0, 0};
  return attributes;
}

}  // namespace sim
}  // namespace pjrtkit
