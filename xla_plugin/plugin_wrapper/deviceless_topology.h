// DevicelessTopology: pjrtkit's topology over an inner plugin's topology made without a client
// (PJRT_TopologyDescription_Create), compiling ahead of time through the inner plugin's
// PJRT_Compile with no client and no device.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICELESS_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICELESS_TOPOLOGY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/inner_topology.h"

namespace pjrtkit {
namespace plugin_wrapper {

// The devices are the inner topology's, described by the DevicePolicy (as a client's are); the
// platform version is pjrtkit's with the inner one last; the attributes are the inner topology's
// plus device_count. Compile hands the program to the inner plugin's PJRT_Compile with the inner
// topology and no client, whatever client is offered (a deviceless compile: XLA:GPU compiles for
// the GPU the topology's target config describes, on a machine without one), so the result never
// depends on the machine's devices. The executable's Serialize() bytes are what a pjrtkit client
// of the same device writes (serialized_executable.h: the backend's header with this topology's
// device count, then the inner plugin's bytes), so WrappedClient::DeserializeAndLoad takes them on
// a client of as many devices. Executables keep the inner topology alive, so they outlive this
// topology. Thread-safe: immutable after Create.
class DevicelessTopology : public Topology {
 public:
  // The topology of `inner`, for the device `policy` describes.
  static std::unique_ptr<DevicelessTopology> Create(std::shared_ptr<InnerTopology> inner,
                                                    std::shared_ptr<const DevicePolicy> policy);

  // The inner topology.
  NativeHandle native_handle() const override;
  // The inner topology, shared (for tests and diagnostics).
  const std::shared_ptr<InnerTopology>& inner() const { return inner_; }
  // Number of devices.
  int device_count() const { return static_cast<int>(devices().size()); }

  // The inner topology's answers, naming the slot when the inner plugin has none.
  StatusOr<std::vector<int>> MemorySpaceKindIds() const override;
  StatusOr<std::string> CanonicalShapeForMemorySpace(
      int kind_id, ElementType type, const std::vector<int64_t>& dims,
      const std::optional<MemoryLayout>& layout) const override;
  // NormalizeCompileOptions for this topology's device count (compile_options.h).
  StatusOr<std::string> PrepareCompileOptions(const std::string& compile_options) const override;
  // Compiles `program` through the inner plugin's PJRT_Compile (see the class comment); `client`
  // is not used. INVALID_ARGUMENT for a program without a format, options the inner plugin would
  // abort on (NormalizeCompileOptions) or HLO it would abort on (hlo_id_check.h); the inner
  // plugin's errors otherwise ("XLA:GPU PJRT_Compile: ...").
  StatusOr<std::shared_ptr<Executable>> Compile(const Program& program,
                                                const std::string& compile_options,
                                                Client* client) const override;

 private:
  DevicelessTopology(std::shared_ptr<InnerTopology> inner,
                     std::shared_ptr<const DevicePolicy> policy,
                     std::vector<DeviceDescription> devices, AttributeMap attributes);

  const std::shared_ptr<InnerTopology> inner_;          // The inner topology.
  const std::shared_ptr<const DevicePolicy> policy_;    // The device's choices.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICELESS_TOPOLOGY_H_
