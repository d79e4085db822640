// Test helpers: runfiles paths, the StableHLO library from @venv, testdata bytes.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_TEST_UTIL_H_

#include <limits.h>
#include <stdlib.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace stablehlo {
namespace testing {

// `relative` resolved in the test's runfiles ("" when missing).
inline std::string Runfile(const std::string& relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  for (const std::string& root : {std::string(srcdir) + "/pjrtkit/", std::string(srcdir) + "/"}) {
    char resolved[PATH_MAX];
    if (realpath((root + relative).c_str(), resolved) != nullptr) return resolved;
  }
  return "";
}

// torch-mlir's libTorchMLIRAggregateCAPI.so (@venv//:stablehlo_library).
inline std::string LibraryPath() {
  return Runfile("external/venv/stablehlo/libTorchMLIRAggregateCAPI.so");
}

// The library, loaded once per test binary.
inline std::shared_ptr<const StablehloLibrary> Library() {
  static const auto* const library = [] {
    StatusOr<std::shared_ptr<const StablehloLibrary>> loaded =
        StablehloLibrary::Load(LibraryPath());
    return new std::shared_ptr<const StablehloLibrary>(loaded.ok() ? *loaded : nullptr);
  }();
  return *library;
}

// The bytes of xla_plugin/stablehlo/testdata/`name` ("" when missing).
inline std::string Testdata(const std::string& name) {
  std::ifstream file(Runfile("xla_plugin/stablehlo/testdata/" + name), std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

}  // namespace testing
}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_TEST_UTIL_H_
