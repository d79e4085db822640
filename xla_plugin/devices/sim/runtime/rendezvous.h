// INTERFACE STUB: the runtime agent's rendezvous.h replaces this file at merge.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace sim {

class Rendezvous {
 public:
  explicit Rendezvous(int participants);
  StatusOr<std::vector<const void*>> Publish(int rank, int64_t step, const void* data);
  Status Barrier(int rank, int64_t step);
  void Abort(Status status);
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_RUNTIME_RENDEZVOUS_H_
