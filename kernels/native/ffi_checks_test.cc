// ffi_checks and CpuFeatures::Pick: element types read from real XLA FFI buffer descriptors, the
// refusal's message naming the op and the parameter, and the variant Pick returns.
#include "kernels/native/ffi_checks.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "kernels/native/cpu_features.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

XLA_FFI_Buffer Descriptor(XLA_FFI_DataType dtype, int64_t* dims) {
  return XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr, dtype, nullptr, 1, dims};
}

TEST(FfiChecksTest, Float32AndBfloat16AreTheKernelsTypes) {
  int64_t dims[] = {4};
  XLA_FFI_Buffer f32 = Descriptor(XLA_FFI_DataType_F32, dims);
  XLA_FFI_Buffer bf16 = Descriptor(XLA_FFI_DataType_BF16, dims);
  auto a = FloatTypeOf(ffi::AnyBuffer(&f32), "layer_norm", "x");
  auto b = FloatTypeOf(ffi::AnyBuffer(&bf16), "layer_norm", "x");
  ASSERT_FALSE(a.has_error());
  ASSERT_FALSE(b.has_error());
  EXPECT_EQ(a.value(), ElementType::kF32);
  EXPECT_EQ(b.value(), ElementType::kBF16);
}

TEST(FfiChecksTest, OtherTypesAreRefusedNamingTheOpAndTheParameter) {
  int64_t dims[] = {4};
  for (XLA_FFI_DataType dtype : {XLA_FFI_DataType_F16, XLA_FFI_DataType_F64,
                                 XLA_FFI_DataType_S32, XLA_FFI_DataType_PRED}) {
    XLA_FFI_Buffer buffer = Descriptor(dtype, dims);
    auto got = FloatTypeOf(ffi::AnyBuffer(&buffer), "ragged_dot", "w");
    ASSERT_TRUE(got.has_error()) << dtype;
    EXPECT_EQ(got.error().errc(), ffi::ErrorCode::kInvalidArgument);
    EXPECT_EQ(got.error().message(),
              "pjrtkit native ragged_dot: w must be float32 or bfloat16");
  }
}

TEST(FfiChecksTest, InvalidArgumentPrefixesTheOp) {
  ffi::Error e = InvalidArgument("dot_product_attention", "block_q must be in [1, 4096]");
  EXPECT_TRUE(e.failure());
  EXPECT_EQ(e.errc(), ffi::ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.message(), "pjrtkit native dot_product_attention: block_q must be in [1, 4096]");
}

int Avx512() { return 512; }
int Avx2() { return 2; }
int Generic() { return 0; }

TEST(CpuFeaturesTest, PickReturnsTheVariantOfTheBestIsa) {
  const int expected = CpuFeatures::Best() == Isa::kAvx512 ? 512
                       : CpuFeatures::Best() == Isa::kAvx2 ? 2
                                                           : 0;
  EXPECT_EQ(CpuFeatures::Pick(&Avx512, &Avx2, &Generic)(), expected);
}

}  // namespace
}  // namespace pjrtkit_kernels
