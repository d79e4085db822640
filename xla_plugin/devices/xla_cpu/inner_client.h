// InnerClient: one XLA:CPU PJRT_Client, shared by everything that must keep it alive.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_INNER_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_INNER_CLIENT_H_

#include <memory>
#include <string>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/xla_cpu/inner_api.h"

namespace pjrtkit {
namespace xla_cpu {

// Owns an inner PJRT_Client of `device_count` XLA:CPU devices and destroys it when the last owner
// lets go. XLA:CPU's executables point at the client that compiled or loaded them, and the
// PJRT_Executable of a loaded executable points into it (checked: with xla-cpu-pjrt 0.0.1,
// PJRT_Executable_Serialize crashes once the PJRT_LoadedExecutable is destroyed). So inner loaded
// executables are shared (LoadedPtr) by the XlaCpuLoadedExecutable and the XlaCpuExecutable made
// of them, and each keeps this client alive: an executable (PJRT_Executable) may outlive its
// loaded executable and the pjrtkit client, and one compiled ahead of time outlives the topology.
// Thread-safe: immutable after Create (XLA:CPU's client is thread-safe).
class InnerClient : public std::enable_shared_from_this<InnerClient> {
 public:
  // Creates an inner client on `api` with create option cpu_device_count = `device_count`.
  static StatusOr<std::shared_ptr<InnerClient>> Create(std::shared_ptr<InnerApi> api,
                                                       int device_count);
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
  // The number of devices it was created with.
  int device_count() const { return device_count_; }

  // A shared inner loaded executable: destroyed (PJRT_LoadedExecutable_Destroy) when the last
  // holder lets go; every holder keeps the InnerClient alive.
  using LoadedPtr = std::shared_ptr<PJRT_LoadedExecutable>;

  // Takes ownership of `loaded`, made by this client (nullptr gives nullptr).
  LoadedPtr Adopt(PJRT_LoadedExecutable* loaded) const;
  // PJRT_Client_Compile of `program` with `compile_options` made safe for XLA:CPU first
  // (NormalizeCompileOptions for device_count()); `what` prefixes pjrtkit's own errors
  // ("Compile").
  StatusOr<LoadedPtr> Compile(const Program& program, const std::string& compile_options,
                              const char* what) const;

 private:
  InnerClient(std::shared_ptr<InnerApi> api, PJRT_Client* client, int device_count);

  std::shared_ptr<InnerApi> api_;  // The inner plugin; outlives client_.
  PJRT_Client* client_;            // Owned.
  int device_count_;               // cpu_device_count it was created with.
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_INNER_CLIENT_H_
