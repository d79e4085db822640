// LoadedExecutable: a compiled program loaded onto devices, ready to run.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_LOADED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_LOADED_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/execute_context.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {

class Device;

// How to run a LoadedExecutable.
struct ExecuteOptions {
  // Identifies one launch across the devices of a multi-device program.
  int launch_id = 0;
  // Argument indices that must not be donated even if the program allows it.
  std::set<int64_t> non_donatable_input_indices;
  // For a single-device ("portable") program: the device to run on; nullptr means the devices
  // the program was loaded on.
  Device* execute_device = nullptr;
  // When true, the caller wants one completion event per device.
  bool want_completion_events = false;
  // Per-execution data (PJRT_ExecuteContext), owned by the caller; nullptr when none was given.
  // Valid while Execute runs: a device whose FFI handlers read the entries after Execute returns
  // copies them (the reference device forwards them into an inner context it keeps alive until
  // the execution completes).
  const ExecuteContext* context = nullptr;
};

// What an execution produced.
struct ExecuteResult {
  // outputs[d][i]: output i on device d (the order of the argument lists).
  std::vector<std::vector<std::unique_ptr<Buffer>>> outputs;
  // completion[d]: ready when device d has finished (filled when asked for).
  std::vector<std::shared_ptr<Event>> completion;
};

// The logical place of one device in an execution (PJRT_LogicalDeviceIds).
struct LogicalDeviceId {
  int replica = 0;    // Replica index.
  int partition = 0;  // Partition index.
};

// A program bound to devices.
class LoadedExecutable {
 public:
  virtual ~LoadedExecutable() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // The device-independent executable.
  virtual std::shared_ptr<Executable> executable() const = 0;
  // The devices the program runs on, in argument-list order.
  virtual const std::vector<Device*>& addressable_devices() const = 0;
  // Releases the loaded program; executing it afterwards is an error.
  virtual void Delete() = 0;
  // True after Delete().
  virtual bool IsDeleted() const = 0;
  // Runs the program: `arguments[d]` are the argument buffers for device d. The caller has run
  // the checks of call_checks.h (the C layer does): the executable is not deleted, the number of
  // lists is CheckExecuteDevices's, every argument is live and of this client.
  virtual StatusOr<ExecuteResult> Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                          const ExecuteOptions& options) = 0;
  // Execute, filling `*result`, whose vectors the caller may keep from one call to the next (it
  // empties them in between): a device that overrides this can reuse their storage, which saves
  // heap allocations on the execution hot path. The default moves Execute's result in.
  virtual Status ExecuteInto(const std::vector<std::vector<Buffer*>>& arguments,
                             const ExecuteOptions& options, ExecuteResult* result) {
    StatusOr<ExecuteResult> executed = Execute(arguments, options);
    if (!executed.ok()) return executed.status();
    *result = std::move(executed).value();
    return OkStatus();
  }
  // The replica and partition of each of addressable_devices(), in that order
  // (PJRT_LoadedExecutable_AddressableDeviceLogicalIds); UNIMPLEMENTED unless the device knows.
  virtual StatusOr<std::vector<LogicalDeviceId>> addressable_device_logical_ids() const {
    return Unimplemented(
        "LoadedExecutable::addressable_device_logical_ids is not implemented by this device");
  }
  // The device assignment as a serialized xla.DeviceAssignmentProto.
  virtual StatusOr<std::string> SerializedDeviceAssignment() const {
    return Unimplemented(
        "LoadedExecutable::SerializedDeviceAssignment is not implemented by this device");
  }
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_LOADED_EXECUTABLE_H_
