#include "kernels/dot_product_attention/native/attention_checks.h"

#include <limits>
#include <string>

#include "kernels/native/ffi_checks.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

constexpr char kOp[] = "dot_product_attention";

ffi::Error Invalid(const std::string& what) { return InvalidArgument(kOp, what); }

// "[d0, d1, ...]" of a buffer, for messages.
std::string ShapeText(const ffi::AnyBuffer& b) {
  std::string text = "[";
  auto dims = b.dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

}  // namespace

ffi::Error DescribeAttention(const ffi::AnyBuffer& q, const ffi::AnyBuffer& k,
                             const ffi::AnyBuffer& v, const AttentionAttrs& attrs,
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
  if (attrs.block_q < 1 || attrs.block_k < 1 || attrs.block_q > 4096 || attrs.block_k > 4096) {
    return Invalid("block_q and block_k must be in [1, 4096]");
  }
  if ((attrs.window_left < 0) != (attrs.window_right < 0) || attrs.window_left < -1 ||
      attrs.window_right < -1) {
    return Invalid("window_left and window_right must both be -1 (no window) or both >= 0");
  }
  if (!(attrs.soft_cap >= 0.f) || attrs.soft_cap == std::numeric_limits<float>::infinity()) {
    return Invalid("soft_cap must be 0 (none) or a finite number > 0");
  }
  a->batch = qd[0];
  a->q_len = qd[1];
  a->heads = qd[2];
  a->head_dim = qd[3];
  a->kv_len = kd[1];
  a->kv_heads = kd[2];
  a->scale = attrs.scale;
  a->causal = attrs.causal != 0;
  a->window_left = attrs.window_left;
  a->window_right = attrs.window_right;
  a->soft_cap = attrs.soft_cap;
  a->block_q = attrs.block_q;
  a->block_k = attrs.block_k;
  a->key_mask = nullptr;
  a->key_mask_batch_stride = 0;
  return ffi::Error::Success();
}

ffi::Error DescribeKeyMask(const ffi::AnyBuffer& key_mask, AttentionArgs* a) {
  if (key_mask.element_type() != ffi::DataType::PRED) {
    return Invalid("key_mask must be bool (pred)");
  }
  auto md = key_mask.dimensions();
  if (md.size() != 2 || (md[0] != 1 && md[0] != a->batch) || md[1] != a->kv_len) {
    return Invalid("key_mask must be [batch or 1, kv_seq] = [" + std::to_string(a->batch) +
                   " or 1, " + std::to_string(a->kv_len) + "], got " + ShapeText(key_mask));
  }
  if (a->kv_len > 0 && key_mask.untyped_data() == nullptr) {
    return Invalid("key_mask has no data");
  }
  a->key_mask = static_cast<const uint8_t*>(key_mask.untyped_data());
  a->key_mask_batch_stride = md[0] == 1 ? 0 : a->kv_len;
  return ffi::Error::Success();
}

ffi::Error CheckForwardResults(const ffi::AnyBuffer& q, const ffi::AnyBuffer& out,
                               const ffi::AnyBuffer& lse, const AttentionArgs& a) {
  if (out.element_type() != q.element_type() || out.element_count() != q.element_count() ||
      lse.element_type() != ffi::DataType::F32 ||
      lse.element_count() != static_cast<size_t>(a.batch * a.heads * a.q_len)) {
    return Invalid("out must have query's shape and dtype, lse [batch, heads, q_seq]");
  }
  return ffi::Error::Success();
}

ffi::Error CheckBackwardBuffers(const ffi::AnyBuffer& q, const ffi::AnyBuffer& k,
                                const ffi::AnyBuffer& v, const ffi::AnyBuffer& out,
                                const ffi::AnyBuffer& lse, const ffi::AnyBuffer& dout,
                                const ffi::AnyBuffer& dq, const ffi::AnyBuffer& dk,
                                const ffi::AnyBuffer& dv, const AttentionArgs& a) {
  const bool f32 = lse.element_type() == ffi::DataType::F32 &&
                   dq.element_type() == ffi::DataType::F32 &&
                   dk.element_type() == ffi::DataType::F32 &&
                   dv.element_type() == ffi::DataType::F32;
  if (!f32 || out.element_type() != q.element_type() ||
      dout.element_type() != q.element_type() || out.element_count() != q.element_count() ||
      dout.element_count() != q.element_count() ||
      lse.element_count() != static_cast<size_t>(a.batch * a.heads * a.q_len) ||
      dq.element_count() != q.element_count() || dk.element_count() != k.element_count() ||
      dv.element_count() != v.element_count()) {
    return Invalid("backward buffers do not match query/key/value");
  }
  return ffi::Error::Success();
}

}  // namespace pjrtkit_kernels
