// XLA FFI handlers of the native attention: PjrtkitKernelsAttentionFwd / ...Bwd, and
// PjrtkitKernelsAttentionFwdKeyMask / ...BwdKeyMask, which take a key mask (bool
// [batch or 1, kv_seq]) after query, key and value (before out in the backward). The plain
// handlers keep their names and signatures, so exported programs calling them still run.
//
// Decodes buffers and attributes only (nothing newer than XLA FFI 0.2, which pjrtkit's
// reference device declares), checks them (attention_checks.h) and calls the instruction-set
// variant the CPU runs.
#include <cstdint>

#include "kernels/dot_product_attention/native/attention_checks.h"
#include "kernels/dot_product_attention/native/attention_kernel.h"
#include "kernels/native/cpu_features.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

// The forward of both handlers; `key_mask` null: no key mask.
ffi::Error Forward(const ffi::AnyBuffer& q, const ffi::AnyBuffer& k, const ffi::AnyBuffer& v,
                   const ffi::AnyBuffer* key_mask, ffi::AnyBuffer out, ffi::AnyBuffer lse,
                   const AttentionAttrs& attrs) {
  AttentionArgs a;
  if (ffi::Error e = DescribeAttention(q, k, v, attrs, &a); e.failure()) return e;
  if (key_mask != nullptr) {
    if (ffi::Error e = DescribeKeyMask(*key_mask, &a); e.failure()) return e;
  }
  if (ffi::Error e = CheckForwardResults(q, out, lse, a); e.failure()) return e;
  a.q = q.untyped_data();
  a.k = k.untyped_data();
  a.v = v.untyped_data();
  a.out = out.untyped_data();
  a.lse = static_cast<float*>(lse.untyped_data());
  CpuFeatures::Pick(avx512::AttentionForward, avx2::AttentionForward,
                    generic::AttentionForward)(a);
  return ffi::Error::Success();
}

// The backward of both handlers; `key_mask` null: no key mask.
ffi::Error Backward(const ffi::AnyBuffer& q, const ffi::AnyBuffer& k, const ffi::AnyBuffer& v,
                    const ffi::AnyBuffer* key_mask, const ffi::AnyBuffer& out,
                    const ffi::AnyBuffer& lse, const ffi::AnyBuffer& dout, ffi::AnyBuffer dq,
                    ffi::AnyBuffer dk, ffi::AnyBuffer dv, const AttentionAttrs& attrs) {
  AttentionArgs a;
  if (ffi::Error e = DescribeAttention(q, k, v, attrs, &a); e.failure()) return e;
  if (key_mask != nullptr) {
    if (ffi::Error e = DescribeKeyMask(*key_mask, &a); e.failure()) return e;
  }
  if (ffi::Error e = CheckBackwardBuffers(q, k, v, out, lse, dout, dq, dk, dv, a); e.failure()) {
    return e;
  }
  a.q = q.untyped_data();
  a.k = k.untyped_data();
  a.v = v.untyped_data();
  a.out_in = out.untyped_data();
  a.lse_in = static_cast<const float*>(lse.untyped_data());
  a.dout = dout.untyped_data();
  a.dq = static_cast<float*>(dq.untyped_data());
  a.dk = static_cast<float*>(dk.untyped_data());
  a.dv = static_cast<float*>(dv.untyped_data());
  CpuFeatures::Pick(avx512::AttentionBackward, avx2::AttentionBackward,
                    generic::AttentionBackward)(a);
  return ffi::Error::Success();
}

ffi::Error AttentionFwd(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v,
                        ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::AnyBuffer> lse,
                        float scale, int64_t causal, int64_t block_q, int64_t block_k,
                        int64_t window_left, int64_t window_right, float soft_cap) {
  return Forward(q, k, v, nullptr, *out, *lse,
                 {scale, causal, block_q, block_k, window_left, window_right, soft_cap});
}

ffi::Error AttentionFwdKeyMask(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v,
                               ffi::AnyBuffer key_mask, ffi::Result<ffi::AnyBuffer> out,
                               ffi::Result<ffi::AnyBuffer> lse, float scale, int64_t causal,
                               int64_t block_q, int64_t block_k, int64_t window_left,
                               int64_t window_right, float soft_cap) {
  return Forward(q, k, v, &key_mask, *out, *lse,
                 {scale, causal, block_q, block_k, window_left, window_right, soft_cap});
}

ffi::Error AttentionBwd(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v, ffi::AnyBuffer out,
                        ffi::AnyBuffer lse, ffi::AnyBuffer dout, ffi::Result<ffi::AnyBuffer> dq,
                        ffi::Result<ffi::AnyBuffer> dk, ffi::Result<ffi::AnyBuffer> dv,
                        float scale, int64_t causal, int64_t block_q, int64_t block_k,
                        int64_t window_left, int64_t window_right, float soft_cap) {
  return Backward(q, k, v, nullptr, out, lse, dout, *dq, *dk, *dv,
                  {scale, causal, block_q, block_k, window_left, window_right, soft_cap});
}

ffi::Error AttentionBwdKeyMask(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v,
                               ffi::AnyBuffer key_mask, ffi::AnyBuffer out, ffi::AnyBuffer lse,
                               ffi::AnyBuffer dout, ffi::Result<ffi::AnyBuffer> dq,
                               ffi::Result<ffi::AnyBuffer> dk, ffi::Result<ffi::AnyBuffer> dv,
                               float scale, int64_t causal, int64_t block_q, int64_t block_k,
                               int64_t window_left, int64_t window_right, float soft_cap) {
  return Backward(q, k, v, &key_mask, out, lse, dout, *dq, *dk, *dv,
                  {scale, causal, block_q, block_k, window_left, window_right, soft_cap});
}

}  // namespace
}  // namespace pjrtkit_kernels

// The exported handler symbols (see layer_norm_ffi.cc). Forward: q, k, v[, key_mask] -> out, lse;
// backward: q, k, v[, key_mask], out, lse, dout -> dq, dk, dv (float32). All buffers are decoded
// as AnyBuffer: attention_checks.cc checks their types, with messages of its own.

// The attributes every handler takes, in AttentionAttrs' order.
#define PJRTKIT_ATTENTION_ATTRIBUTES \
  .Attr<float>("scale")              \
      .Attr<int64_t>("causal")       \
      .Attr<int64_t>("block_q")      \
      .Attr<int64_t>("block_k")      \
      .Attr<int64_t>("window_left")  \
      .Attr<int64_t>("window_right") \
      .Attr<float>("soft_cap")

#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionFwd, pjrtkit_kernels::AttentionFwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  PJRTKIT_ATTENTION_ATTRIBUTES);

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionFwdKeyMask,
                              pjrtkit_kernels::AttentionFwdKeyMask,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  PJRTKIT_ATTENTION_ATTRIBUTES);

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionBwd, pjrtkit_kernels::AttentionBwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  PJRTKIT_ATTENTION_ATTRIBUTES);

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionBwdKeyMask,
                              pjrtkit_kernels::AttentionBwdKeyMask,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  PJRTKIT_ATTENTION_ATTRIBUTES);
#pragma GCC visibility pop
#undef PJRTKIT_ATTENTION_ATTRIBUTES
