#include "xla_plugin/devices/sim/kernels/flush_denormals.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace pjrtkit {
namespace sim {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kFlushToZero = 1u << 15;     // MXCSR.FTZ
constexpr uint32_t kDenormalsAreZero = 1u << 6;  // MXCSR.DAZ
#elif defined(__aarch64__)
constexpr uint64_t kFlushToZero = 1ull << 24;  // FPCR.FZ
#endif

}  // namespace

ScopedFlushDenormals::ScopedFlushDenormals() {
#if defined(__x86_64__)
  const uint32_t csr = _mm_getcsr();
  saved_ = csr;
  _mm_setcsr(csr | kFlushToZero | kDenormalsAreZero);
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  saved_ = fpcr;
  fpcr |= kFlushToZero;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
}

ScopedFlushDenormals::~ScopedFlushDenormals() {
#if defined(__x86_64__)
  _mm_setcsr(static_cast<uint32_t>(saved_));
#elif defined(__aarch64__)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_));
#endif
}

}  // namespace sim
}  // namespace pjrtkit
