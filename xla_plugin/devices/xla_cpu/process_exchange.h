// ProcessExchange: how the CPU device's processes learn of each other through the framework's
// key-value store (XLA:CPU itself ignores node options and the store).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_PROCESS_EXCHANGE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_PROCESS_EXCHANGE_H_

#include <string>
#include <vector>

#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace xla_cpu {

// Each process puts "pjrtkit_version=<v>;devices=<n>" under "pjrtkit/xla_cpu/process/<index>",
// then reads every other process's entry.
class ProcessExchange {
 public:
  // The device count of every process, by process index. FAILED_PRECONDITION when another
  // process runs another pjrtkit version (named, with both versions); DEADLINE_EXCEEDED naming
  // the missing process when one has not created its client within `timeout_ms`; INVALID_ARGUMENT
  // for an entry pjrtkit did not write.
  static StatusOr<std::vector<int>> Run(const MultiProcess& job, int device_count,
                                        const std::string& version, int timeout_ms);

  // The entry of one process.
  static std::string Entry(const std::string& version, int device_count);
  // The key of process `index`.
  static std::string Key(int index);
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_PROCESS_EXCHANGE_H_
