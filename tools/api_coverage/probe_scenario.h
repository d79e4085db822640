// The functional probe's scenario: initializes the plugin, creates a client with the given
// options, queries it, its first addressable device and that device's default memory, then runs
// the buffer, executable and topology probes and destroys the client.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_SCENARIO_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_SCENARIO_H_

// C++ standard library.
#include <vector>

// The PJRT C API, the create options and the recorder.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "tools/api_coverage/functional_probe.h"
#include "tools/api_coverage/probe_recorder.h"

namespace api_coverage {

// Runs the whole scenario through `probe` (in the probe child).
void RunScenario(ProbeRecorder* probe, const std::vector<CreateOption>& options);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_SCENARIO_H_
