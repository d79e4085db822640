// The PJRT C-API conformance suite on the runtime-only test device (runtime_only_factory.h):
// CreatePjrtApi<sim::RuntimeOnlyFactory>() linked in (flags: ../sim_conformance_main.h).
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/devices/sim/sim_conformance_main.h"
#include "xla_plugin/devices/sim/testing/runtime_only_factory.h"

int main(int argc, char** argv) {
  const PJRT_Api* api = pjrtkit::CreatePjrtApi<pjrtkit::sim::RuntimeOnlyFactory>();
  return pjrtkit::sim::RunConformance(api, "runtime_only_conformance_test", argc, argv);
}
