#include "kernels/native/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pjrtkit_kernels {
namespace {

#if defined(__linux__) && defined(__x86_64__)
constexpr int kArchReqXcompPerm = 0x1023;  // arch_prctl: ask for an extended state component
constexpr int kXfeatureTileData = 18;      // XSAVE component of the AMX tile registers

bool ProbeAmxBf16() {
  const char* env = std::getenv("PJRTKIT_KERNELS_AMX");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  if (Isa::kAvx512 != CpuFeatures::Best()) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = edx & (1u << 22), amx_tile = edx & (1u << 24);
  if (!amx_bf16 || !amx_tile) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const unsigned tile_state = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  if ((xcr0_lo & tile_state) != tile_state) return false;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) == 0;
}
#else
bool ProbeAmxBf16() { return false; }
#endif

}  // namespace

Isa CpuFeatures::Best() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kGeneric;
}

bool CpuFeatures::AmxBf16() {
  static const bool amx = ProbeAmxBf16();
  return amx;
}

}  // namespace pjrtkit_kernels

// For Python (kernels/native/library.py amx_bf16): 1 when CpuFeatures::AmxBf16(), else 0.
extern "C" __attribute__((visibility("default"))) int PjrtkitKernelsAmxBf16() {
  return pjrtkit_kernels::CpuFeatures::AmxBf16() ? 1 : 0;
}
