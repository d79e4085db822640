// The functional probe of topologies: the client's topology description (queries, serialize,
// deserialize), ahead-of-time compilation for it (PJRT_Compile), and a topology made without a
// client.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_TOPOLOGIES_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_TOPOLOGIES_H_

// The PJRT C API and the recorder.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "tools/api_coverage/probe_recorder.h"

namespace api_coverage {

// Probes the topology slots, starting from `client`'s topology.
void ProbeTopologies(ProbeRecorder* probe, PJRT_Client* client);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_TOPOLOGIES_H_
