// PJRT_Extension_Type_Profiler, forwarded: the struct holds the inner plugin's PLUGIN_Profiler_Api
// (which has its own error type and no PJRT handles), so it is used as it is.
#include "xla/pjrt/c/pjrt_c_api_profiler_extension.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {

PJRT_Extension_Base* ForwardProfiler(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner =
      FindInner(PJRT_Extension_Type_Profiler, PJRT_Profiler_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  static PJRT_Profiler_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
