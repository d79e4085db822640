// The PJRT C-API conformance suite on the sim device: CreatePjrtApi<sim::SimFactory>() linked
// in (flags: sim_conformance_main.h).
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/devices/sim/sim_conformance_main.h"
#include "xla_plugin/devices/sim/sim_factory.h"

int main(int argc, char** argv) {
  const PJRT_Api* api = pjrtkit::CreatePjrtApi<pjrtkit::sim::SimFactory>();
  return pjrtkit::sim::RunConformance(api, "sim_conformance_test", argc, argv);
}
