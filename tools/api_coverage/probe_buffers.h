// The functional probe of buffers: from host data (with its done event), queries, the ready
// event, external references, reads to the host, copies to a device and a memory, uninitialized
// buffers, delete and destroy.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_BUFFERS_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_BUFFERS_H_

// The PJRT C API and the recorder.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "tools/api_coverage/probe_recorder.h"

namespace api_coverage {

// Probes the buffer slots on `device` (and `memory`, when not null) of `client`.
void ProbeBuffers(ProbeRecorder* probe, PJRT_Client* client, PJRT_Device* device,
                  PJRT_Memory* memory);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_BUFFERS_H_
