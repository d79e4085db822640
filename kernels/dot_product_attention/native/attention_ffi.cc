// XLA FFI handlers of the native attention: PjrtkitKernelsAttentionFwd / ...Bwd.
//
// Decodes buffers and attributes only (nothing newer than XLA FFI 0.2, which pjrtkit's
// reference device declares), checks them and calls the instruction-set variant the CPU runs.
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/dot_product_attention/native/attention_kernel.h"
#include "kernels/native/cpu_features.h"
#include "kernels/native/ffi_checks.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

constexpr char kOp[] = "dot_product_attention";

ffi::Error Invalid(const std::string& what) { return InvalidArgument(kOp, what); }

// Fills the sizes and options of `a` from q/k/v and the attributes; checks them.
ffi::Error Describe(const ffi::AnyBuffer& q, const ffi::AnyBuffer& k, const ffi::AnyBuffer& v,
                    float scale, int64_t causal, int64_t block_q, int64_t block_k,
                    int64_t window_left, int64_t window_right, float soft_cap,
                    AttentionArgs* a) {
  auto type = FloatTypeOf(q, kOp, "query");
  if (type.has_error()) return type.error();
  a->type = type.value();
  if (k.element_type() != q.element_type() || v.element_type() != q.element_type()) {
    return Invalid("query, key and value must have one dtype");
  }
  auto qd = q.dimensions();
  auto kd = k.dimensions();
  auto vd = v.dimensions();
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4) {
    return Invalid("query, key and value must be [batch, seq, heads, head_dim]");
  }
  for (int i = 0; i < 4; ++i) {
    if (kd[i] != vd[i]) return Invalid("key and value must have one shape");
  }
  if (kd[0] != qd[0] || kd[3] != qd[3] || kd[2] == 0 || qd[2] % kd[2] != 0) {
    return Invalid("key must be [batch, kv_seq, kv_heads, head_dim] with heads % kv_heads == 0");
  }
  if (block_q < 1 || block_k < 1 || block_q > 4096 || block_k > 4096) {
    return Invalid("block_q and block_k must be in [1, 4096]");
  }
  if ((window_left < 0) != (window_right < 0) || window_left < -1 || window_right < -1) {
    return Invalid("window_left and window_right must both be -1 (no window) or both >= 0");
  }
  if (window_left >= 0 && qd[1] - 1 - window_left >= kd[1]) {
    return Invalid("the window leaves queries without keys (q_seq - 1 - window_left >= kv_seq)");
  }
  if (!(soft_cap >= 0.f) || soft_cap == std::numeric_limits<float>::infinity()) {
    return Invalid("soft_cap must be 0 (none) or a finite number > 0");
  }
  a->batch = qd[0];
  a->q_len = qd[1];
  a->heads = qd[2];
  a->head_dim = qd[3];
  a->kv_len = kd[1];
  a->kv_heads = kd[2];
  a->scale = scale;
  a->causal = causal != 0;
  a->window_left = window_left;
  a->window_right = window_right;
  a->soft_cap = soft_cap;
  a->block_q = block_q;
  a->block_k = block_k;
  return ffi::Error::Success();
}

ffi::Error AttentionFwd(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v,
                        ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::Buffer<ffi::F32>> lse,
                        float scale, int64_t causal, int64_t block_q, int64_t block_k,
                        int64_t window_left, int64_t window_right, float soft_cap) {
  AttentionArgs a;
  if (ffi::Error e = Describe(q, k, v, scale, causal, block_q, block_k, window_left,
                              window_right, soft_cap, &a);
      e.failure()) {
    return e;
  }
  if (out->element_type() != q.element_type() || out->element_count() != q.element_count() ||
      lse->element_count() != static_cast<size_t>(a.batch * a.heads * a.q_len)) {
    return Invalid("out must have query's shape and dtype, lse [batch, heads, q_seq]");
  }
  a.q = q.untyped_data();
  a.k = k.untyped_data();
  a.v = v.untyped_data();
  a.out = out->untyped_data();
  a.lse = lse->typed_data();
  CpuFeatures::Pick(avx512::AttentionForward, avx2::AttentionForward,
                    generic::AttentionForward)(a);
  return ffi::Error::Success();
}

ffi::Error AttentionBwd(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v, ffi::AnyBuffer out,
                        ffi::Buffer<ffi::F32> lse, ffi::AnyBuffer dout,
                        ffi::Result<ffi::Buffer<ffi::F32>> dq,
                        ffi::Result<ffi::Buffer<ffi::F32>> dk,
                        ffi::Result<ffi::Buffer<ffi::F32>> dv, float scale, int64_t causal,
                        int64_t block_q, int64_t block_k, int64_t window_left,
                        int64_t window_right, float soft_cap) {
  AttentionArgs a;
  if (ffi::Error e = Describe(q, k, v, scale, causal, block_q, block_k, window_left,
                              window_right, soft_cap, &a);
      e.failure()) {
    return e;
  }
  if (out.element_type() != q.element_type() || dout.element_type() != q.element_type() ||
      out.element_count() != q.element_count() || dout.element_count() != q.element_count() ||
      lse.element_count() != static_cast<size_t>(a.batch * a.heads * a.q_len) ||
      dq->element_count() != q.element_count() || dk->element_count() != k.element_count() ||
      dv->element_count() != v.element_count()) {
    return Invalid("backward buffers do not match query/key/value");
  }
  a.q = q.untyped_data();
  a.k = k.untyped_data();
  a.v = v.untyped_data();
  a.out_in = out.untyped_data();
  a.lse_in = lse.typed_data();
  a.dout = dout.untyped_data();
  a.dq = dq->typed_data();
  a.dk = dk->typed_data();
  a.dv = dv->typed_data();
  CpuFeatures::Pick(avx512::AttentionBackward, avx2::AttentionBackward,
                    generic::AttentionBackward)(a);
  return ffi::Error::Success();
}

}  // namespace
}  // namespace pjrtkit_kernels

// The exported handler symbols (see layer_norm_ffi.cc).
#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionFwd, pjrtkit_kernels::AttentionFwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<float>("scale")
                                  .Attr<int64_t>("causal")
                                  .Attr<int64_t>("block_q")
                                  .Attr<int64_t>("block_k")
                                  .Attr<int64_t>("window_left")
                                  .Attr<int64_t>("window_right")
                                  .Attr<float>("soft_cap"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsAttentionBwd, pjrtkit_kernels::AttentionBwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<float>("scale")
                                  .Attr<int64_t>("causal")
                                  .Attr<int64_t>("block_q")
                                  .Attr<int64_t>("block_k")
                                  .Attr<int64_t>("window_left")
                                  .Attr<int64_t>("window_right")
                                  .Attr<float>("soft_cap"));
#pragma GCC visibility pop
