// Native layer norm (and RMS norm) over the last axis of a [rows, channels] array, forward and
// backward, multithreaded over rows (ParallelFor) and vectorised over channels.
//
// Compiled once per instruction set (see kernels/native/simd.h); the FFI handlers
// (layer_norm_ffi.cc) call the variant the CPU supports.
#ifndef PJRTKIT_KERNELS_LAYER_NORM_NATIVE_LAYER_NORM_KERNEL_H_
#define PJRTKIT_KERNELS_LAYER_NORM_NATIVE_LAYER_NORM_KERNEL_H_

#include <cstdint>

#include "kernels/native/bfloat16.h"

namespace pjrtkit_kernels {

// Buffers and sizes of one layer norm call. Statistics, scale, offset and the parameter
// gradients are float32; x, y, dy and dx have `type`. The backward recomputes each row's
// statistics from x (as the forward computes them) instead of reading mean/rstd.
struct LayerNormArgs {
  int64_t rows = 0;
  int64_t channels = 0;
  float epsilon = 0.f;
  bool subtract_mean = true;
  bool param_grads = true;  // backward: compute dscale/doffset (else they are written as zeros)
  ElementType type = ElementType::kF32;
  const void* x = nullptr;
  const float* scale = nullptr;   // [channels]
  const float* offset = nullptr;  // [channels] (forward)
  void* y = nullptr;              // forward output
  float* mean = nullptr;          // [rows]: forward output
  float* rstd = nullptr;          // [rows]: forward output
  const void* dy = nullptr;       // backward input
  void* dx = nullptr;             // backward outputs
  float* dscale = nullptr;
  float* doffset = nullptr;
};

#define PJRTKIT_DECLARE_LAYER_NORM(isa)           \
  namespace isa {                                 \
  void LayerNormForward(const LayerNormArgs& a);  \
  void LayerNormBackward(const LayerNormArgs& a); \
  }

PJRTKIT_DECLARE_LAYER_NORM(avx512)
PJRTKIT_DECLARE_LAYER_NORM(avx2)
PJRTKIT_DECLARE_LAYER_NORM(generic)
#undef PJRTKIT_DECLARE_LAYER_NORM

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_LAYER_NORM_NATIVE_LAYER_NORM_KERNEL_H_
