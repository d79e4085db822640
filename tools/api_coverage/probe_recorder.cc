#include "tools/api_coverage/probe_recorder.h"

// POSIX.
#include <unistd.h>

// C++ standard library.
#include <string>

namespace api_coverage {
namespace {

// Flattens a message to one line without tabs.
std::string OneLine(std::string text) {
  for (char& c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';  // Tabs, newlines, bytes of binary data.
    if (c == '|') c = '/';                // Markdown table cells.
  }
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text;
}

// The name of an error code, as absl spells it.
std::string CodeName(PJRT_Error_Code code) {
  static const char* const kNames[] = {
      "OK",           "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS",   "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",   "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",      "DATA_LOSS",
      "UNAUTHENTICATED"};
  const int index = static_cast<int>(code);
  if (index >= 0 && index < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) {
    return kNames[index];
  }
  return "code " + std::to_string(index);
}

}  // namespace

void ProbeRecorder::Write(const std::string& line) {
  const std::string with_newline = line + "\n";
  ssize_t ignored = write(fd_, with_newline.data(), with_newline.size());
  (void)ignored;
}

void ProbeRecorder::Record(const std::string& name, const std::string& status,
                           const std::string& message) {
  Write("DONE\t" + name + "\t" + status + "\t" + OneLine(message));
}

void ProbeRecorder::Describe(PJRT_Error* error, std::string* status, std::string* message) {
  if (error == nullptr) {
    *status = "ok";
    return;
  }
  PROBE_ARGS(PJRT_Error_GetCode_Args, code);
  code.error = error;
  PJRT_Error* code_error = api_->PJRT_Error_GetCode(&code);
  PROBE_ARGS(PJRT_Error_Message_Args, text);
  text.error = error;
  api_->PJRT_Error_Message(&text);
  *message = std::string(text.message, text.message_size);
  if (code_error != nullptr) {
    *status = "error: (no code)";
  } else if (code.code == PJRT_Error_Code_UNIMPLEMENTED) {
    *status = "UNIMPLEMENTED";
  } else {
    *status = "error: " + CodeName(code.code);
  }
  PROBE_ARGS(PJRT_Error_Destroy_Args, destroy);
  destroy.error = error;
  api_->PJRT_Error_Destroy(&destroy);
  // Describing an error used the three PJRT_Error_* slots.
  Record("PJRT_Error_GetCode", code_error == nullptr ? "ok" : "error: (no code)", "");
  Record("PJRT_Error_Message", "ok", "");
  Record("PJRT_Error_Destroy", "ok", "");
}

bool ProbeRecorder::AwaitAndDestroy(PJRT_Event* event) {
  if (event == nullptr) return true;
  PROBE_ARGS(PJRT_Event_Await_Args, await);
  await.event = event;
  const bool ok = Call("PJRT_Event_Await", api_->PJRT_Event_Await, &await);
  PROBE_ARGS(PJRT_Event_Destroy_Args, destroy);
  destroy.event = event;
  Call("PJRT_Event_Destroy", api_->PJRT_Event_Destroy, &destroy);
  return ok;
}

bool ProbeRecorder::Read(PJRT_Buffer* buffer, float values[4]) {
  PROBE_ARGS(PJRT_Buffer_ToHostBuffer_Args, to_host);
  to_host.src = buffer;
  to_host.dst = values;
  to_host.dst_size = 4 * sizeof(float);
  return Call("PJRT_Buffer_ToHostBuffer", api_->PJRT_Buffer_ToHostBuffer, &to_host) &&
         AwaitAndDestroy(to_host.event);
}

void ProbeRecorder::DestroyBuffer(PJRT_Buffer* buffer) {
  PROBE_ARGS(PJRT_Buffer_Destroy_Args, destroy);
  destroy.buffer = buffer;
  Call("PJRT_Buffer_Destroy", api_->PJRT_Buffer_Destroy, &destroy);
}

}  // namespace api_coverage
