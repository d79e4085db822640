// ScopedFlushDenormals: runs a scope with the CPU's flush-to-zero and denormals-are-zero modes on,
// as XLA:CPU runs its computations (see README.md, "Denormals").
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLUSH_DENORMALS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLUSH_DENORMALS_H_

#include <cstdint>

namespace pjrtkit {
namespace sim {

// Sets the calling thread's floating-point control register to flush denormal results to zero and
// read denormal operands as zero (x86-64: MXCSR FTZ and DAZ; AArch64: FPCR.FZ), and restores the
// previous value on destruction. Elsewhere it does nothing. Only this thread is affected.
class ScopedFlushDenormals {
 public:
  // Saves the control register and turns flushing on.
  ScopedFlushDenormals();
  // Restores the saved control register.
  ~ScopedFlushDenormals();

  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  uint64_t saved_ = 0;  // The control register's value before this scope.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLUSH_DENORMALS_H_
