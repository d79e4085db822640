#include "xla_plugin/c_api/trace/traced_api.h"

namespace pjrtkit {
namespace capi {
namespace trace {

std::vector<std::string> SlotNames() {
  return {
#define PJRTKIT_TRACE_SLOT_NAME(slot) #slot,
      PJRTKIT_TRACE_SLOTS(PJRTKIT_TRACE_SLOT_NAME)
#undef PJRTKIT_TRACE_SLOT_NAME
  };
}

void AppendStatus(std::string& line, PJRT_Error* error, bool returns_void,
                  const PJRT_Api& untraced, HandleIds& ids) {
  if (returns_void) {
    line += " = void";
    return;
  }
  if (error == nullptr) {
    line += " = OK";
    return;
  }
  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  PJRT_Error* code_error = untraced.PJRT_Error_GetCode(&code);
  const char* name = code_error == nullptr ? TraceEnumName(code.code) : nullptr;
  line += " = ";
  line += name ? name : "UNKNOWN";
  line += " " + ids.Name(HandleKind::kError, error) + " ";
  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  untraced.PJRT_Error_Message(&message);
  AppendQuoted(line, message.message ? message.message : "", message.message_size, 200);
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit
