// Where the sim device finds its StableHLO reader: torch-mlir's libTorchMLIRAggregateCAPI.so
// (PyPI torch-mlir, pinned in requirements.lock), loaded at run time.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_STABLEHLO_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_STABLEHLO_H_

#include <memory>
#include <string>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace sim {

// The environment variable naming the library's absolute path.
inline constexpr char kStablehloLibraryEnv[] = "PJRTKIT_STABLEHLO_LIBRARY";

// The library at `path` when it is not empty, else the process's (ProcessStablehloLibrary).
StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> LoadStablehloLibrary(
    const std::string& path);

// The process's library, found once without options: $PJRTKIT_STABLEHLO_LIBRARY, else
// torch_mlir/_mlir_libs/libTorchMLIRAggregateCAPI.so in the site-packages pjrtkit is installed
// in. Loaded at the first call and kept for the process (immutable afterwards); the error names
// every place tried and how to install it.
StatusOr<std::shared_ptr<const stablehlo::StablehloLibrary>> ProcessStablehloLibrary();

// stablehlo_current_version / stablehlo_minimum_version of `library` as plugin attributes.
AttributeMap StablehloVersionAttributes(const stablehlo::StablehloLibrary& library);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_STABLEHLO_H_
