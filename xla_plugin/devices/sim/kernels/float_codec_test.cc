// The float codecs against XLA:CPU (testdata/golden_codecs.inc, from gen_goldens.py): every code
// decoded to f32 and f64, and sweeps of f32/f64 values around every representable value (plus
// random bit patterns) encoded, compared exactly through per-chunk hashes. ml_dtypes agrees with
// these tables except where README.md says. Readable edge cases follow.
#include "xla_plugin/devices/sim/kernels/float_codec.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/testdata/golden_util.h"

namespace pjrtkit {
namespace sim {
namespace {

const golden::CodecCase kCodecCases[] = {
#include "xla_plugin/devices/sim/kernels/testdata/golden_codecs.inc"
};

// Compares the chunk hashes of `got` with `expected_hashes`; names the first differing chunk.
void ExpectHashes(const char* what, int type, const std::vector<uint64_t>& got,
                  const char* expected_hashes) {
  const std::vector<uint64_t> expected = golden::ParseHashes(expected_hashes);
  const std::vector<uint64_t> hashes = golden::ChunkHashes(got);
  ASSERT_EQ(hashes.size(), expected.size()) << what << " " << ElementTypeName(ElementType(type));
  for (size_t c = 0; c < hashes.size(); ++c) {
    EXPECT_EQ(hashes[c], expected[c])
        << what << " " << ElementTypeName(ElementType(type)) << ": chunk " << c << " (elements "
        << c * golden::kChunk << "..) differs from XLA:CPU";
  }
}

LowFloat FormatOf(int type) {
  LowFloat format = LowFloat::kF16;
  EXPECT_TRUE(LowFloatOf(static_cast<ElementType>(type), &format));
  return format;
}

TEST(FloatCodecTest, DecodeEveryCodeMatchesXla) {
  for (const golden::CodecCase& c : kCodecCases) {
    const LowFloat format = FormatOf(c.type);
    const uint32_t codes = 1u << ElementTypeBits(ElementType(c.type));
    std::vector<uint64_t> f32_bits;
    std::vector<uint64_t> f64_bits;
    for (uint32_t code = 0; code < codes; ++code) {
      f32_bits.push_back(BitCast<uint32_t>(DecodeToF32(format, code)));
      f64_bits.push_back(BitCast<uint64_t>(DecodeToF64(format, code)));
    }
    ExpectHashes("decode to f32", c.type, f32_bits, c.decode_f32);
    ExpectHashes("decode to f64", c.type, f64_bits, c.decode_f64);
  }
}

TEST(FloatCodecTest, EncodeF32SweepMatchesXla) {
  for (const golden::CodecCase& c : kCodecCases) {
    const LowFloat format = FormatOf(c.type);
    const std::vector<float> sweep = golden::F32Sweep(c.type);
    ASSERT_EQ(static_cast<int64_t>(sweep.size()), c.f32_sweep_size);
    std::vector<uint64_t> codes;
    for (float x : sweep) codes.push_back(EncodeFromF32(format, x));
    ExpectHashes("encode from f32", c.type, codes, c.encode_f32);
  }
}

TEST(FloatCodecTest, EncodeF64SweepMatchesXla) {
  for (const golden::CodecCase& c : kCodecCases) {
    const LowFloat format = FormatOf(c.type);
    const std::vector<double> sweep = golden::F64Sweep(c.type);
    ASSERT_EQ(static_cast<int64_t>(sweep.size()), c.f64_sweep_size);
    std::vector<uint64_t> codes;
    ScopedFlushDenormals flush;
    for (double x : sweep) codes.push_back(EncodeFromF64(format, x));
    ExpectHashes("encode from f64", c.type, codes, c.encode_f64);
  }
}

// The engine's block forms: DecodeBlock/EncodeBlock round-trip every code (NaN codes included),
// canonicalizing gives XLA's convert, and encoding/rounding agree with EncodeFromF32 (NaNs: any
// NaN code).
TEST(FloatCodecTest, BlockFunctionsAreLosslessAndAgreeWithScalarOnes) {
  for (const golden::CodecCase& c : kCodecCases) {
    const LowFloat format = FormatOf(c.type);
    const bool wide = ElementTypeBits(ElementType(c.type)) == 16;
    const int64_t codes = wide ? 65536 : 256;
    std::vector<uint16_t> in16(codes), out16(codes);
    std::vector<uint8_t> in8(codes), out8(codes);
    for (int64_t i = 0; i < codes; ++i) {
      in16[i] = static_cast<uint16_t>(i);
      in8[i] = static_cast<uint8_t>(i);
    }
    const void* in = wide ? static_cast<const void*>(in16.data()) : in8.data();
    void* out = wide ? static_cast<void*>(out16.data()) : out8.data();
    std::vector<float> values(codes);
    DecodeBlock(format, in, 1, values.data(), codes);
    EncodeBlock(format, values.data(), out, codes);
    std::vector<float> canonical = values;
    CanonicalizeBlock(format, canonical.data(), codes);
    for (int64_t i = 0; i < codes; ++i) {
      ASSERT_EQ(wide ? out16[i] : out8[i], static_cast<uint32_t>(i)) << "code " << i;
      ASSERT_EQ(BitCast<uint32_t>(canonical[i]),
                BitCast<uint32_t>(DecodeToF32(format, static_cast<uint32_t>(i))))
          << "code " << i;
    }
    const std::vector<float> sweep = golden::F32Sweep(c.type);
    const int64_t n = static_cast<int64_t>(sweep.size());
    std::vector<uint16_t> sweep16(n);
    std::vector<uint8_t> sweep8(n);
    void* encoded = wide ? static_cast<void*>(sweep16.data()) : sweep8.data();
    EncodeBlock(format, sweep.data(), encoded, n);
    std::vector<float> rounded(n);
    RoundBlock(format, sweep.data(), rounded.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t code = wide ? sweep16[i] : sweep8[i];
      const uint32_t expected = EncodeFromF32(format, sweep[i]);
      if (std::isnan(sweep[i])) {
        ASSERT_TRUE(std::isnan(DecodeToF32(format, code))) << i;
      } else {
        ASSERT_EQ(code, expected) << i;
      }
      float decoded;
      const uint8_t expected8 = static_cast<uint8_t>(expected);
      const uint16_t expected16 = static_cast<uint16_t>(expected);
      DecodeBlock(format, wide ? static_cast<const void*>(&expected16) : &expected8, 1, &decoded,
                  1);
      ASSERT_EQ(BitCast<uint32_t>(rounded[i]), BitCast<uint32_t>(decoded)) << i;
    }
    std::vector<float> broadcast(4);
    DecodeBlock(format, in, 0, broadcast.data(), 4);
    for (float v : broadcast) EXPECT_EQ(BitCast<uint32_t>(v), BitCast<uint32_t>(values[0]));
  }
}

TEST(FloatCodecTest, ReadableEdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // f8e4m3fn: max 448; 464 is the tie to even (448), 480 and inf become NaN (no inf).
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3FN, 448.0f), 0x7eu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3FN, 464.0f), 0x7eu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3FN, 480.0f), 0x7fu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3FN, -inf), 0xffu);
  // f8e5m2 and f8e4m3 overflow to inf.
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E5M2, 1e6f), 0x7cu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3, -1e6f), 0xf8u);
  // FNUZ: one NaN (0x80), no -0.
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3FNUZ, -0.0f), 0x00u);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E5M2FNUZ, -nan), 0x80u);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E4M3B11FNUZ, inf), 0x80u);
  EXPECT_TRUE(std::isnan(DecodeToF32(LowFloat::kF8E4M3FNUZ, 0x80)));
  // f8e8m0fnu: powers of two, ties up, no zero or sign.
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E8M0FNU, 1.5f), 0x80u);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E8M0FNU, 0.0f), 0xffu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E8M0FNU, -2.0f), 0xffu);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E8M0FNU, 1e-45f), 0x00u);
  EXPECT_EQ(DecodeToF32(LowFloat::kF8E8M0FNU, 0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(EncodeFromF32(LowFloat::kF8E8M0FNU, BitCast<float>(0x00400001u)), 0x01u);
  EXPECT_EQ(DecodeToF64(LowFloat::kF8E8M0FNU, 0x00), std::ldexp(1.0, -127));
  EXPECT_EQ(DecodeToF64(LowFloat::kBF16, 0x8001), 0.0);  // bf16 denormal: read as zero
  // bf16 keeps f32 denormals; f16 NaN keeps its top payload bits and turns quiet.
  EXPECT_EQ(EncodeFromF32(LowFloat::kBF16, BitCast<float>(0x00010000u)), 0x0001u);
  EXPECT_EQ(EncodeFromF32(LowFloat::kF16, BitCast<float>(0x7f8e5e76u)), 0x7e72u);
  EXPECT_EQ(BitCast<uint32_t>(DecodeToF32(LowFloat::kF16, 0x7c01)), 0x7fc02000u);
  // f64 -> bf16 and f16 round twice (through f32), f64 -> f8 once, as XLA:CPU does.
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(EncodeFromF64(LowFloat::kBF16, above_tie), 0x3f80u);
  EXPECT_EQ(EncodeFromF64(LowFloat::kF16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -50)),
            0x3c00u);
  EXPECT_EQ(EncodeFromF64(LowFloat::kF8E4M3FN, 1.0 + std::ldexp(1.0, -4) + std::ldexp(1.0, -30)),
            0x39u);
  EXPECT_EQ(EncodeFromF64(LowFloat::kF16, -std::numeric_limits<double>::quiet_NaN()), 0xfe00u);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
