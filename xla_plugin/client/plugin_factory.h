// The contract between a device and the C-API layer: what CreatePjrtApi<Factory>() needs.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_PLUGIN_FACTORY_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_PLUGIN_FACTORY_H_

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// A device plugs into pjrtkit::CreatePjrtApi<Factory>() (xla_plugin/c_api/api.h) through a class
// with these static members; see devices/xla_cpu/xla_cpu_factory.h and
// devices/xla_gpu/xla_gpu_factory.h for the reference devices, devices/selection for the factory
// that chooses between the registered devices per client. A device registered in
// devices/registry (tools/new_device.py) also needs `static std::vector<OptionSpec> OptionSpecs()`
// and `CreateClient(options, const MultiProcess& job = {})`: registry::CheckDeviceFactory.
// The checks below give a readable compile error when one is missing.
//
//   struct MyFactory {
//     static Status Initialize();                      // PJRT_Plugin_Initialize (idempotent)
//     static AttributeMap PluginAttributes();          // PJRT_Plugin_Attributes
//     static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options);
//     static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
//                                                               const AttributeMap& options);
//     // Optional: a device built on another PJRT plugin returns that plugin's `const PJRT_Api*`
//     // (as const void*; null when it is not loaded); its extensions are forwarded, with the
//     // handles translated through each object's native_handle() (native_handle.h).
//     static const void* ForwardedPluginApi();
//   };
template <typename Factory>
constexpr bool CheckPluginFactory() {
  static_assert(std::is_same_v<decltype(Factory::Initialize()), Status>,
                "Factory::Initialize() must return pjrtkit::Status");
  static_assert(std::is_same_v<decltype(Factory::PluginAttributes()), AttributeMap>,
                "Factory::PluginAttributes() must return pjrtkit::AttributeMap");
  static_assert(std::is_same_v<decltype(Factory::CreateClient(std::declval<AttributeMap>())),
                               StatusOr<std::unique_ptr<Client>>>,
                "Factory::CreateClient(options) must return StatusOr<std::unique_ptr<Client>>");
  static_assert(
      std::is_same_v<decltype(Factory::CreateTopology(std::declval<std::string>(),
                                                      std::declval<AttributeMap>())),
                     StatusOr<std::unique_ptr<Topology>>>,
      "Factory::CreateTopology(name, options) must return StatusOr<std::unique_ptr<Topology>>");
  return true;
}

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_PLUGIN_FACTORY_H_
