#include "xla_plugin/client/library_locator.h"

// dladdr and realpath are in glibc's libc: nothing extra to link.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>

namespace pjrtkit {
namespace {

// `path` with symbolic links and ".." resolved, or empty when it does not exist.
std::string Resolve(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return "";
  return resolved;
}

// A function whose address dladdr maps back to the library holding this code.
void Anchor() {}

}  // namespace

std::string LibraryLocator::ThisLibraryDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Anchor), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  const std::string library = Resolve(info.dli_fname);
  const size_t slash = library.rfind('/');
  return slash == std::string::npos ? std::string() : library.substr(0, slash);
}

StatusOr<LocatedLibrary> LibraryLocator::Locate(const LibrarySearch& search, const char* env_value,
                                                const std::string& library_dir) {
  if (env_value != nullptr && env_value[0] != '\0') {
    const std::string resolved = Resolve(env_value);
    if (resolved.empty()) {
      return FailedPrecondition("environment variable " + search.env_var + " is '" + env_value +
                                "', which does not exist");
    }
    return LocatedLibrary{resolved, "environment variable " + search.env_var};
  }
  std::string tried = search.env_var + " (unset)";
  if (library_dir.empty()) {
    tried += "; the packages beside pjrtkit (its library's location is unknown)";
  } else {
    const std::string site = library_dir + "/../..";
    for (const std::string& relative : search.site_relative) {
      const std::string candidate = site + "/" + relative;
      const std::string resolved = Resolve(candidate);
      if (!resolved.empty()) return LocatedLibrary{resolved, "installed beside pjrtkit"};
      tried += "; " + candidate;
    }
  }
  return NotFound("looked in " + tried);
}

StatusOr<LocatedLibrary> LibraryLocator::LocateFromProcess(const LibrarySearch& search) {
  return Locate(search, getenv(search.env_var.c_str()), ThisLibraryDirectory());
}

}  // namespace pjrtkit
