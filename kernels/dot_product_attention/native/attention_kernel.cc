// Compiled once per instruction set: PJRTKIT_ISA and PJRTKIT_VEC_WIDTH come from BUILD.
#include "kernels/dot_product_attention/native/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/native/parallel_for.h"
#include "kernels/native/scratch.h"
#include "kernels/native/simd.h"

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One register tile of Gemm: C[R rows x V vectors] (+)= A[R x k] B[k x V vectors].
template <int R, int V>
inline void GemmTile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc, bool accumulate) {
  VecF acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      acc[r][v] = accumulate ? Load(c + r * ldc + v * kLanes) : Splat(0.f);
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    VecF bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = Load(b + p * ldb + v * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      // A scalar times a vector: one broadcast per row.
      const float ar = a[r * lda + p];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] += ar * bv[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) Store(c + r * ldc + v * kLanes, acc[r][v]);
  }
}

// Rows [0, m) of C's columns [j, j + V vectors) by tiles of R rows, then one row at a time.
template <int R, int V>
inline void GemmColumns(int64_t m, int64_t k, const float* a, int64_t lda, const float* b,
                        int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + R <= m; i += R) {
    GemmTile<R, V>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  }
  for (; i < m; ++i) GemmTile<1, V>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
}

// C[R rows x cols] (+)= A[R x k] B'[k x kLanes], `cols` < kLanes: B' is B's tail packed into
// whole vectors (zero past `cols`), C's tail moves through a vector-sized buffer.
template <int R>
inline void GemmTailTile(int64_t k, const float* a, int64_t lda, const float* b_packed,
                         float* c, int64_t ldc, bool accumulate, int64_t cols) {
  float lanes[kLanes] = {};
  VecF acc[R];
  for (int r = 0; r < R; ++r) {
    if (accumulate) std::copy(c + r * ldc, c + r * ldc + cols, lanes);
    acc[r] = accumulate ? Load(lanes) : Splat(0.f);
  }
  for (int64_t p = 0; p < k; ++p) {
    const VecF bv = Load(b_packed + p * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] += a[r * lda + p] * bv;
  }
  for (int r = 0; r < R; ++r) {
    Store(lanes, acc[r]);
    std::copy(lanes, lanes + cols, c + r * ldc);
  }
}

// The last `cols` (< kLanes) columns of C[m x .] (+)= A B, through B's tail packed kTailK rows at
// a time (a scalar loop over these columns ran 5-10x slower, head_dim 40 or 72 with 16 lanes).
template <int R>
void GemmTail(int64_t m, int64_t cols, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  constexpr int64_t kTailK = 256;
  float packed[kTailK * kLanes];
  int64_t p0 = 0;
  do {  // Once at least: with k = 0 and no accumulate, C's tail becomes 0.
    const int64_t kc = std::min(kTailK, k - p0);
    for (int64_t p = 0; p < kc; ++p) {
      float* row = packed + p * kLanes;
      std::copy(b + (p0 + p) * ldb, b + (p0 + p) * ldb + cols, row);
      std::fill(row + cols, row + kLanes, 0.f);
    }
    const bool acc = accumulate || p0 > 0;
    int64_t i = 0;
    for (; i + R <= m; i += R) {
      GemmTailTile<R>(kc, a + i * lda + p0, lda, packed, c + i * ldc, ldc, acc, cols);
    }
    for (; i < m; ++i) {
      GemmTailTile<1>(kc, a + i * lda + p0, lda, packed, c + i * ldc, ldc, acc, cols);
    }
    p0 += kc;
  } while (p0 < k);
}

// C[m x n] = (accumulate ? C : 0) + A[m x k] B[k x n], row-major, leading dimensions given.
// Register tiles of kGemmRows rows x kGemmVecs vectors (16 accumulators of AVX-512's 32
// registers, 12 of AVX2's and SSE's 16: the fastest of 4-12 rows x 1-4 vectors at head_dim
// 64/80/128); n is the vectorised dimension.
constexpr int kGemmRows = kLanes >= 16 ? 8 : 4;
constexpr int kGemmVecs = kLanes >= 16 ? 2 : 3;
void Gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  int64_t j = 0;
  for (; j + kGemmVecs * kLanes <= n; j += kGemmVecs * kLanes) {
    GemmColumns<kGemmRows, kGemmVecs>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  }
  for (; j + kLanes <= n; j += kLanes) {
    GemmColumns<2 * kGemmRows, 1>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  }
  if (j < n) {
    GemmTail<2 * kGemmRows>(m, n - j, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  }
}

// dst[c * ld_dst + r] = src[r * ld_src + c] for an m x n tile.
void Transpose(int64_t m, int64_t n, const float* src, int64_t ld_src, float* dst,
               int64_t ld_dst) {
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
  }
}

float RowMax(const float* v, int64_t n) {
  float m = kNegInf;
  int64_t i = 0;
  if (n >= kLanes) {
    VecF acc = Load(v);
    for (i = kLanes; i + kLanes <= n; i += kLanes) acc = VMax(acc, Load(v + i));
    m = Max(acc);
  }
  for (; i < n; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

// v <- exp(v - shift); returns the sum.
float ExpInPlace(float* v, int64_t n, float shift) {
  const VecF s = Splat(shift);
  VecF acc = Splat(0.f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const VecF e = Exp(Load(v + i) - s);
    Store(v + i, e);
    acc += e;
  }
  float sum = Sum(acc);
  for (; i < n; ++i) {
    v[i] = ExpScalar(v[i] - shift);
    sum += v[i];
  }
  return sum;
}

void ScaleRow(float* v, int64_t n, float f) {
  const VecF s = Splat(f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) Store(v + i, Load(v + i) * s);
  for (; i < n; ++i) v[i] *= f;
}

// Sizes shared by forward and backward.
struct Dims {
  int64_t b, t, h, d, s, k, g, bq, bk, nq, nk;
  explicit Dims(const AttentionArgs& a)
      : b(a.batch), t(a.q_len), h(a.heads), d(a.head_dim), s(a.kv_len), k(a.kv_heads),
        g(a.heads / a.kv_heads), bq(a.block_q), bk(a.block_k),
        nq((a.q_len + a.block_q - 1) / a.block_q), nk((a.kv_len + a.block_k - 1) / a.block_k) {}
  int64_t QOffset(int64_t bi, int64_t ti, int64_t hi) const { return ((bi * t + ti) * h + hi) * d; }
  int64_t KOffset(int64_t bi, int64_t si, int64_t ki) const { return ((bi * s + si) * k + ki) * d; }
  int64_t LseOffset(int64_t bi, int64_t hi, int64_t ti) const { return (bi * h + hi) * t + ti; }
};

// Splits of the query blocks of one (batch, kv head) pair, so that there are at least twice as
// many items as threads when the pairs alone are too few.
int64_t QuerySplits(const Dims& dm, int64_t max_splits) {
  const int64_t pairs = dm.b * dm.k;
  const int64_t want = (2 * ParallelFor::MaxThreads() + pairs - 1) / pairs;
  return std::max<int64_t>(1, std::min({want, dm.nq, max_splits}));
}

// Batch element bi's row of the key mask, or null when there is no key mask.
const uint8_t* KeyMaskRow(const AttentionArgs& a, int64_t bi) {
  return a.key_mask == nullptr ? nullptr : a.key_mask + bi * a.key_mask_batch_stride;
}

// One past the last key that `keep` (a key mask row, or null: every key) keeps; 0 when none.
int64_t KeptKeysEnd(const Dims& dm, const uint8_t* keep) {
  if (keep == nullptr) return dm.s;
  int64_t end = dm.s;
  while (end > 0 && keep[end - 1] == 0) --end;
  return end;
}

// Keys [0, n) a query-block range [qb0, qb1) can see, of the keys [0, kept_end) the key mask
// leaves.
int64_t KeysNeeded(const AttentionArgs& a, const Dims& dm, int64_t qb1, int64_t kept_end) {
  const int64_t last_q = std::min(dm.t, qb1 * dm.bq) - 1;
  int64_t n = a.causal ? std::min(kept_end, last_q + 1) : kept_end;
  if (a.window_left >= 0) n = std::min(n, last_q + a.window_right + 1);
  return std::max<int64_t>(n, 0);
}

// The keys [first, end) the queries [q0, q0 + mq) attend, of the keys [0, kept_end) the key mask
// leaves; `first` is a multiple of the block (first >= end: none).
void KeyRange(const AttentionArgs& a, const Dims& dm, int64_t q0, int64_t mq, int64_t kept_end,
              int64_t* first, int64_t* end) {
  *end = a.causal ? std::min(kept_end, q0 + mq) : kept_end;
  *first = 0;
  if (a.window_left >= 0) {
    *end = std::min(*end, q0 + mq - 1 + a.window_right + 1);
    *first = std::max<int64_t>(0, q0 - a.window_left) / dm.bk * dm.bk;
  }
}

// Whether key kpos is outside query qpos's causal or window range.
inline bool Outside(const AttentionArgs& a, int64_t qpos, int64_t kpos) {
  if (a.causal && kpos > qpos) return true;
  return a.window_left >= 0 && (kpos < qpos - a.window_left || kpos > qpos + a.window_right);
}

// Soft cap of a [rows x cols] logits tile; with `grad`, 1 - tanh^2 of each entry into it.
void SoftCap(float* tile, int64_t ld, int64_t rows, int64_t cols, float cap, float* grad) {
  const float inv = 1.f / cap;
  const VecF inv_v = Splat(inv), cap_v = Splat(cap), one = Splat(1.f);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = tile + r * ld;
    float* grad_row = grad != nullptr ? grad + r * ld : nullptr;
    int64_t c = 0;
    for (; c + kLanes <= cols; c += kLanes) {
      const VecF th = Tanh(Load(row + c) * inv_v);
      Store(row + c, cap_v * th);
      if (grad_row != nullptr) Store(grad_row + c, one - th * th);
    }
    for (; c < cols; ++c) {
      const float th = std::tanh(row[c] * inv);
      row[c] = cap * th;
      if (grad_row != nullptr) grad_row[c] = 1.f - th * th;
    }
  }
}

// The rows [0, n) a tile product over keys [0, keys) reads: `keys` rounded up to the block,
// at most the key length.
int64_t RowsRead(const Dims& dm, int64_t keys) {
  return std::min(dm.s, (keys + dm.bk - 1) / dm.bk * dm.bk);
}

// Loads rows [0, keys) of (bi, kvh) into `rows` ([.][d] float32) and zeroes the rows after them
// that a tile product still reads (p is 0 there, and 0 times a previous item's NaN is NaN).
void LoadKeyRows(const AttentionArgs& a, const Dims& dm, const void* src, int64_t bi,
                 int64_t kvh, int64_t keys, float* rows) {
  for (int64_t si = 0; si < keys; ++si) {
    LoadRow(a.type, src, dm.KOffset(bi, si, kvh), dm.d, rows + si * dm.d);
  }
  std::fill(rows + keys * dm.d, rows + RowsRead(dm, keys) * dm.d, 0.f);
}

// Packs keys [0, keys) of (bi, kvh): transposed blocks [nk][d][bk] into `t_blocks` (zero past
// `keys`) and, when `rows` is non-null, rows as LoadKeyRows does.
void PackKeys(const AttentionArgs& a, const Dims& dm, const void* src, int64_t bi, int64_t kvh,
              int64_t keys, float* t_blocks, float* rows, float* row_buf) {
  const int64_t blocks = (keys + dm.bk - 1) / dm.bk;
  std::fill(t_blocks, t_blocks + blocks * dm.d * dm.bk, 0.f);
  for (int64_t si = 0; si < keys; ++si) {
    float* row = rows != nullptr ? rows + si * dm.d : row_buf;
    LoadRow(a.type, src, dm.KOffset(bi, si, kvh), dm.d, row);
    float* block = t_blocks + (si / dm.bk) * dm.d * dm.bk + (si % dm.bk);
    for (int64_t di = 0; di < dm.d; ++di) block[di * dm.bk] = row[di];
  }
  if (rows != nullptr) std::fill(rows + keys * dm.d, rows + RowsRead(dm, keys) * dm.d, 0.f);
}

// Key, causal and window mask of a [rows x cols] logits tile of queries q0.. and keys k0..: -inf
// where a query does not attend a key. `keep`: the batch element's key mask row, or null.
void Mask(const AttentionArgs& a, const uint8_t* keep, float* tile, int64_t ld, int64_t rows,
          int64_t cols, int64_t q0, int64_t k0) {
  if (keep != nullptr && !std::all_of(keep + k0, keep + k0 + cols, [](uint8_t f) { return f; })) {
    for (int64_t r = 0; r < rows; ++r) {
      float* row = tile + r * ld;
      for (int64_t c = 0; c < cols; ++c) {
        if (keep[k0 + c] == 0) row[c] = kNegInf;
      }
    }
  }
  const bool window = a.window_left >= 0;
  if (!window && (!a.causal || k0 + cols - 1 <= q0)) return;
  if (window && !a.causal && k0 >= q0 + rows - 1 - a.window_left &&
      k0 + cols - 1 <= q0 + a.window_right) {
    return;  // Every pair of the tile is inside the window.
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (Outside(a, q0 + r, k0 + c)) tile[r * ld + c] = kNegInf;
    }
  }
}

}  // namespace

void AttentionForward(const AttentionArgs& a) {
  const Dims dm(a);
  const int64_t splits = QuerySplits(dm, dm.nq);
  const int64_t items = dm.b * dm.k * splits;
  const int workers = ParallelFor::Workers(items, 0);
  const int64_t kt_size = dm.nk * dm.d * dm.bk;
  const int64_t per_worker = kt_size + dm.s * dm.d + dm.bq * dm.d * 2 + dm.bq * dm.bk + 2 * dm.bq;
  std::vector<Scratch<float>> scratch(workers, Scratch<float>(per_worker));
  ParallelFor::Run(items, workers, [&](int w, int64_t item) {
    float* kt = scratch[w].data();
    float* vr = kt + kt_size;
    float* qp = vr + dm.s * dm.d;
    float* acc = qp + dm.bq * dm.d;
    float* tile = acc + dm.bq * dm.d;
    float* m = tile + dm.bq * dm.bk;
    float* l = m + dm.bq;
    const int64_t pair = item / splits, split = item % splits;
    const int64_t bi = pair / dm.k, kvh = pair % dm.k;
    const int64_t qb0 = split * dm.nq / splits, qb1 = (split + 1) * dm.nq / splits;
    const uint8_t* keep = KeyMaskRow(a, bi);
    const int64_t kept_end = KeptKeysEnd(dm, keep);
    const int64_t keys = KeysNeeded(a, dm, qb1, kept_end);
    PackKeys(a, dm, a.k, bi, kvh, keys, kt, nullptr, qp);
    LoadKeyRows(a, dm, a.v, bi, kvh, keys, vr);
    for (int64_t qb = qb0; qb < qb1; ++qb) {
      const int64_t q0 = qb * dm.bq, mq = std::min(dm.bq, dm.t - q0);
      int64_t kfirst, kend;
      KeyRange(a, dm, q0, mq, kept_end, &kfirst, &kend);
      for (int64_t gi = 0; gi < dm.g; ++gi) {
        const int64_t hi = kvh * dm.g + gi;
        for (int64_t r = 0; r < mq; ++r) {
          LoadRow(a.type, a.q, dm.QOffset(bi, q0 + r, hi), dm.d, qp + r * dm.d);
          ScaleRow(qp + r * dm.d, dm.d, a.scale);
          m[r] = kNegInf;
          l[r] = 0.f;
        }
        std::fill(acc, acc + mq * dm.d, 0.f);
        for (int64_t k0 = kfirst; k0 < kend; k0 += dm.bk) {
          const int64_t nkj = std::min(dm.bk, dm.s - k0);
          Gemm(mq, nkj, dm.d, qp, dm.d, kt + (k0 / dm.bk) * dm.d * dm.bk, dm.bk, tile, dm.bk,
               false);
          if (a.soft_cap > 0.f) SoftCap(tile, dm.bk, mq, nkj, a.soft_cap, nullptr);
          Mask(a, keep, tile, dm.bk, mq, nkj, q0, k0);
          for (int64_t r = 0; r < mq; ++r) {
            float* row = tile + r * dm.bk;
            const float mnew = std::max(m[r], RowMax(row, nkj));
            if (mnew == kNegInf) {  // Every key of this row masked so far.
              std::fill(row, row + nkj, 0.f);
              continue;
            }
            const float alpha = m[r] == kNegInf ? 0.f : std::exp(m[r] - mnew);
            l[r] = l[r] * alpha + ExpInPlace(row, nkj, mnew);
            m[r] = mnew;
            ScaleRow(acc + r * dm.d, dm.d, alpha);
          }
          Gemm(mq, dm.d, nkj, tile, dm.bk, vr + k0 * dm.d, dm.d, acc, dm.d, true);
        }
        for (int64_t r = 0; r < mq; ++r) {  // A row without keys: 0 and lse -inf (l = 0).
          ScaleRow(acc + r * dm.d, dm.d, l[r] > 0.f ? 1.f / l[r] : 0.f);
          StoreRow(a.type, acc + r * dm.d, dm.d, a.out, dm.QOffset(bi, q0 + r, hi));
          a.lse[dm.LseOffset(bi, hi, q0 + r)] = l[r] > 0.f ? m[r] + std::log(l[r]) : kNegInf;
        }
      }
    }
  });
}

void AttentionBackward(const AttentionArgs& a) {
  const Dims dm(a);
  // Partial dK/dV per split: allowed up to 256 MiB of float32, else one split per pair.
  const int64_t pairs = dm.b * dm.k;
  const int64_t max_splits =
      std::max<int64_t>(1, (int64_t{64} << 20) / std::max<int64_t>(1, pairs * dm.s * dm.d * 2));
  const int64_t splits = QuerySplits(dm, max_splits);
  const int64_t items = pairs * splits;
  const int workers = ParallelFor::Workers(items, 0);
  const int64_t kt_size = dm.nk * dm.d * dm.bk;
  const int64_t sd = dm.s * dm.d;
  const int64_t tile = dm.bq * dm.bk;
  const int64_t per_worker = 2 * kt_size + 3 * sd + 4 * dm.bq * dm.d + 4 * tile + 2 * dm.bq;
  std::vector<Scratch<float>> scratch(workers, Scratch<float>(per_worker));
  Scratch<float> partial(splits > 1 ? items * 2 * sd : 0);
  ParallelFor::Run(items, workers, [&](int w, int64_t item) {
    float* kt = scratch[w].data();
    float* vt = kt + kt_size;
    float* kr = vt + kt_size;
    float* dk_acc = kr + sd;
    float* dv_acc = dk_acc + sd;
    float* qs = dv_acc + sd;
    float* dob = qs + dm.bq * dm.d;
    float* ob = dob + dm.bq * dm.d;
    float* dq_acc = ob + dm.bq * dm.d;
    float* p = dq_acc + dm.bq * dm.d;
    float* ds = p + tile;
    float* pt = ds + tile;
    float* dst = pt + tile;
    float* lse = dst + tile;
    float* delta = lse + dm.bq;
    const int64_t pair = item / splits, split = item % splits;
    const int64_t bi = pair / dm.k, kvh = pair % dm.k;
    const int64_t qb0 = split * dm.nq / splits, qb1 = (split + 1) * dm.nq / splits;
    const uint8_t* keep = KeyMaskRow(a, bi);
    const int64_t kept_end = KeptKeysEnd(dm, keep);
    const int64_t keys = KeysNeeded(a, dm, qb1, kept_end);
    PackKeys(a, dm, a.k, bi, kvh, keys, kt, kr, nullptr);
    PackKeys(a, dm, a.v, bi, kvh, keys, vt, nullptr, qs);
    std::fill(dk_acc, dk_acc + 2 * sd, 0.f);
    for (int64_t qb = qb0; qb < qb1; ++qb) {
      const int64_t q0 = qb * dm.bq, mq = std::min(dm.bq, dm.t - q0);
      int64_t kfirst, kend;
      KeyRange(a, dm, q0, mq, kept_end, &kfirst, &kend);
      for (int64_t gi = 0; gi < dm.g; ++gi) {
        const int64_t hi = kvh * dm.g + gi;
        for (int64_t r = 0; r < mq; ++r) {
          const int64_t off = dm.QOffset(bi, q0 + r, hi);
          LoadRow(a.type, a.q, off, dm.d, qs + r * dm.d);
          ScaleRow(qs + r * dm.d, dm.d, a.scale);
          LoadRow(a.type, a.dout, off, dm.d, dob + r * dm.d);
          LoadRow(a.type, a.out_in, off, dm.d, ob + r * dm.d);
          float dl = 0.f;
          for (int64_t di = 0; di < dm.d; ++di) dl += dob[r * dm.d + di] * ob[r * dm.d + di];
          delta[r] = dl;
          lse[r] = a.lse_in[dm.LseOffset(bi, hi, q0 + r)];
        }
        std::fill(dq_acc, dq_acc + mq * dm.d, 0.f);
        for (int64_t k0 = kfirst; k0 < kend; k0 += dm.bk) {
          const int64_t nkj = std::min(dm.bk, dm.s - k0);
          const int64_t blk = (k0 / dm.bk) * dm.d * dm.bk;
          Gemm(mq, nkj, dm.d, qs, dm.d, kt + blk, dm.bk, p, dm.bk, false);
          // With a soft cap, pt holds d(cap tanh(x / cap))/dx until the transposes below.
          if (a.soft_cap > 0.f) SoftCap(p, dm.bk, mq, nkj, a.soft_cap, pt);
          Mask(a, keep, p, dm.bk, mq, nkj, q0, k0);
          for (int64_t r = 0; r < mq; ++r) {
            float* pr = p + r * dm.bk;
            // A row without keys (lse -inf) moves nothing here (exp(-inf - -inf) would be NaN).
            if (lse[r] == kNegInf) {
              std::fill(pr, pr + nkj, 0.f);
            } else {
              ExpInPlace(pr, nkj, lse[r]);
            }
          }
          Gemm(mq, nkj, dm.d, dob, dm.d, vt + blk, dm.bk, ds, dm.bk, false);
          for (int64_t r = 0; r < mq; ++r) {
            const VecF dl = Splat(delta[r]);
            float* dsr = ds + r * dm.bk;
            const float* pr = p + r * dm.bk;
            int64_t c = 0;
            for (; c + kLanes <= nkj; c += kLanes) Store(dsr + c, Load(pr + c) * (Load(dsr + c) - dl));
            for (; c < nkj; ++c) dsr[c] = pr[c] * (dsr[c] - delta[r]);
            if (a.soft_cap > 0.f) {
              const float* gr = pt + r * dm.bk;
              for (c = 0; c < nkj; ++c) dsr[c] *= gr[c];
            }
          }
          Transpose(mq, nkj, p, dm.bk, pt, dm.bq);
          Transpose(mq, nkj, ds, dm.bk, dst, dm.bq);
          Gemm(nkj, dm.d, mq, pt, dm.bq, dob, dm.d, dv_acc + k0 * dm.d, dm.d, true);
          Gemm(nkj, dm.d, mq, dst, dm.bq, qs, dm.d, dk_acc + k0 * dm.d, dm.d, true);
          Gemm(mq, dm.d, nkj, ds, dm.bk, kr + k0 * dm.d, dm.d, dq_acc, dm.d, true);
        }
        for (int64_t r = 0; r < mq; ++r) {
          float* dst_row = a.dq + dm.QOffset(bi, q0 + r, hi);
          for (int64_t di = 0; di < dm.d; ++di) dst_row[di] = dq_acc[r * dm.d + di] * a.scale;
        }
      }
    }
    if (splits == 1) {
      for (int64_t si = 0; si < dm.s; ++si) {
        std::copy(dk_acc + si * dm.d, dk_acc + (si + 1) * dm.d, a.dk + dm.KOffset(bi, si, kvh));
        std::copy(dv_acc + si * dm.d, dv_acc + (si + 1) * dm.d, a.dv + dm.KOffset(bi, si, kvh));
      }
    } else {
      std::copy(dk_acc, dk_acc + 2 * sd, partial.data() + item * 2 * sd);
    }
  });
  if (splits == 1) return;
  ParallelFor::Run(pairs, 0, [&](int, int64_t pair) {
    const int64_t bi = pair / dm.k, kvh = pair % dm.k;
    for (int64_t si = 0; si < dm.s; ++si) {
      float* dk = a.dk + dm.KOffset(bi, si, kvh);
      float* dv = a.dv + dm.KOffset(bi, si, kvh);
      std::fill(dk, dk + dm.d, 0.f);
      std::fill(dv, dv + dm.d, 0.f);
      for (int64_t sp = 0; sp < splits; ++sp) {
        const float* part = partial.data() + (pair * splits + sp) * 2 * sd;
        for (int64_t di = 0; di < dm.d; ++di) {
          dk[di] += part[si * dm.d + di];
          dv[di] += part[sd + si * dm.d + di];
        }
      }
    }
  });
}

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
