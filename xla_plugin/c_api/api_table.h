// ApiTable: the PJRT_Api a plugin hands out, built once by CreatePjrtApi<Factory>() (a
// function-local static, api.h). With PJRTKIT_TRACE off it is exactly MakePjrtApi()'s table;
// with it on, every slot is the traced wrapper of that table's entry point
// (trace/traced_api.h), and the TraceSink the wrappers write to is owned here.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_API_TABLE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_API_TABLE_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/make_api.h"
#include "xla_plugin/c_api/trace/trace_sink.h"

namespace pjrtkit {
namespace capi {

class ApiTable {
 public:
  // The table of `entry_points` (MakePjrtApi). `trace_setting` is PJRTKIT_TRACE's value (null:
  // unset; see TraceSink::FromSetting). When it turns tracing on, `fill_traced` points every
  // slot of api() at its traced wrapper and `at_exit` (which writes the summary) is registered
  // with std::atexit.
  ApiTable(const FactoryEntryPoints& entry_points, const char* trace_setting,
           void (*fill_traced)(PJRT_Api*), void (*at_exit)());
  ApiTable(const ApiTable&) = delete;
  ApiTable& operator=(const ApiTable&) = delete;

  // The table handed to the framework.
  const PJRT_Api* api() const { return &api_; }
  // The untraced table (equal to api() when tracing is off).
  const PJRT_Api& untraced() const { return untraced_; }
  // The trace sink, or null when tracing is off.
  trace::TraceSink* sink() const { return sink_.get(); }

 private:
  const PJRT_Api untraced_;
  const std::unique_ptr<trace::TraceSink> sink_;
  PJRT_Api api_;
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_API_TABLE_H_
