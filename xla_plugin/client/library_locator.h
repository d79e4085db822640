// LibraryLocator: finds a shared library the plugin loads at run time (an inner PJRT plugin, a
// compiler library) when no create option names it, so that a client created with no options at
// all works (as PJRT hosts other than JAX create them). Any device may use it: the wrapped devices
// find their inner plugin with it, a device with its own compiler its compiler's library.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_LIBRARY_LOCATOR_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_LIBRARY_LOCATOR_H_

#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {

// Where to look for one library.
struct LibrarySearch {
  std::string env_var;  // Environment variable holding its absolute path: "PJRTKIT_XLA_CPU_PLUGIN".
  // Paths relative to the site-packages directory pjrtkit is installed in, in order:
  // "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so".
  std::vector<std::string> site_relative;
};

// A library found by LibraryLocator.
struct LocatedLibrary {
  std::string path;  // Absolute path, symbolic links resolved (so the library's $ORIGIN works).
  std::string how;   // How it was found: "environment variable PJRTKIT_XLA_CPU_PLUGIN", ...
};

// Looks in this order: the environment variable, then the packages installed beside pjrtkit
// (pjrtkit's wheel puts the plugin library at <site-packages>/jax_plugins/pjrtkit/, so
// <site-packages> is two directories above the library holding this code, found with dladdr).
// Stateless; thread-safe.
class LibraryLocator {
 public:
  // The directory of the shared library (or executable) this code is linked into; empty when
  // dladdr cannot tell.
  static std::string ThisLibraryDirectory();

  // Finds the library described by `search`, with `env_value` the value of its variable (nullptr
  // or empty: unset) and `library_dir` the directory of pjrtkit's library. FAILED_PRECONDITION
  // when the variable names a file that does not exist; NOT_FOUND, listing every place tried,
  // when nothing is found.
  static StatusOr<LocatedLibrary> Locate(const LibrarySearch& search, const char* env_value,
                                         const std::string& library_dir);

  // Locate with this process's environment and ThisLibraryDirectory().
  static StatusOr<LocatedLibrary> LocateFromProcess(const LibrarySearch& search);
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_LIBRARY_LOCATOR_H_
