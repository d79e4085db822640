#include "xla_plugin/devices/sim/sim_stablehlo.h"

#include <vector>

#include "xla_plugin/client/library_locator.h"

namespace pjrtkit {
namespace sim {

StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> ProcessStablehloLibrary() {
  static const StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>>* const library = [] {
    LibrarySearch search;
    search.env_var = kStablehloLibraryEnv;
    search.site_relative = {"torch_mlir/_mlir_libs/libTorchMLIRAggregateCAPI.so"};
    StatusOr<LocatedLibrary> located = LibraryLocator::LocateFromProcess(search);
    if (!located.ok()) {
      return new StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>>(FailedPrecondition(
          "the sim device reads StableHLO with torch-mlir's library, which was not found (pip "
          "install torch-mlir==20261001, as requirements.lock pins it, or set " +
          std::string(kStablehloLibraryEnv) + "): " + located.status().message()));
    }
    return new StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>>(
        stablehlo::StablehloLibrary::Load(located->path));
  }();
  return *library;
}

StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> LoadStablehloLibrary(
    const std::string& path) {
  if (path.empty()) return ProcessStablehloLibrary();
  return stablehlo::StablehloLibrary::Load(path);
}

AttributeMap StablehloVersionAttributes(const stablehlo::StablehloLibrary& library) {
  const stablehlo::StablehloVersions& versions = library.Versions();
  AttributeMap attributes;
  attributes["stablehlo_current_version"] =
      std::vector<int64_t>(versions.current.begin(), versions.current.end());
  attributes["stablehlo_minimum_version"] =
      std::vector<int64_t>(versions.minimum.begin(), versions.minimum.end());
  return attributes;
}

}  // namespace sim
}  // namespace pjrtkit
