// The registered plugin, its one-time initialization and the client the cases share.
#ifndef PJRTKIT_TESTS_CONFORMANCE_PLUGIN_H_
#define PJRTKIT_TESTS_CONFORMANCE_PLUGIN_H_

#include <vector>

#include "tests/conformance/conformance.h"
#include "tests/conformance/handles.h"
#include "tests/conformance/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {

// What RegisterPlugin was given.
struct Plugin {
  const PJRT_Api* api = nullptr;         // The plugin's API table.
  std::vector<NamedOption> options;      // PJRT_Client_Create options.
  PluginTraits traits;                   // Expected facts.
};

// The registered plugin, or NULL when RegisterPlugin was not called.
const Plugin* RegisteredPlugin();

// Calls PJRT_Plugin_Initialize the first time; later calls return the first status.
Status EnsureInitialized();

// PJRT_NamedValue views of `options` (valid while `options` lives).
std::vector<PJRT_NamedValue> ToNamedValues(const std::vector<NamedOption>& options);

// Creates a new client with `options`.
Status CreateClient(const std::vector<NamedOption>& options, ClientPtr* client);

// The client shared by all cases, created on first use with the registered options.
// Returns the creation status (cached) and sets `*client` when OK.
Status SharedClient(PJRT_Client** client);

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_PLUGIN_H_
