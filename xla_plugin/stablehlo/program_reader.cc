#include "xla_plugin/stablehlo/program_reader.h"

#include <string>

#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {

StatusOr<Module> ProgramReader::Read(const Program& program) const {
  if (library_ == nullptr) return FailedPrecondition("ProgramReader has no StableHLO library");
  if (program.format != kFormat) {
    return Unimplemented("program format '" + program.format + "' is not supported; this "
                         "device reads StableHLO, format '" + std::string(kFormat) + "'");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::string text, library_->ToGenericText(program.code));
  StatusOr<Module> module = TextParser::Parse(text);
  if (!module.ok()) {
    // E.g. unstructured control flow (successor lists), which TextParser does not read.
    return InvalidArgument("cannot read the program's generic text: " +
                           module.status().message());
  }
  return module;
}

}  // namespace stablehlo
}  // namespace pjrtkit
