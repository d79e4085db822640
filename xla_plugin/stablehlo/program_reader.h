// ProgramReader: a Program handed to Compile -> the parsed Module (StablehloLibrary::ToGenericText,
// then TextParser).
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_PROGRAM_READER_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_PROGRAM_READER_H_

#include <memory>
#include <utility>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace stablehlo {

// Reads programs with one loaded library; as thread-safe as the library (it is).
class ProgramReader {
 public:
  // The format Read accepts (PJRT's name for StableHLO text or bytecode).
  static constexpr const char* kFormat = "mlir";

  // Reads with `library` (shared: a device keeps one library for all its clients; a null one
  // makes Read fail with FAILED_PRECONDITION).
  explicit ProgramReader(std::shared_ptr<const StablehloLibrary> library)
      : library_(std::move(library)) {}

  // `program` (format "mlir": a VHLO portable artifact, MLIR bytecode or MLIR text) -> Module.
  // UNIMPLEMENTED for any other format (naming the accepted one); INVALID_ARGUMENT when the
  // library cannot read the bytes or TextParser the generic text the library prints.
  StatusOr<Module> Read(const Program& program) const;

  // The library it reads with (null when constructed with none).
  const std::shared_ptr<const StablehloLibrary>& library() const { return library_; }

 private:
  std::shared_ptr<const StablehloLibrary> library_;  // The library (null: Read fails).
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_PROGRAM_READER_H_
