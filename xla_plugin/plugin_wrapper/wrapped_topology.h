// WrappedTopology: the topology of a device built on an inner plugin, with an ahead-of-time
// compiler.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TOPOLOGY_H_

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/inner_client.h"

namespace pjrtkit {
namespace plugin_wrapper {

// pjrtkit's topology of `device_count` devices (described by the DevicePolicy), which compiles
// ahead of time.
//
// XLA:CPU's own PJRT_Compile answers NOT_FOUND ("No compiler registered for platform cpu"), so
// Compile goes through an inner client of the same device count: PJRT_Client_Compile, then the
// executable of the loaded result (XLA:CPU loads at compile time; that costs nothing more). Which
// inner client:
//   1. the offered client's, when it is a pjrtkit WrappedClient of the same device (backend) and
//      device count (no cost);
//   2. otherwise this topology's compiler: an inner client created at the first such Compile and
//      reused (creating one costs a few milliseconds and XLA:CPU's per-client thread pools). A
//      client's own topology starts with the client's inner client as its compiler. The library
//      is the offered client's (any device count) or, without one, loaded from the plugin path
//      the topology was created with (create option xla_cpu_plugin_path); neither is
//      FAILED_PRECONDITION.
// Every executable shares the inner client that compiled it, so it outlives this topology.
// Thread-safe.
class WrappedTopology : public Topology {
 public:
  // A topology made without a client (PJRT_TopologyDescription_Create) of `device_count` devices
  // described by `policy` (without the inner plugin), compiling through an inner client loaded
  // from `plugin_path` (empty: only with a pjrtkit client offered).
  static std::unique_ptr<WrappedTopology> Create(std::shared_ptr<const DevicePolicy> policy,
                                                 int device_count, std::string plugin_path);
  // The topology of a client whose inner client is `compiler`, whose devices are `devices`, at
  // `platform_version`; its attributes are the inner client's topology's (XLA:GPU's
  // target_config, which JAX reads for deviceless compilation) and device_count.
  static std::unique_ptr<WrappedTopology> OfClient(std::shared_ptr<InnerClient> compiler,
                                                   const std::string& platform_version,
                                                   std::vector<DeviceDescription> devices);

  // The topology of this topology's inner client (PJRT_Client_TopologyDescription), created for a
  // topology made without a client when it has a plugin path; none when it cannot be.
  NativeHandle native_handle() const override;
  // Number of devices.
  int device_count() const { return static_cast<int>(devices().size()); }
  // The inner plugin path it was created with (may be empty).
  const std::string& plugin_path() const { return plugin_path_; }
  // This topology's own inner client: the client's for a client's topology, else null until the
  // first Compile that needed one (then reused). For tests and diagnostics.
  std::shared_ptr<InnerClient> compiler() const;

  // The inner plugin's default layout, asked of this topology's own inner client when it has one
  // (a client's topology, or after an ahead-of-time compile); otherwise the client layer's dense
  // row-major, which is what XLA:CPU answers for every element type (inner_layouts_test).
  StatusOr<MemoryLayout> DefaultLayout(ElementType type,
                                       const std::vector<int64_t>& dims) const override;
  // The inner plugin's answers for its client's topology (PJRT_Client_TopologyDescription of this
  // topology's inner client): a client's topology, or one that has compiled. UNIMPLEMENTED before
  // that, and from an inner plugin without the slot (XLA:CPU 0.81), naming the slot.
  StatusOr<std::vector<int>> MemorySpaceKindIds() const override;
  // NormalizeCompileOptions for this topology's device count (compile_options.h).
  StatusOr<std::string> PrepareCompileOptions(const std::string& compile_options) const override;
  StatusOr<std::string> CanonicalShapeForMemorySpace(
      int kind_id, ElementType type, const std::vector<int64_t>& dims,
      const std::optional<MemoryLayout>& layout) const override;
  // Compiles `program` for this topology (see the class comment). The executable's Serialize()
  // bytes name this device count, and WrappedClient::DeserializeAndLoad refuses them on a client
  // of another count.
  StatusOr<std::shared_ptr<Executable>> Compile(const Program& program,
                                                const std::string& compile_options,
                                                Client* client) const override;

 private:
  WrappedTopology(std::shared_ptr<const DevicePolicy> policy,
                  std::vector<DeviceDescription> devices, AttributeMap attributes,
                  const std::string& platform_version, std::string plugin_path,
                  std::shared_ptr<InnerClient> compiler);
  // The inner topology of this topology's inner client (with the client, which keeps it alive);
  // UNIMPLEMENTED naming `slot` when there is no inner client yet.
  StatusOr<std::pair<std::shared_ptr<InnerClient>, PJRT_TopologyDescription*>> InnerTopology(
      const char* slot) const;
  // The inner client to compile through for `client` (may be null); see the class comment.
  StatusOr<std::shared_ptr<InnerClient>> CompilerFor(Client* client) const;

  const std::shared_ptr<const DevicePolicy> policy_;  // The device's choices.
  const std::string plugin_path_;                 // The inner plugin's path; may be empty.
  mutable std::mutex mu_;                          // Guards compiler_.
  mutable std::shared_ptr<InnerClient> compiler_;  // This topology's inner client, or null.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_TOPOLOGY_H_
