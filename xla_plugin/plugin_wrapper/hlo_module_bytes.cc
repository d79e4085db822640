#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"

#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<HloModuleBytes> HloModuleBytes::FromProgram(const Program& program,
                                                     const std::string& prefix) {
  HloModuleBytes out;
  if (program.format == "hlo") {
    out.view_ = program.code;
    return out;
  }
  if (program.format != "hlo_with_config") {
    return Unimplemented(prefix + ": optimized program format '" + program.format +
                         "' is not \"hlo\" or \"hlo_with_config\"");
  }
  std::vector<std::string_view> modules;
  ProtoReader reader(program.code);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return InvalidArgument(prefix + ": " + field.status().message());
    if (field->number == hlo_fields::kWithConfigModule &&
        field->type == WireType::kLengthDelimited) {
      modules.push_back(field->bytes);
    }
  }
  if (modules.empty()) {
    return InvalidArgument(prefix + ": the HloModuleProtoWithConfig has no hlo_module");
  }
  if (modules.size() == 1) {
    out.view_ = modules[0];
    return out;
  }
  for (std::string_view module : modules) out.storage_.append(module);
  out.merged_ = true;
  return out;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
