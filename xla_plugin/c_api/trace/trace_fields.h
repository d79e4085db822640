// The header-derived tables of PJRTKIT_TRACE: the slot list (PJRTKIT_TRACE_SLOTS), each slot's
// Args members with their direction (TraceFields<Args>), and enumerator names (TraceEnumName),
// generated at build time from pjrt_c_api.h by tools/pjrt_headers/gen_trace_fields.py.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_FIELDS_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_FIELDS_H_

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {
namespace trace {

// Which way a member of an Args struct carries data (the header's `// out`, `// in/out`).
enum class Direction { kIn, kOut, kInOut };

// TraceFields<Args>::Visit(v) calls v.Field / v.Array for every member of Args (generated).
template <typename Args>
struct TraceFields;

// The name of an enumerator of an enum without generated names: none.
template <typename E>
const char* TraceEnumName(E) {
  return nullptr;
}

#include "xla_plugin/c_api/trace/trace_fields.inc"

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_FIELDS_H_
