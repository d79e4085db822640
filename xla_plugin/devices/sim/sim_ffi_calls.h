// SimFfiCalls: runs the custom calls of one execution on one sim device: an XLA FFI call frame
// over the operands' and results' device memory (host-addressable in the simulation), the handler
// registered for the target (SimFfiHandlers), and the execution's FFI user data
// (PJRT_ExecuteContext). Handlers reach back through pjrtkit's XLA FFI API table (below).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_CALLS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_CALLS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/executor/executor.h"
#include "xla_plugin/devices/sim/sim_ffi_handlers.h"

namespace pjrtkit {
namespace sim {

// What handlers get from the API table's functions: XLA_FFI_InvokeContext_Get (the execution's
// user data by FFI type id), XLA_FFI_DeviceOrdinal_Get (the device id), XLA_FFI_Error_Create /
// GetDetails / Destroy. The others answer UNIMPLEMENTED (Stream_Get: the sim has no stream;
// handlers run on the device's queue in program order), InvokeContext_FindExtension NOT_FOUND.
// Handlers must not return a future (XLA_FFI_Future_Create is UNIMPLEMENTED). Thread-safe; the
// handlers and the user data must outlive it.
class SimFfiCalls : public CustomCallRunner {
 public:
  SimFfiCalls(const SimFfiHandlers& handlers, std::map<int64_t, void*> user_data,
              int device_ordinal, std::string platform);

  // Calls the handler of `params.target` (NOT_FOUND when there is none) with the execute stage's
  // call frame: one buffer per operand and result (XLA data types, dims, device addresses), the
  // attributes in name order (scalars and strings). The handler's error becomes this status,
  // with its code, prefixed with "custom call @target: ".
  Status Call(const CustomCallParams& params, const std::vector<ArrayArg>& operands,
              const std::vector<ArrayResult>& results) const override;

  // The execution's user data of FFI type `type_id`, or nullptr.
  void* UserData(int64_t type_id) const;
  int device_ordinal() const { return device_ordinal_; }

 private:
  // Call's work; may throw (std::bad_alloc, a handler's exception).
  Status CallHandler(const CustomCallParams& params, const std::vector<ArrayArg>& operands,
                     const std::vector<ArrayResult>& results) const;

  const SimFfiHandlers& handlers_;
  std::map<int64_t, void*> user_data_;  // By FFI type id (borrowed data).
  int device_ordinal_;                  // The device's id.
  std::string platform_;                // For messages.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_CALLS_H_
