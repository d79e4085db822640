// CpuFeatures: which of the native kernels' instruction-set variants this CPU runs.
#ifndef PJRTKIT_KERNELS_NATIVE_CPU_FEATURES_H_
#define PJRTKIT_KERNELS_NATIVE_CPU_FEATURES_H_

namespace pjrtkit_kernels {

enum class Isa { kGeneric, kAvx2, kAvx512 };

class CpuFeatures {
 public:
  // The widest variant supported: AVX-512 (F, BW, VL, DQ), else AVX2 with FMA, else generic.
  static Isa Best();

  // Whether the avx512 variant may use AMX bfloat16 tile products (kernels/native/amx.h): the
  // CPU has AMX-TILE and AMX-BF16, the OS saves tile state (XCR0 bits 17 and 18), Linux granted
  // this process the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM; refused, for one, when a
  // thread's signal stack is too small for it), and PJRTKIT_KERNELS_AMX is not "0". Probed once
  // per process (the grant is the process's).
  static bool AmxBf16();

  // Of one function's three variants (its avx512::, avx2:: and generic:: definitions), the one
  // this CPU runs.
  template <typename Fn>
  static Fn Pick(Fn avx512, Fn avx2, Fn generic) {
    switch (Best()) {
      case Isa::kAvx512:
        return avx512;
      case Isa::kAvx2:
        return avx2;
      default:
        return generic;
    }
  }
};

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_NATIVE_CPU_FEATURES_H_
