// The plugin's one exported symbol: GetPjrtApi, the PJRT_Api table of the reference device.
// A device team replaces XlaCpuFactory with its own factory (see xla_plugin/client/plugin_factory.h).
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  return pjrtkit::CreatePjrtApi<pjrtkit::xla_cpu::XlaCpuFactory>();
}
