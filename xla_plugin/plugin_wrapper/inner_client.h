// InnerClient: one inner PJRT_Client, shared by everything that must keep it alive.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_CLIENT_H_

#include <memory>
#include <string>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Owns an inner PJRT_Client made with its device's DevicePolicy and destroys it when the last
// owner lets go. XLA:CPU's executables point at the client that compiled or loaded them, and the
// PJRT_Executable of a loaded executable points into it (checked: with xla-cpu-pjrt 0.0.1,
// PJRT_Executable_Serialize crashes once the PJRT_LoadedExecutable is destroyed). So inner loaded
// executables are shared (LoadedPtr) by the WrappedLoadedExecutable and the WrappedExecutable made
// of them, and each keeps this client alive: an executable (PJRT_Executable) may outlive its
// loaded executable and the pjrtkit client, and one compiled ahead of time outlives the topology.
// The same holds for every inner plugin pjrtkit wraps, so the rule is the wrapper's.
// Thread-safe: immutable after Create (the inner clients are thread-safe).
class InnerClient : public std::enable_shared_from_this<InnerClient> {
 public:
  // Creates an inner client on `api` with `policy`'s inner create options for `device_count`
  // devices (0: as many as the inner plugin finds). device_count() is the number it made. With
  // `forward` from a multi-process job, the inner plugin also gets node_id / num_nodes and the
  // framework's key-value store (kept as long as this client).
  static StatusOr<std::shared_ptr<InnerClient>> Create(std::shared_ptr<InnerApi> api,
                                                       std::shared_ptr<const DevicePolicy> policy,
                                                       int device_count,
                                                       const MultiProcess& forward = {});
  InnerClient(const InnerClient&) = delete;
  InnerClient& operator=(const InnerClient&) = delete;
  // PJRT_Client_Destroy.
  ~InnerClient();

  // The inner client.
  PJRT_Client* get() const { return client_; }
  // The inner plugin.
  const InnerApi& api() const { return *api_; }
  // The inner plugin, shared.
  const std::shared_ptr<InnerApi>& shared_api() const { return api_; }
  // The number of devices it has.
  int device_count() const { return device_count_; }
  // The device's policy.
  const DevicePolicy& policy() const { return *policy_; }
  // The device's policy, shared.
  const std::shared_ptr<const DevicePolicy>& shared_policy() const { return policy_; }

  // A shared inner loaded executable: destroyed (PJRT_LoadedExecutable_Destroy) when the last
  // holder lets go; every holder keeps the InnerClient alive.
  using LoadedPtr = std::shared_ptr<PJRT_LoadedExecutable>;

  // Takes ownership of `loaded`, made by this client (nullptr gives nullptr).
  LoadedPtr Adopt(PJRT_LoadedExecutable* loaded) const;
  // PJRT_Client_Compile of `program` with `compile_options` made safe for the inner plugin first
  // (NormalizeCompileOptions for device_count()); `what` prefixes pjrtkit's own errors
  // ("Compile").
  StatusOr<LoadedPtr> Compile(const Program& program, const std::string& compile_options,
                              const char* what) const;

 private:
  InnerClient(std::shared_ptr<InnerApi> api, std::shared_ptr<const DevicePolicy> policy,
              PJRT_Client* client, int device_count);

  std::shared_ptr<InnerApi> api_;               // The inner plugin; outlives client_.
  std::shared_ptr<const DevicePolicy> policy_;  // The device's choices.
  PJRT_Client* client_;                         // Owned.
  int device_count_;                            // Inner devices.
  std::shared_ptr<KeyValueStore> store_;        // Given to the inner plugin; may be null.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_CLIENT_H_
