// ProbeRecorder: how the functional probe's child calls PJRT_Api slots and reports what each
// answered to the parent, and the macros the per-area probes (probe_scenario, probe_buffers,
// probe_executables, probe_topologies) call slots with.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_RECORDER_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_RECORDER_H_

#include <cstring>
#include <string>

#include "xla/pjrt/c/pjrt_c_api.h"

// A zero-filled Args struct of type T named `var`, with its struct_size set.
#define PROBE_ARGS(T, var)      \
  T var;                        \
  std::memset(&var, 0, sizeof(var)); \
  var.struct_size = T##_STRUCT_SIZE

// Calls `slot` with `args` through the ProbeRecorder* named `probe` and records the result under
// the slot's name; true when it returned OK.
#define PROBE_CALL(slot, args) probe->Call(#slot, probe->api()->slot, &(args))
// The same, recorded under "slot (what)".
#define PROBE_CALL_AS(slot, what, args) \
  probe->Call(#slot " (" what ")", probe->api()->slot, &(args))

namespace api_coverage {

// Runs in the probe child: calls slots of `api` and writes "RUN\tslot" before and
// "DONE\tslot\tstatus\tmsg" after every call to `fd`, where RunFunctionalProbe reads them.
class ProbeRecorder {
 public:
  ProbeRecorder(const PJRT_Api* api, int fd) : api_(api), fd_(fd) {}

  // The plugin.
  const PJRT_Api* api() const { return api_; }

  // Records `status`/`message` for `name`.
  void Record(const std::string& name, const std::string& status, const std::string& message);

  // Calls `fn` with `args` and records what it answered under `name`; true when it returned OK.
  template <typename Args>
  bool Call(const std::string& name, PJRT_Error* (*fn)(Args*), Args* args) {
    if (fn == nullptr) return false;  // The zeroed-args probe reports it NULL.
    Write("RUN\t" + name);
    std::string status, message;
    Describe(fn(args), &status, &message);
    Record(name, status, message);
    return status == "ok";
  }

  // Awaits and destroys `event` (recorded as PJRT_Event_Await / _Destroy); true when it
  // completed OK.
  bool AwaitAndDestroy(PJRT_Event* event);

  // Reads `buffer` (f32[4]) into `values`; recorded as PJRT_Buffer_ToHostBuffer.
  bool Read(PJRT_Buffer* buffer, float values[4]);

  // Destroys `buffer`; recorded as PJRT_Buffer_Destroy.
  void DestroyBuffer(PJRT_Buffer* buffer);

 private:
  // Writes one line to the parent.
  void Write(const std::string& line);

  // The code and message of `error` (destroyed); "ok" for nullptr.
  void Describe(PJRT_Error* error, std::string* status, std::string* message);

  const PJRT_Api* api_;  // The plugin.
  int fd_;               // Where results go.
};

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_RECORDER_H_
