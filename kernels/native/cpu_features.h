// CpuFeatures: which of the native kernels' instruction-set variants this CPU runs.
#ifndef PJRTKIT_KERNELS_NATIVE_CPU_FEATURES_H_
#define PJRTKIT_KERNELS_NATIVE_CPU_FEATURES_H_

namespace pjrtkit_kernels {

enum class Isa { kGeneric, kAvx2, kAvx512 };

class CpuFeatures {
 public:
  // The widest variant supported: AVX-512 (F, BW, VL, DQ), else AVX2 with FMA, else generic.
  static Isa Best();

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
