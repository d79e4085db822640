// The native attention handlers' argument checks on real XLA FFI buffer descriptors: a call
// described into AttentionArgs, the key mask's shapes and dtype (one row per batch element, or
// one for all), and every refusal an InvalidArgument naming what is wrong (never an abort).
#include "kernels/dot_product_attention/native/attention_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

// An XLA FFI buffer descriptor that owns its dims (data: a dummy address, never read).
struct Buffer {
  Buffer(XLA_FFI_DataType dtype, std::vector<int64_t> d) : dims(std::move(d)) {
    raw = XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr, dtype, &storage,
                         static_cast<int64_t>(dims.size()), dims.data()};
  }
  ffi::AnyBuffer any() { return ffi::AnyBuffer(&raw); }
  std::vector<int64_t> dims;
  int64_t storage = 0;
  XLA_FFI_Buffer raw;
};

// q [2, 5, 4, 8], k and v [2, 7, 2, 8] (two query heads per key/value head).
class AttentionChecksTest : public ::testing::Test {
 protected:
  Buffer q_{XLA_FFI_DataType_F32, {2, 5, 4, 8}};
  Buffer k_{XLA_FFI_DataType_F32, {2, 7, 2, 8}};
  Buffer v_{XLA_FFI_DataType_F32, {2, 7, 2, 8}};

  AttentionArgs Described() {
    AttentionArgs a;
    ffi::Error e = DescribeAttention(q_.any(), k_.any(), v_.any(), AttentionAttrs{}, &a);
    EXPECT_FALSE(e.failure()) << e.message();
    return a;
  }
};

TEST_F(AttentionChecksTest, DescribesTheCall) {
  AttentionAttrs attrs;
  attrs.causal = 1;
  attrs.block_q = 16;
  attrs.window_left = 3;
  attrs.window_right = 0;
  AttentionArgs a;
  ASSERT_FALSE(DescribeAttention(q_.any(), k_.any(), v_.any(), attrs, &a).failure());
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.q_len, 5);
  EXPECT_EQ(a.heads, 4);
  EXPECT_EQ(a.head_dim, 8);
  EXPECT_EQ(a.kv_len, 7);
  EXPECT_EQ(a.kv_heads, 2);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(a.block_q, 16);
  EXPECT_EQ(a.window_left, 3);
  EXPECT_EQ(a.key_mask, nullptr);
}

TEST_F(AttentionChecksTest, KeyMaskOfEachBatchElementOrOneForAll) {
  Buffer per_row(XLA_FFI_DataType_PRED, {2, 7});
  AttentionArgs a = Described();
  ASSERT_FALSE(DescribeKeyMask(per_row.any(), &a).failure());
  EXPECT_EQ(a.key_mask, reinterpret_cast<const uint8_t*>(&per_row.storage));
  EXPECT_EQ(a.key_mask_batch_stride, 7);

  Buffer shared(XLA_FFI_DataType_PRED, {1, 7});
  AttentionArgs b = Described();
  ASSERT_FALSE(DescribeKeyMask(shared.any(), &b).failure());
  EXPECT_EQ(b.key_mask_batch_stride, 0);
}

TEST_F(AttentionChecksTest, KeyMaskOfAnotherShapeIsRefusedWithItsShape) {
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{2, 6}, "[2, 6]"},          // another key length
      {{3, 7}, "[3, 7]"},          // another batch
      {{2, 1, 1, 7}, "[2, 1, 1, 7]"},  // the Python-side [N, 1, 1, S], not flattened
      {{7}, "[7]"},
      {{2, 5, 7}, "[2, 5, 7]"},    // a [N, T, S] mask
  };
  for (const auto& [dims, text] : cases) {
    Buffer mask(XLA_FFI_DataType_PRED, dims);
    AttentionArgs a = Described();
    ffi::Error e = DescribeKeyMask(mask.any(), &a);
    ASSERT_TRUE(e.failure()) << text;
    EXPECT_EQ(e.errc(), ffi::ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.message(), "pjrtkit native dot_product_attention: key_mask must be "
                           "[batch or 1, kv_seq] = [2 or 1, 7], got " + text);
    EXPECT_EQ(a.key_mask, nullptr);
  }
}

TEST_F(AttentionChecksTest, KeyMaskMustBeBool) {
  for (XLA_FFI_DataType dtype : {XLA_FFI_DataType_U8, XLA_FFI_DataType_S32,
                                 XLA_FFI_DataType_F32}) {
    Buffer mask(dtype, {2, 7});
    AttentionArgs a = Described();
    ffi::Error e = DescribeKeyMask(mask.any(), &a);
    ASSERT_TRUE(e.failure()) << dtype;
    EXPECT_EQ(e.message(), "pjrtkit native dot_product_attention: key_mask must be bool (pred)");
  }
}

TEST_F(AttentionChecksTest, BadCallsAreRefusedNamingWhatIsWrong) {
  AttentionArgs a;
  Buffer k_other_batch(XLA_FFI_DataType_F32, {3, 7, 2, 8});
  EXPECT_EQ(DescribeAttention(q_.any(), k_other_batch.any(), k_other_batch.any(),
                              AttentionAttrs{}, &a).message(),
            "pjrtkit native dot_product_attention: key must be [batch, kv_seq, kv_heads, "
            "head_dim] with heads % kv_heads == 0");
  Buffer q16(XLA_FFI_DataType_F16, {2, 5, 4, 8});
  EXPECT_EQ(DescribeAttention(q16.any(), k_.any(), v_.any(), AttentionAttrs{}, &a).message(),
            "pjrtkit native dot_product_attention: query must be float32 or bfloat16");
  AttentionAttrs one_sided;
  one_sided.window_left = 2;
  EXPECT_EQ(DescribeAttention(q_.any(), k_.any(), v_.any(), one_sided, &a).message(),
            "pjrtkit native dot_product_attention: window_left and window_right must both be -1 "
            "(no window) or both >= 0");
  AttentionAttrs big_block;
  big_block.block_k = 8192;
  EXPECT_EQ(DescribeAttention(q_.any(), k_.any(), v_.any(), big_block, &a).message(),
            "pjrtkit native dot_product_attention: block_q and block_k must be in [1, 4096]");
}

TEST_F(AttentionChecksTest, ResultsMustMatchTheCall) {
  AttentionArgs a = Described();
  Buffer out(XLA_FFI_DataType_F32, {2, 5, 4, 8});
  Buffer lse(XLA_FFI_DataType_F32, {2, 4, 5});
  EXPECT_FALSE(CheckForwardResults(q_.any(), out.any(), lse.any(), a).failure());
  Buffer lse_bf16(XLA_FFI_DataType_BF16, {2, 4, 5});
  Buffer lse_short(XLA_FFI_DataType_F32, {2, 4, 4});
  for (Buffer* bad : {&lse_bf16, &lse_short}) {
    ffi::Error e = CheckForwardResults(q_.any(), out.any(), bad->any(), a);
    EXPECT_EQ(e.message(), "pjrtkit native dot_product_attention: out must have query's shape "
                           "and dtype, lse [batch, heads, q_seq]");
  }
  Buffer dq(XLA_FFI_DataType_F32, {2, 5, 4, 8});
  Buffer dk(XLA_FFI_DataType_F32, {2, 7, 2, 8});
  Buffer dv_bf16(XLA_FFI_DataType_BF16, {2, 7, 2, 8});
  EXPECT_FALSE(CheckBackwardBuffers(q_.any(), k_.any(), v_.any(), out.any(), lse.any(), out.any(),
                                    dq.any(), dk.any(), dk.any(), a).failure());
  EXPECT_EQ(CheckBackwardBuffers(q_.any(), k_.any(), v_.any(), out.any(), lse.any(), out.any(),
                                 dq.any(), dk.any(), dv_bf16.any(), a).message(),
            "pjrtkit native dot_product_attention: backward buffers do not match "
            "query/key/value");
}

}  // namespace
}  // namespace pjrtkit_kernels
