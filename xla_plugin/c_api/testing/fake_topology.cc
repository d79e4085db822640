#include "xla_plugin/c_api/testing/fake_topology.h"

// C++ standard library.
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_executable.h"

namespace pjrtkit {
namespace testing {

FakeTopology::FakeTopology(std::string platform_version, std::vector<DeviceDescription> devices,
                           AttributeMap attributes)
    : Topology("fake", std::move(platform_version), std::move(devices), std::move(attributes)) {}

StatusOr<std::shared_ptr<Executable>> FakeTopology::Compile(const Program& program,
                                                            const std::string& compile_options,
                                                            Client* client) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_offered_client_ = client;
    ++compile_count_;
  }
  if (program.code.rfind("pred[0]", 0) == 0) {
    return InvalidArgument("fake: the topology compiler refuses pred[0] programs");
  }
  std::string options = compile_options;
  if (!options.empty()) options += ";";
  options += "topology_devices=" + std::to_string(devices().size());
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<FakeExecutable> executable,
                           FakeExecutable::Compile(program, options));
  return std::shared_ptr<Executable>(std::move(executable));
}

Client* FakeTopology::last_offered_client() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_offered_client_;
}

int FakeTopology::compile_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compile_count_;
}

}  // namespace testing
}  // namespace pjrtkit
