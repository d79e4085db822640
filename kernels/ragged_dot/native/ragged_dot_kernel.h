// Native ragged_dot for pjrtkit's CPU device: grouped matrix products over runs of rows.
//
// Two products cover the forward and the gradient of lhs [m, k] x rhs [g, k, n] (or [g, n, k]):
//   rows product:   out[r] = x[r] @ W_g for the rows r of group g (forward: x = lhs, W = rhs;
//                   dlhs: x = dout, W = rhs[g]^T), rows of no group zero;
//   groups product: out[g] = x[rows of g]^T @ y[rows of g] (drhs), zero for an empty group.
// Both are blocked GEMMs: operands packed as float32 panels (bfloat16 widened while packing),
// a register-tiled micro-kernel, work items (group, row or column tiles) on ParallelFor
// threads. Compiled once per instruction set (kernels/native/simd.h); ragged_dot_ffi.cc
// dispatches. With `amx` set (CpuFeatures::AmxBf16), the avx512 variant computes products of two
// bfloat16 operands on AMX tiles instead (ragged_dot_amx.cc): bfloat16 panels, float32 sums.
#ifndef PJRTKIT_KERNELS_RAGGED_DOT_NATIVE_RAGGED_DOT_KERNEL_H_
#define PJRTKIT_KERNELS_RAGGED_DOT_NATIVE_RAGGED_DOT_KERNEL_H_

#include <cstdint>

#include "kernels/native/bfloat16.h"

namespace pjrtkit_kernels {

// The rows [start[g], end[g]) of each local group (ascending, within [0, rows)).
struct GroupRows {
  int64_t groups = 0;
  const int64_t* start = nullptr;
  const int64_t* end = nullptr;
};

// out [rows, cols] = x [rows, depth] times each row's group matrix of w: w is
// [groups, depth, cols], or [groups, cols, depth] when `w_transposed`.
struct RaggedRowsArgs {
  int64_t rows = 0, depth = 0, cols = 0;
  GroupRows groups;
  ElementType x_type = ElementType::kF32, w_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  const void* x = nullptr;
  const void* w = nullptr;
  bool w_transposed = false;
  void* out = nullptr;
  bool amx = false;  // bfloat16 x and w on AMX tiles (the avx512 variant; others ignore it)
};

// out [groups, x_cols, y_cols]: out[g] = x[rows of g]^T y[rows of g]; x [rows, x_cols],
// y [rows, y_cols].
struct RaggedGroupsArgs {
  int64_t rows = 0, x_cols = 0, y_cols = 0;
  GroupRows groups;
  ElementType x_type = ElementType::kF32, y_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  const void* x = nullptr;
  const void* y = nullptr;
  void* out = nullptr;
  bool amx = false;  // bfloat16 x and y on AMX tiles (the avx512 variant; others ignore it)
};

#define PJRTKIT_DECLARE_RAGGED_DOT(isa)                \
  namespace isa {                                      \
  void RaggedRowsProduct(const RaggedRowsArgs& a);     \
  void RaggedGroupsProduct(const RaggedGroupsArgs& a); \
  }

PJRTKIT_DECLARE_RAGGED_DOT(avx512)
PJRTKIT_DECLARE_RAGGED_DOT(avx2)
PJRTKIT_DECLARE_RAGGED_DOT(generic)
#undef PJRTKIT_DECLARE_RAGGED_DOT

namespace avx512 {
// The products of bfloat16 operands on AMX tiles, which RaggedRowsProduct and
// RaggedGroupsProduct call when `amx` is set; RaggedRowsProductAmx leaves the rows outside every
// group to its caller. Only where CpuFeatures::AmxBf16().
void RaggedRowsProductAmx(const RaggedRowsArgs& a);
void RaggedGroupsProductAmx(const RaggedGroupsArgs& a);
}  // namespace avx512

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_RAGGED_DOT_NATIVE_RAGGED_DOT_KERNEL_H_
