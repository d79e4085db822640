// The plugin's one exported symbol: GetPjrtApi, the PJRT_Api table of pjrtkit's devices.
// PjrtkitFactory chooses the xla_cpu or xla_gpu device per client (devices/selection); a device
// team replaces it with its own factory (see xla_plugin/client/plugin_factory.h).
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/devices/selection/pjrtkit_factory.h"

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  return pjrtkit::CreatePjrtApi<pjrtkit::selection::PjrtkitFactory>();
}
