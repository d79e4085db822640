// The functional probe of executables: compile the conformance suite's add-one program, query
// the loaded executable and its executable, the optimized program, serialize and load, execute
// (values checked) with and without an execute context carrying FFI user data, then delete and
// destroy.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_EXECUTABLES_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_EXECUTABLES_H_

// The PJRT C API and the recorder.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "tools/api_coverage/probe_recorder.h"

namespace api_coverage {

// Probes the executable slots of `client`, executing on `device`.
void ProbeExecutables(ProbeRecorder* probe, PJRT_Client* client, PJRT_Device* device);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_EXECUTABLES_H_
