// TraceSink: where PJRTKIT_TRACE lines go (stderr or a file opened for appending), the handle
// ids they use and the per-slot counters of the summary. Owned by the ApiTable it traces (a
// function-local static), never process-wide. Thread-safe: callers hold lock() while they name
// handles and write a line; each line is one write(2).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_SINK_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_SINK_H_

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/trace/handle_ids.h"

namespace pjrtkit {
namespace capi {
namespace trace {

// Every trace line starts with this.
inline constexpr const char kLinePrefix[] = "pjrtkit-trace ";

class TraceSink {
 public:
  // The sink PJRTKIT_TRACE's `value` asks for, tracing the slots `slot_names` (by index): null
  // when `value` is null, empty or "0" (tracing off); "1": stderr; anything else: the file of
  // that path, opened for appending (created when missing). A file that cannot be opened leaves
  // tracing off, said once on stderr.
  static std::unique_ptr<TraceSink> FromSetting(const char* value,
                                                std::vector<std::string> slot_names);

  // Writes to `fd` (closed by the destructor when `owns_fd`).
  TraceSink(int fd, bool owns_fd, std::vector<std::string> slot_names);
  ~TraceSink();
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  // Held while a call's line is made and written (ids() and WriteLocked() need it).
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mu_); }
  HandleIds& ids() { return ids_; }
  // The name of slot `slot`.
  const std::string& slot_name(size_t slot) const { return slots_[slot].name; }
  // Writes kLinePrefix + `line` + "\n" and counts one call of `slot` taking `micros`.
  void WriteLocked(size_t slot, const std::string& line, bool error, double micros);

  // The summary: a header line, then one line per slot called (most total time first):
  //   pjrtkit-trace summary PJRT_Foo calls=N errors=E total_us=T mean_us=M
  std::string Summary();
  // Writes Summary() (ApiTable calls it at process exit).
  void WriteSummary();

 private:
  struct SlotCounters {
    std::string name;
    int64_t calls = 0;
    int64_t errors = 0;
    double total_us = 0;
  };
  void WriteAll(const std::string& text);

  std::mutex mu_;
  const int fd_;
  const bool owns_fd_;
  HandleIds ids_;                    // Guarded by mu_.
  std::vector<SlotCounters> slots_;  // By slot index; guarded by mu_.
};

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACE_SINK_H_
