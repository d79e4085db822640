// MemoryCounter: pjrtkit's own accounting of the bytes live buffers hold on one device.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_MEMORY_COUNTER_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_MEMORY_COUNTER_H_

#include <atomic>
#include <cstdint>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Counts allocations of one device (thread-safe and lock-free: every buffer a program creates
// or frees passes here). XLA:CPU reports no memory statistics (PJRT_Device_MemoryStats is
// UNIMPLEMENTED there), so buffers report themselves here when they are created and when their
// memory goes (Delete, donation, destruction). A Snapshot taken while buffers come and go may
// mix counters from slightly different moments; each counter is exact on its own.
class MemoryCounter {
 public:
  // Records a new buffer of `bytes`.
  void Allocate(int64_t bytes);
  // Records that a buffer of `bytes` released its memory.
  void Free(int64_t bytes);
  // bytes_in_use, peak_bytes_in_use, num_allocs (allocations ever made) and largest_alloc_size.
  MemoryStats Snapshot() const;
  // Starts the peak over from what is in use now (PJRT_Device_ClearMemoryStats).
  void ClearPeak();

 private:
  // Raises `value` to at least `candidate`.
  static void RaiseTo(std::atomic<int64_t>& value, int64_t candidate);

  std::atomic<int64_t> bytes_in_use_{0};   // Bytes held by live buffers.
  std::atomic<int64_t> peak_bytes_{0};     // Largest bytes_in_use_ seen.
  std::atomic<int64_t> num_allocs_{0};     // Buffers ever counted.
  std::atomic<int64_t> largest_alloc_{0};  // Largest single buffer.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_MEMORY_COUNTER_H_
