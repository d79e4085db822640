// StablehloLibrary: a StableHLO C API library (torch-mlir's libTorchMLIRAggregateCAPI.so, PyPI
// torch-mlir 20261001) loaded at run time, from an explicit path, with dlopen(RTLD_NOW |
// RTLD_LOCAL). It turns the program bytes JAX sends to PJRT_Client_Compile into MLIR generic text
// (TextParser reads that) and runs the StableHLO reference interpreter as a test oracle.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_LIBRARY_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_LIBRARY_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/stablehlo/mlir_c_api.h"

namespace pjrtkit {
namespace stablehlo {

// What the library reads: a plugin reports `current` as stablehlo_current_version and `minimum` as
// stablehlo_minimum_version (never more than this), and JAX then serializes at `current`.
struct StablehloVersions {
  int api_version = 0;                  // stablehloGetApiVersion().
  std::array<int64_t, 3> current = {};  // stablehloGetCurrentVersion(), e.g. {1, 19, 0}.
  std::array<int64_t, 3> minimum = {};  // stablehloGetMinimumVersion(), e.g. {0, 9, 0}.
};

// A dense host array: element type, dims and row-major bytes in the storage format of
// Attribute::data (i1 one byte per element, bf16 its 16 bits, complex real then imaginary).
struct HostTensor {
  ElementType type = ElementType::kInvalid;  // The element type.
  std::vector<int64_t> dims;                 // Static sizes; empty for a scalar.
  std::string data;                          // NumElements * StorageBytes(type) bytes.
};

// A loaded library. Immutable after Load and safe to share between threads: each call works in an
// MLIR context of its own (MLIR contexts are not safe for concurrent use, and a context keeps
// every constant it has seen, so one per call also frees a program's constants with it).
class StablehloLibrary {
 public:
  // The StableHLO C API version Interpret's call was verified against (see Interpret).
  static constexpr int kInterpreterApiVersion = 9;

  // Loads the library at `path` (no search path). NOT_FOUND when there is no file,
  // FAILED_PRECONDITION when it is not a loadable library or lacks a function this class uses
  // (the error names the function and the library).
  static StatusOr<std::shared_ptr<const StablehloLibrary>> Load(const std::string& path);
  ~StablehloLibrary();
  StablehloLibrary(const StablehloLibrary&) = delete;
  StablehloLibrary& operator=(const StablehloLibrary&) = delete;

  // The library's C API version and the StableHLO versions it reads.
  const StablehloVersions& Versions() const { return versions_; }
  // The path it was loaded from.
  const std::string& path() const { return path_; }

  // Program bytes as JAX sends them -> the module printed in MLIR generic op form with debug
  // locations. Reads a VHLO portable artifact (MLIR bytecode whose producer is "StableHLO_v...")
  // with stablehloDeserializePortableArtifactNoError, anything else (plain MLIR bytecode, MLIR
  // text) with mlirModuleCreateParse. Unregistered dialects are allowed in text (their ops and
  // attributes print generically); bytecode of a dialect the library lacks (sdy, chlo) is not
  // readable. INVALID_ARGUMENT with MLIR's diagnostics when the program cannot be read. The
  // library's bytecode reader can crash on corrupted bytecode (README.md, "Facts and limits").
  StatusOr<std::string> ToGenericText(std::string_view program) const;

  // Runs the StableHLO reference interpreter (stablehloEvalModule) on the function "main" of
  // `module` (MLIR text or bytes, read as ToGenericText reads them) with `inputs`, which must
  // match main's argument types. A TEST ORACLE for checked programs only: the interpreter aborts
  // the process (LLVM ERROR) on an op it does not implement. FAILED_PRECONDITION when the
  // library's C API version is not kInterpreterApiVersion.
  //
  // stablehloEvalModule in this build takes five parameters, not the four of upstream's header:
  // (module, num_args, args, const char* probe_instrumentation_dir, int* error_code). Found by
  // disassembly: the fourth (rcx) goes to strlen and is stored as the interpreter configuration's
  // probe directory (the configuration's main function is "main"), the fifth (r8) receives the
  // error code; "" disables probes. Checked by experiment (stablehlo_library_test): the 4-argument
  // call would read the error-code pointer from an unset register.
  StatusOr<std::vector<HostTensor>> Interpret(std::string_view module,
                                              const std::vector<HostTensor>& inputs) const;

 private:
  class Session;

  StablehloLibrary() = default;

  std::string path_;                       // Where it was loaded from.
  void* handle_ = nullptr;                 // dlopen handle (closed by the destructor).
  mlir_c::Functions api_;                  // The resolved functions.
  mlir_c::MlirDialectRegistry registry_{};  // All dialects + stablehlo; read-only after Load.
  StablehloVersions versions_;             // Read at Load.
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_LIBRARY_H_
