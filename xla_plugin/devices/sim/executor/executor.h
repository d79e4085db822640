// Executor: runs a DeviceProgram on one device, on that device's queue thread.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_EXECUTOR_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_EXECUTOR_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/device_program.h"
#include "xla_plugin/devices/sim/runtime/rendezvous.h"
#include "xla_plugin/devices/sim/runtime/worker_pool.h"

namespace pjrtkit {
namespace sim {

// Runs a program's custom calls: the FFI handlers of the device's platform, which the client
// layer holds (sim_ffi_calls.h). Thread-safe.
class CustomCallRunner {
 public:
  virtual ~CustomCallRunner() = default;
  // Calls the handler of `params.target` with the operands' and results' device memory.
  virtual Status Call(const CustomCallParams& params, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results) const = 0;
};

// Where one device stands in an execution.
struct ExecutionPlace {
  int64_t replica = 0;           // Its replica.
  int64_t partition = 0;         // Its partition.
  int64_t num_participants = 1;  // Devices of the execution (num_replicas * num_partitions).
  // Shared by the execution's devices for collectives; may be null with one participant.
  Rendezvous* rendezvous = nullptr;
  // Runs the program's custom calls; null when the program has none.
  const CustomCallRunner* custom_calls = nullptr;
  // Helper threads that take parts of large fusions; null: everything on the calling thread.
  WorkerPool* workers = nullptr;
};

// Runs programs; stateless (every call gets what it needs).
class Executor {
 public:
  // Device memory one execution of `program` needs besides its arguments and results: the entry
  // computation's arena plus what its loops and branches need while they run.
  static int64_t ScratchBytes(const DeviceProgram& program);

  // Runs the entry computation of a program that passed ValidateProgram: `arguments[i]` holds
  // parameter i, `results[j]` receives result j (both dense row-major, of the entry's types),
  // `scratch` is ScratchBytes(program) bytes of device memory. Results never overlap arguments.
  // Errors: another participant failed (collectives), which the caller reports on every output.
  static Status Run(const DeviceProgram& program, const ExecutionPlace& place,
                    const std::vector<const void*>& arguments, const std::vector<void*>& results,
                    void* scratch);
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_EXECUTOR_EXECUTOR_H_
