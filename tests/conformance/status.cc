#include "tests/conformance/status.h"

namespace pjrt_conformance {

Status TakeError(const PJRT_Api* api, PJRT_Error* error) {
  Status status;
  if (error == nullptr) return status;

  PJRT_ARGS(PJRT_Error_GetCode_Args, code_args);
  code_args.error = error;
  PJRT_Error* code_error = api->PJRT_Error_GetCode(&code_args);
  // GetCode reporting an error about an error is itself a plugin bug; keep going.
  status.code = code_error == nullptr ? code_args.code : PJRT_Error_Code_UNKNOWN;
  if (code_error != nullptr) {
    PJRT_ARGS(PJRT_Error_Destroy_Args, destroy_args);
    destroy_args.error = code_error;
    api->PJRT_Error_Destroy(&destroy_args);
  }
  // An error must never read as OK; keep the distinction visible.
  if (status.code == PJRT_Error_Code_OK) status.code = PJRT_Error_Code_UNKNOWN;

  PJRT_ARGS(PJRT_Error_Message_Args, message_args);
  message_args.error = error;
  api->PJRT_Error_Message(&message_args);
  if (message_args.message != nullptr) {
    status.message.assign(message_args.message, message_args.message_size);
  }

  PJRT_ARGS(PJRT_Error_Destroy_Args, destroy_args);
  destroy_args.error = error;
  api->PJRT_Error_Destroy(&destroy_args);
  return status;
}

const char* ErrorCodeName(PJRT_Error_Code code) {
  switch (code) {
    case PJRT_Error_Code_OK: return "OK";
    case PJRT_Error_Code_CANCELLED: return "CANCELLED";
    case PJRT_Error_Code_UNKNOWN: return "UNKNOWN";
    case PJRT_Error_Code_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case PJRT_Error_Code_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case PJRT_Error_Code_NOT_FOUND: return "NOT_FOUND";
    case PJRT_Error_Code_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case PJRT_Error_Code_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case PJRT_Error_Code_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case PJRT_Error_Code_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case PJRT_Error_Code_ABORTED: return "ABORTED";
    case PJRT_Error_Code_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case PJRT_Error_Code_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case PJRT_Error_Code_INTERNAL: return "INTERNAL";
    case PJRT_Error_Code_UNAVAILABLE: return "UNAVAILABLE";
    case PJRT_Error_Code_DATA_LOSS: return "DATA_LOSS";
    case PJRT_Error_Code_UNAUTHENTICATED: return "UNAUTHENTICATED";
  }
  return "<unknown code>";
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  if (status.ok()) return os << "OK";
  return os << ErrorCodeName(status.code) << ": " << status.message;
}

}  // namespace pjrt_conformance
