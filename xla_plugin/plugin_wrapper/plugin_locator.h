// PluginLocator: finds an inner PJRT plugin when no create option names it, so that a client
// created with no options at all works (as PJRT hosts other than JAX create them).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PLUGIN_LOCATOR_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PLUGIN_LOCATOR_H_

#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Where to look for one inner plugin.
struct PluginSearch {
  std::string env_var;  // Environment variable holding its absolute path: "PJRTKIT_XLA_CPU_PLUGIN".
  // Paths relative to the site-packages directory pjrtkit is installed in, in order:
  // "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so".
  std::vector<std::string> site_relative;
};

// A plugin found by PluginLocator.
struct LocatedPlugin {
  std::string path;  // Absolute path, symbolic links resolved (so the plugin's $ORIGIN works).
  std::string how;   // How it was found: "environment variable PJRTKIT_XLA_CPU_PLUGIN", ...
};

// Looks in this order: the environment variable, then the packages installed beside pjrtkit
// (pjrtkit's wheel puts the plugin library at <site-packages>/jax_plugins/pjrtkit/, so
// <site-packages> is two directories above the library holding this code, found with dladdr).
// Stateless; thread-safe.
class PluginLocator {
 public:
  // The directory of the shared library (or executable) this code is linked into; empty when
  // dladdr cannot tell.
  static std::string ThisLibraryDirectory();

  // Finds the plugin described by `search`, with `env_value` the value of its variable (nullptr
  // or empty: unset) and `library_dir` the directory of pjrtkit's library. FAILED_PRECONDITION
  // when the variable names a file that does not exist; NOT_FOUND, listing every place tried,
  // when nothing is found.
  static StatusOr<LocatedPlugin> Locate(const PluginSearch& search, const char* env_value,
                                        const std::string& library_dir);

  // Locate with this process's environment and ThisLibraryDirectory().
  static StatusOr<LocatedPlugin> LocateFromProcess(const PluginSearch& search);
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PLUGIN_LOCATOR_H_
