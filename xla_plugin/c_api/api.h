// CreatePjrtApi<Factory>(): the PJRT_Api table of a pjrtkit device.
//
// A device's plugin.cc is one line:
//
//   extern "C" const PJRT_Api* GetPjrtApi() { return pjrtkit::CreatePjrtApi<MyFactory>(); }
//
// Only the four entry points that need the Factory (PJRT_Plugin_Initialize,
// PJRT_Plugin_Attributes, PJRT_Client_Create, PJRT_TopologyDescription_Create) are templates
// here, and each is a one-line forward to non-template code; every other slot is plain code in
// this folder's .cc files, working through the client layer's virtual methods.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_API_H_
#define PJRTKIT_XLA_PLUGIN_C_API_API_H_

// C++ standard library.
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/api_table.h"
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/make_api.h"
#include "xla_plugin/c_api/plugin.h"
#include "xla_plugin/c_api/topology.h"
#include "xla_plugin/c_api/trace/traced_api.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/plugin_factory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// True when Factory has ForwardedPluginApi(), the plugin whose extensions to forward.
template <typename Factory, typename = void>
struct ForwardsPlugin : std::false_type {};
template <typename Factory>
struct ForwardsPlugin<Factory, std::void_t<decltype(Factory::ForwardedPluginApi())>>
    : std::true_type {};

// The factory's forwarded plugin, or null.
template <typename Factory>
const PJRT_Api* ForwardedPluginApi() {
  if constexpr (ForwardsPlugin<Factory>::value) {
    return static_cast<const PJRT_Api*>(Factory::ForwardedPluginApi());
  } else {
    return nullptr;
  }
}

// The factory's plugin attributes as a PJRT_NamedValue array that lives for the whole process
// (as PJRT_Plugin_Attributes requires): computed once, never freed.
template <typename Factory>
const NamedValueList& FactoryPluginAttributes() {
  static const NamedValueList* const attributes = new NamedValueList(Factory::PluginAttributes());
  return *attributes;
}

// PJRT_Plugin_Initialize for Factory.
template <typename Factory>
PJRT_Error* PluginInitialize(PJRT_Plugin_Initialize_Args* args) {
  return PluginInitializeWith(args, [] { return Factory::Initialize(); });
}

// PJRT_Plugin_Attributes for Factory.
template <typename Factory>
PJRT_Error* PluginAttributes(PJRT_Plugin_Attributes_Args* args) {
  return PluginAttributesFrom(args, &FactoryPluginAttributes<Factory>);
}

// True when Factory has CreateClient(options, multi_process).
template <typename Factory, typename = void>
struct TakesMultiProcess : std::false_type {};
template <typename Factory>
struct TakesMultiProcess<Factory, std::void_t<decltype(Factory::CreateClient(
                                      std::declval<AttributeMap>(), std::declval<MultiProcess>()))>>
    : std::true_type {};

// The factory's client: CreateClient(options, multi_process) when it has one; otherwise
// CreateClient(options), and a multi-process job is refused (the device cannot take part).
template <typename Factory>
StatusOr<std::unique_ptr<Client>> CreateFactoryClient(const AttributeMap& options,
                                                      const MultiProcess& multi_process) {
  if constexpr (TakesMultiProcess<Factory>::value) {
    return StatusOr<std::unique_ptr<Client>>(Factory::CreateClient(options, multi_process));
  } else {
    if (multi_process.is_multi_process()) {
      return Unimplemented("PJRT_Client_Create: this device does not take part in multi-process "
                           "jobs (num_nodes = " + std::to_string(multi_process.num_processes()) +
                           "); its factory has no CreateClient(options, multi_process)");
    }
    return StatusOr<std::unique_ptr<Client>>(Factory::CreateClient(options));
  }
}

// PJRT_Client_Create for Factory.
template <typename Factory>
PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args) {
  return ClientCreateWith(args, &CreateFactoryClient<Factory>);
}

// PJRT_TopologyDescription_Create for Factory.
template <typename Factory>
PJRT_Error* TopologyCreate(PJRT_TopologyDescription_Create_Args* args) {
  return TopologyCreateWith(args, [](const std::string& name, const AttributeMap& options) {
    return StatusOr<std::unique_ptr<Topology>>(Factory::CreateTopology(name, options));
  });
}

// The entry points of Factory.
template <typename Factory>
FactoryEntryPoints FactoryEntries() {
  FactoryEntryPoints entry_points;
  entry_points.plugin_initialize = &PluginInitialize<Factory>;
  entry_points.plugin_attributes = &PluginAttributes<Factory>;
  entry_points.client_create = &ClientCreate<Factory>;
  entry_points.topology_create = &TopologyCreate<Factory>;
  entry_points.extension_start = ExtensionChain(ForwardedPluginApi<Factory>());
  return entry_points;
}

// The ApiTable of Factory: built once, thread-safely, on first use, with PJRTKIT_TRACE read
// then; never destroyed (a traced table writes its summary at exit and may be called after).
template <typename Factory>
const ApiTable& FactoryApiTable() {
  static const ApiTable* const table =
      new ApiTable(FactoryEntries<Factory>(), std::getenv("PJRTKIT_TRACE"),
                   &trace::FillTraced<&FactoryApiTable<Factory>>,
                   &trace::WriteSummaryAtExit<&FactoryApiTable<Factory>>);
  return *table;
}

}  // namespace capi

// The PJRT_Api of the device built by `Factory` (see xla_plugin/client/plugin_factory.h), built
// once, thread-safely, never modified. PJRTKIT_TRACE (read once, here) set to 1 or a path makes
// it the traced table (docs/tracing.md); unset, empty or 0, it is the untraced one.
template <typename Factory>
const PJRT_Api* CreatePjrtApi() {
  static_assert(CheckPluginFactory<Factory>(), "Factory does not satisfy the plugin contract");
  return capi::FactoryApiTable<Factory>().api();
}

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_API_H_
