#include "xla_plugin/c_api/api_table.h"

// C++ standard library.
#include <cstdlib>

// pjrtkit.
#include "xla_plugin/c_api/trace/traced_api.h"

namespace pjrtkit {
namespace capi {

ApiTable::ApiTable(const FactoryEntryPoints& entry_points, const char* trace_setting,
                   void (*fill_traced)(PJRT_Api*), void (*at_exit)())
    : untraced_(MakePjrtApi(entry_points)),
      sink_(trace::TraceSink::FromSetting(trace_setting, trace::SlotNames())),
      api_(untraced_) {
  if (sink_ != nullptr) {
    fill_traced(&api_);
    std::atexit(at_exit);
  }
}

}  // namespace capi
}  // namespace pjrtkit
