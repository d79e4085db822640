// ProcessPlacement: how a wrapped client takes part in a multi-process job.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROCESS_PLACEMENT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROCESS_PLACEMENT_H_

#include <vector>

#include "xla_plugin/client/multi_process.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Two ways, one per kind of inner plugin:
//  - the inner plugin builds the job itself (XLA:GPU: NCCL across processes): `forward` carries
//    the node options and the framework's store to its PJRT_Client_Create, and each device's
//    process and addressability are what the inner plugin reports;
//  - pjrtkit places the devices (XLA:CPU, which knows nothing of other processes): the inner
//    client is created with every process's devices, `device_process[id]` names the process of
//    device `id`, and only this process's (`process_index`) are addressable.
// The default: one process, everything the inner plugin reports.
struct ProcessPlacement {
  MultiProcess forward;             // Given to the inner plugin (default: nothing).
  int process_index = -1;           // This process when pjrtkit places devices; -1: the inner's.
  std::vector<int> device_process;  // Process of each device id when pjrtkit places them.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROCESS_PLACEMENT_H_
