// AMX bfloat16 tile products for the avx512 variant of the native kernels (CPUs with AMX-BF16,
// Intel Sapphire Rapids and later; CpuFeatures::AmxBf16 says whether this process may use them).
//
// One C block of 32 x 32 float32 sits in tile registers 0-3 (four 16 x 16 quarters) while the
// contraction runs in steps of 32: each step loads A's two 16-row halves (tiles 4, 5; 16 rows of
// 32 bfloat16, from PackA's contiguous tiles) and B's two 16-column halves
// (tiles 6, 7, packed by PackB in the pair-interleaved layout TDPBF16PS reads) and issues four
// TDPBF16PS.
// Products and sums are float32 (bfloat16 products are exact in float32); TDPBF16PS treats
// denormal inputs as zero and flushes denormal results.
//
// Textual header of the per-ISA sources (after simd.h, and after <immintrin.h> among the standard
// headers); empty except in the avx512 variant.
#ifndef PJRTKIT_ISA
#error "include from a per-ISA source (kernels/native/isa.bzl)"
#endif

#if defined(PJRTKIT_ISA_AVX512)
#pragma GCC target("amx-tile,amx-bf16")

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace amx {

constexpr int64_t kBlock = 32;     // rows and columns of a C block; contraction per step
constexpr int64_t kTile = 16 * 32;  // bfloat16 in one A or B tile (16 rows of 64 bytes)
constexpr int64_t kStep = 2 * kTile;  // bfloat16 in one step of a packed B panel

inline int64_t RoundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// The tile registers, configured for this thread while alive: palette 1, eight tiles of 16 rows
// of 64 bytes (0-3 the C block's quarters, 4-5 A's halves, 6-7 B's halves); released after.
class TileScope {
 public:
  TileScope() {
    alignas(64) unsigned char config[64] = {};
    config[0] = 1;  // palette
    for (int t = 0; t < 8; ++t) {
      config[16 + 2 * t] = 64;  // bytes per row (little-endian uint16)
      config[48 + t] = 16;      // rows
    }
    _tile_loadconfig(config);
  }
  ~TileScope() { _tile_release(); }
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

// A's rows for BlockProduct: element (r, k) of step s (k < 32) at data[s * step + r * ld + k];
// PackA's tiles are {data, 32, 32 * 32} (a row-major matrix would be {data, ld, 32}: 20 %
// slower, its tile rows a row apart).
struct Rows {
  const uint16_t* data;
  int64_t ld;
  int64_t step;
};

// The C block [32 x 32] at c (ldc floats per row) = (its value when `accumulate`, else 0) + the
// sum over `steps` steps s of A[32 rows, 32 s .. 32 s + 31] (rows of `a`, which must hold 32 rows
// and 32 * steps columns) times step s of a packed B panel (`b`, PackB's layout).
inline void BlockProduct(int64_t steps, Rows a, const uint16_t* b, float* c, int64_t ldc,
                         bool accumulate) {
  const int64_t c_stride = ldc * 4;
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    _tile_loadd(1, c + 16, c_stride);
    _tile_loadd(2, c + 16 * ldc, c_stride);
    _tile_loadd(3, c + 16 * ldc + 16, c_stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const int64_t a_stride = a.ld * 2;
  for (int64_t s = 0; s < steps; ++s) {
    const uint16_t* ak = a.data + s * a.step;
    const uint16_t* bk = b + s * kStep;
    _tile_loadd(4, ak, a_stride);
    _tile_loadd(5, ak + 16 * a.ld, a_stride);
    _tile_loadd(6, bk, 64);
    _tile_loadd(7, bk + kTile, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, c_stride);
  _tile_stored(1, c + 16, c_stride);
  _tile_stored(2, c + 16 * ldc, c_stride);
  _tile_stored(3, c + 16 * ldc + 16, c_stride);
}

// Transposes 16 rows of 16 32-bit lanes in place: r[i] lane j becomes r[j] lane i.
inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
    r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
    r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xdd);
  }
}

// The first `n` (<= 32) bfloat16 lanes set.
inline __mmask32 FirstLanes(int64_t n) {
  return n >= 32 ? ~__mmask32{0} : n <= 0 ? __mmask32{0} : (__mmask32{1} << n) - 1;
}

// Rows k and k + 1 of a row-major matrix (columns [0, 32), the first `cols` read, rows past
// `depth` zero), interleaved: pairs[0] holds (row k, row k + 1) of columns 0-15 as 32-bit lanes,
// pairs[1] of columns 16-31.
inline void InterleaveRows(const uint16_t* data, int64_t ld, int64_t k, int64_t depth,
                           __mmask32 cols, __m512i pairs[2]) {
  // Lanes 2j and 2j + 1 take column j of the even and of the odd row.
  static constexpr uint16_t kLo[32] = {0, 32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                       37, 6, 38, 7,  39, 8,  40, 9,  41, 10, 42,
                                       11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i lo = _mm512_loadu_si512(kLo);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  const __m512i even = k < depth ? _mm512_maskz_loadu_epi16(cols, data + k * ld)
                                 : _mm512_setzero_si512();
  const __m512i odd = k + 1 < depth ? _mm512_maskz_loadu_epi16(cols, data + (k + 1) * ld)
                                    : _mm512_setzero_si512();
  pairs[0] = _mm512_permutex2var_epi16(even, lo, odd);
  pairs[1] = _mm512_permutex2var_epi16(even, hi, odd);
}

// Packs B(k, n), k in [0, depth), n in [0, cols) (cols <= 32), as a panel of RoundUp(depth, 32)
// / 32 steps for BlockProduct: step s holds two tiles (columns 0-15, then 16-31), tile row p the
// pairs (B(32 s + 2 p, n), B(32 s + 2 p + 1, n)) of its 16 columns; zero past depth and cols.
// B(k, n) is data[k * ld + n] (`k_major`) or data[n * ld + k].
inline void PackB(const uint16_t* data, int64_t ld, bool k_major, int64_t depth, int64_t cols,
                  uint16_t* dst) {
  const int64_t steps = RoundUp(depth, kBlock) / kBlock;
  if (k_major) {
    const __mmask32 mask = FirstLanes(cols);
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t p = 0; p < 16; ++p) {
        __m512i pairs[2];
        InterleaveRows(data, ld, s * kBlock + 2 * p, depth, mask, pairs);
        uint16_t* row = dst + s * kStep + p * 32;
        _mm512_storeu_si512(row, pairs[0]);
        _mm512_storeu_si512(row + kTile, pairs[1]);
      }
    }
    return;
  }
  // Column n's 32 contraction values of a step are 16 pairs in a row of `data`: 16 columns'
  // rows, transposed as 32-bit lanes, are the tile's 16 rows.
  for (int64_t s = 0; s < steps; ++s) {
    const __mmask32 ks = FirstLanes(depth - s * kBlock);
    for (int64_t h = 0; h < 2; ++h) {
      __m512i r[16];
      for (int64_t t = 0; t < 16; ++t) {
        const int64_t n = h * 16 + t;
        r[t] = n < cols ? _mm512_maskz_loadu_epi16(ks, data + n * ld + s * kBlock)
                        : _mm512_setzero_si512();
      }
      Transpose16x16(r);
      uint16_t* tile = dst + s * kStep + h * kTile;
      for (int64_t p = 0; p < 16; ++p) _mm512_storeu_si512(tile + p * 32, r[p]);
    }
  }
}

// Packs A(r, k), r in [0, rows), k in [0, depth), as RoundUp(rows, 32) / 32 blocks of
// RoundUp(depth, 32) / 32 steps of [32 rows][32]: element (r, k) at ((r / 32 * steps + k / 32) *
// 32 + r % 32) * 32 + k % 32, zero past rows and depth; block b is the Rows {dst + b * steps *
// 1024, 32, 1024}. Contiguous tiles: a row-major A with rows 2 KB apart loaded 20 % slower
// straight from memory. A(r, k) is data[r * ld + k] (`r_major`) or data[k * ld + r].
inline void PackA(const uint16_t* data, int64_t ld, bool r_major, int64_t rows, int64_t depth,
                  uint16_t* dst) {
  const int64_t steps = RoundUp(depth, kBlock) / kBlock;
  const int64_t blocks = RoundUp(rows, kBlock) / kBlock;
  const int64_t block = steps * kBlock * kBlock;
  if (blocks == 0 || steps == 0) return;
  if (r_major && (depth % kBlock != 0 || rows % kBlock != 0)) {
    std::memset(dst, 0, blocks * block * sizeof(uint16_t));
  }
  if (r_major) {
    for (int64_t r = 0; r < rows; ++r) {
      const uint16_t* src = data + r * ld;
      uint16_t* row = dst + (r / kBlock) * block + (r % kBlock) * kBlock;
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t n = std::min(kBlock, depth - s * kBlock);
        std::memcpy(row + s * kBlock * kBlock, src + s * kBlock, n * sizeof(uint16_t));
      }
    }
    return;
  }
  // A step of 32 rows: rows k, k + 1 of `data` interleaved are 16 pairs for each of 32 of A's
  // rows, transposed as 32-bit lanes into those rows' 16 pairs.
  for (int64_t b = 0; b < blocks; ++b) {
    const __mmask32 rs = FirstLanes(rows - b * kBlock);
    for (int64_t s = 0; s < steps; ++s) {
      __m512i lo[16], hi[16];
      for (int64_t p = 0; p < 16; ++p) {
        __m512i pairs[2];
        InterleaveRows(data + b * kBlock, ld, s * kBlock + 2 * p, depth, rs, pairs);
        lo[p] = pairs[0];
        hi[p] = pairs[1];
      }
      Transpose16x16(lo);
      Transpose16x16(hi);
      uint16_t* tile = dst + (b * steps + s) * kBlock * kBlock;
      for (int64_t r = 0; r < 16; ++r) {
        _mm512_storeu_si512(tile + r * kBlock, lo[r]);
        _mm512_storeu_si512(tile + (16 + r) * kBlock, hi[r]);
      }
    }
  }
}

}  // namespace amx
}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_ISA_AVX512
