// Native flash attention for pjrtkit's CPU device: forward (online softmax over key blocks, no
// [T, S] matrix) and backward (recomputes probabilities from the saved log-sum-exp), in
// [batch, seq, heads, head_dim] layout with grouped key/value heads, causal and/or a local
// window (only the key blocks a query block reaches are visited), logits soft cap, and a key mask
// (one flag per batch element and key; the keys past a batch element's last kept key are not
// visited). A query row that attends no key gets output 0 and log-sum-exp -inf in the forward and
// sends nothing to dq/dk/dv in the backward: the caller gives such rows their meaning (native.py:
// the mean of every value).
//
// Work is split over (batch, kv head, query-block range) items on ParallelFor threads; each item
// packs its key/value head once as float32 and runs register-blocked, vectorised tile products.
// Compiled once per instruction set (kernels/native/simd.h); attention_ffi.cc dispatches.
#ifndef PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_KERNEL_H_
#define PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_KERNEL_H_

#include <cstdint>

#include "kernels/native/bfloat16.h"

namespace pjrtkit_kernels {

// Sizes, options and buffers of one attention call. q/k/v/out/dout have `type`; lse and the
// gradients are float32.
struct AttentionArgs {
  int64_t batch = 0, q_len = 0, heads = 0, head_dim = 0, kv_len = 0, kv_heads = 0;
  float scale = 1.f;
  bool causal = false;
  // Local window: query t attends keys t - window_left .. t + window_right (-1: no window; both
  // set or neither). The window (queries t > S - 1 + left) and the key mask may leave rows
  // without keys.
  int64_t window_left = -1, window_right = -1;
  float soft_cap = 0.f;  // > 0: logits become soft_cap * tanh(logits / soft_cap)
  // Key mask [batch or 1, kv_len] (nonzero: the key is attended), broadcast over heads and
  // queries; null: every key is. Row bi starts at key_mask + bi * key_mask_batch_stride
  // (the stride is 0 when one row serves the whole batch).
  const uint8_t* key_mask = nullptr;
  int64_t key_mask_batch_stride = 0;
  int64_t block_q = 64, block_k = 128;
  ElementType type = ElementType::kF32;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;          // forward output [B, T, H, D]
  float* lse = nullptr;         // forward output [B, H, T]
  const void* out_in = nullptr;   // backward inputs
  const float* lse_in = nullptr;
  const void* dout = nullptr;
  float* dq = nullptr;          // backward outputs
  float* dk = nullptr;
  float* dv = nullptr;
};

#define PJRTKIT_DECLARE_ATTENTION(isa)            \
  namespace isa {                                 \
  void AttentionForward(const AttentionArgs& a);  \
  void AttentionBackward(const AttentionArgs& a); \
  }

PJRTKIT_DECLARE_ATTENTION(avx512)
PJRTKIT_DECLARE_ATTENTION(avx2)
PJRTKIT_DECLARE_ATTENTION(generic)
#undef PJRTKIT_DECLARE_ATTENTION

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_KERNEL_H_
