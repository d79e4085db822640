// Argument checks of the native attention's XLA FFI handlers (attention_ffi.cc), shared by the
// plain handlers and the key-mask ones: each turns buffers and attributes into AttentionArgs, or
// returns InvalidArgument ("pjrtkit native dot_product_attention: ...") naming what is wrong.
#ifndef PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_CHECKS_H_
#define PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_CHECKS_H_

#include <cstdint>

#include "kernels/dot_product_attention/native/attention_kernel.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {

// The attributes every attention handler takes (native.py's `_attrs`).
struct AttentionAttrs {
  float scale = 1.f;
  int64_t causal = 0;
  int64_t block_q = 64;
  int64_t block_k = 128;
  int64_t window_left = -1;   // -1: no window (then window_right is -1 too)
  int64_t window_right = -1;
  float soft_cap = 0.f;       // 0: none
};

// Fills the sizes and options of `a` from query, key and value and `attrs`; checks them.
::xla::ffi::Error DescribeAttention(const ::xla::ffi::AnyBuffer& q, const ::xla::ffi::AnyBuffer& k,
                                    const ::xla::ffi::AnyBuffer& v, const AttentionAttrs& attrs,
                                    AttentionArgs* a);

// Checks `key_mask` is a bool (PRED) [batch or 1, kv_seq] buffer for the call `a` describes
// (DescribeAttention first) and points `a`'s key mask at it.
::xla::ffi::Error DescribeKeyMask(const ::xla::ffi::AnyBuffer& key_mask, AttentionArgs* a);

// Checks the forward's results: out of query's shape and dtype, lse float32 [batch, heads, q_seq].
::xla::ffi::Error CheckForwardResults(const ::xla::ffi::AnyBuffer& q,
                                      const ::xla::ffi::AnyBuffer& out,
                                      const ::xla::ffi::AnyBuffer& lse, const AttentionArgs& a);

// Checks the backward's other buffers against query, key and value: out and dout of query's shape
// and dtype, lse [batch, heads, q_seq], dq/dk/dv of query's/key's/value's shape.
::xla::ffi::Error CheckBackwardBuffers(const ::xla::ffi::AnyBuffer& q,
                                       const ::xla::ffi::AnyBuffer& k,
                                       const ::xla::ffi::AnyBuffer& v,
                                       const ::xla::ffi::AnyBuffer& out,
                                       const ::xla::ffi::AnyBuffer& lse,
                                       const ::xla::ffi::AnyBuffer& dout,
                                       const ::xla::ffi::AnyBuffer& dq,
                                       const ::xla::ffi::AnyBuffer& dk,
                                       const ::xla::ffi::AnyBuffer& dv, const AttentionArgs& a);

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_DOT_PRODUCT_ATTENTION_NATIVE_ATTENTION_CHECKS_H_
