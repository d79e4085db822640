// FakeTopology: the fake device's topology, with an ahead-of-time compiler (Topology::Compile).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TOPOLOGY_H_

// C++ standard library.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace testing {

// A topology of platform "fake". Compile() compiles like FakeClient::Compile (the program is a
// signature; see fake_executable.h) and records the topology's device count in the executable
// ("topology_devices=N"), so FakeClient::DeserializeAndLoad refuses it on a client of another
// device count. A program whose signature starts with "pred[0]" fails to compile (test hook).
class FakeTopology : public Topology {
 public:
  // A "fake" topology of `devices` at `platform_version` with `attributes`.
  FakeTopology(std::string platform_version, std::vector<DeviceDescription> devices,
               AttributeMap attributes);

  // FakeExecutable::Compile of `program` for this topology; remembers `client`.
  StatusOr<std::shared_ptr<Executable>> Compile(const Program& program,
                                                const std::string& compile_options,
                                                Client* client) const override;

  // The client the last Compile was offered (nullptr: none), and how many compiles ran
  // (test hooks).
  Client* last_offered_client() const;
  int compile_count() const;

 private:
  mutable std::mutex mu_;                         // Guards the records below.
  mutable Client* last_offered_client_ = nullptr;  // See last_offered_client().
  mutable int compile_count_ = 0;                  // See compile_count().
};

}  // namespace testing
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_TOPOLOGY_H_
