// Every instruction-set variant of the native flash attention (the ones this CPU runs), forward
// and backward, against a plain double-precision definition: query lengths off block_q and key
// lengths off block_k, head_dim on and off the vector widths, grouped, equal and multi-query
// heads, causal, local windows, soft cap, key masks (with holes, one row for the whole batch, one
// keeping no key), a window leaving rows without keys, small blocks that cross many tiles,
// float32 and bfloat16 inputs.
//
// Tolerances, as |got - want| <= tol * (max |want| over the tensor's finite entries): 1e-4 for
// every float32 output (out and lse, dq, dk and dv, which are float32 in both modes); 1e-2 for
// the bfloat16 forward output (one bfloat16 rounding is up to 2^-9 of the value). Inputs are
// bfloat16-exact, so both modes share one reference. Exactly: a row that attends no key has out
// 0, lse -inf and dq 0; a key no query attends has dk = dv = 0. The backward gets the reference
// forward's out (rounded to the input type) and lse (rounded to float32), as its saved inputs.
#include "kernels/dot_product_attention/native/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/native/cpu_features.h"
#include "kernels/native/test_buffer.h"

namespace pjrtkit_kernels {
namespace {

using AttentionFn = void (*)(const AttentionArgs&);

struct Variant {
  const char* name;
  Isa isa;
  AttentionFn forward, backward;
};

const Variant kVariants[] = {
    {"generic", Isa::kGeneric, generic::AttentionForward, generic::AttentionBackward},
    {"avx2", Isa::kAvx2, avx2::AttentionForward, avx2::AttentionBackward},
    {"avx512", Isa::kAvx512, avx512::AttentionForward, avx512::AttentionBackward},
};

bool Runs(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(CpuFeatures::Best()); }

constexpr double kInf = std::numeric_limits<double>::infinity();

// kHoles: one row per batch element, with holes, key 0 and the last 9 keys dropped, and the last
// batch element keeping no key; kShared: one row (stride 0) for the whole batch, with holes.
enum class KeyMask { kNone, kHoles, kShared };

struct Case {
  const char* name;
  int64_t b, t, s, h, k, d;
  bool causal;
  int64_t left, right;  // -1, -1: no window
  float cap;
  KeyMask mask;
  int64_t bq, bk;
  float scale;  // 0: 1 / sqrt(d)
  float Scale() const { return scale > 0.f ? scale : 1.f / std::sqrt(static_cast<float>(d)); }
};

// head_dim 64: a multiple of every vector width (16, 8, 4 lanes; AVX-512's 2-vector tile
// exactly); 80 and 72: multiples of lanes, not of the 2- or 3-vector tiles; 36 and 20: not a
// multiple of 16 or 8 lanes; 3: under every width. Key lengths 150, 70, 66 leave 22 / 6 / 66 keys
// in the last block of 128 / 16 / 128 (66: causal query 64 meets a tile ending at key 65); query
// lengths 70, 150, 36 leave partial blocks of 64 and 8, and 65 a one-row block whose last query is
// the first key of a key block. Window 17,6 on blocks 8x16 has tiles wholly inside the window,
// tiles one key past it, and query blocks whose first key is the last of a key block.
const Case kCases[] = {
    {"T70 S150 D64 H4/K2", 2, 70, 150, 4, 2, 64, false, -1, -1, 0, KeyMask::kNone, 64, 128, 0},
    {"causal T150 S66 D80 H4/K4", 2, 150, 66, 4, 4, 80, true, -1, -1, 0, KeyMask::kNone, 64, 128,
     0},
    {"window 5,3 T70 S150 D72 H2/K1 blocks 8x16", 1, 70, 150, 2, 1, 72, false, 5, 3, 0,
     KeyMask::kNone, 8, 16, 0},
    {"causal window 16,0 T65 S70 D36 H4/K2 blocks 8x16", 2, 65, 70, 4, 2, 36, true, 16, 0, 0,
     KeyMask::kNone, 8, 16, 0},
    {"soft cap 30 scale 3 T70 S150 D20 H3/K1", 2, 70, 150, 3, 1, 20, false, -1, -1, 30.f,
     KeyMask::kNone, 64, 128, 3.f},
    {"key mask, causal, soft cap 30 T70 S150 D80 H4/K2 blocks 8x16", 2, 70, 150, 4, 2, 80, true,
     -1, -1, 30.f, KeyMask::kHoles, 8, 16, 0},
    {"key mask T70 S150 D64 H2/K2", 2, 70, 150, 2, 2, 64, false, -1, -1, 0, KeyMask::kHoles, 64,
     128, 0},
    {"shared key mask, window 17,6 T36 S33 D20 H2/K1 blocks 8x16", 2, 36, 33, 2, 1, 20, false,
     17, 6, 0, KeyMask::kShared, 8, 16, 0},
    {"causal T5 S7 D3 H2/K1", 1, 5, 7, 2, 1, 3, true, -1, -1, 0, KeyMask::kNone, 64, 128, 0},
    // Key blocks of 512: the value and dq products contract over more than the 256 rows that
    // the tail columns (72 = 4 x 16 + 8) are packed by at a time.
    {"T40 S600 D72 H2/K1 blocks 8x512", 1, 40, 600, 2, 1, 72, false, -1, -1, 0, KeyMask::kNone, 8,
     512, 0},
    // Queries past 12 + 2 attend no key: a query block straddling the edge, blocks wholly past.
    {"window 2,1 leaving rows without keys T40 S13 D16 H4/K2 blocks 8x16", 2, 40, 13, 4, 2, 16,
     false, 2, 1, 0, KeyMask::kNone, 8, 16, 0},
};

// One case's inputs (bfloat16-exact) and key mask, [B,T,H,D] q and dout, [B,S,K,D] k and v.
struct Inputs {
  std::vector<float> q, k, v, dout;
  std::vector<uint8_t> mask;
  int64_t mask_stride = 0;
  Inputs(const Case& c, int seed) {
    std::mt19937 gen(seed);
    q = RandomBf16Exact(c.b * c.t * c.h * c.d, &gen);
    k = RandomBf16Exact(c.b * c.s * c.k * c.d, &gen);
    v = RandomBf16Exact(c.b * c.s * c.k * c.d, &gen);
    dout = RandomBf16Exact(c.b * c.t * c.h * c.d, &gen);
    if (c.mask == KeyMask::kHoles) {
      mask_stride = c.s;
      for (int64_t bi = 0; bi < c.b; ++bi) {
        for (int64_t si = 0; si < c.s; ++si) {
          const bool keep = bi + 1 < c.b && si > 0 && si < c.s - 9 && (si * 7 + bi) % 5 != 0;
          mask.push_back(keep ? 1 : 0);
        }
      }
    } else if (c.mask == KeyMask::kShared) {
      for (int64_t si = 0; si < c.s; ++si) mask.push_back(si % 3 != 1 ? 1 : 0);
    }
  }
  bool Attends(const Case& c, int64_t bi, int64_t ti, int64_t si) const {
    if (!mask.empty() && mask[bi * mask_stride + si] == 0) return false;
    if (c.causal && si > ti) return false;
    return c.left < 0 || (si >= ti - c.left && si <= ti + c.right);
  }
};

int64_t QOff(const Case& c, int64_t bi, int64_t ti, int64_t hi) {
  return ((bi * c.t + ti) * c.h + hi) * c.d;
}
int64_t KOff(const Case& c, int64_t bi, int64_t si, int64_t kh) {
  return ((bi * c.s + si) * c.k + kh) * c.d;
}

// Query (bi, ti, hi)'s probabilities over the keys (0 where not attended), d(capped)/d(logit),
// which keys it attends, and its log-sum-exp (-inf: no key).
struct Row {
  std::vector<double> p, dcap;
  std::vector<bool> on;
  double lse = -kInf;
};

Row ReferenceRow(const Case& c, const Inputs& in, int64_t bi, int64_t ti, int64_t hi) {
  Row r{std::vector<double>(c.s, 0.0), std::vector<double>(c.s, 1.0),
        std::vector<bool>(c.s, false)};
  std::vector<double> x(c.s, -kInf);
  double m = -kInf;
  const int64_t kh = hi / (c.h / c.k);
  for (int64_t si = 0; si < c.s; ++si) {
    if (!in.Attends(c, bi, ti, si)) continue;
    double dot = 0;
    for (int64_t di = 0; di < c.d; ++di) {
      dot += double(in.q[QOff(c, bi, ti, hi) + di]) * in.k[KOff(c, bi, si, kh) + di];
    }
    x[si] = double(c.Scale()) * dot;
    if (c.cap > 0.f) {
      const double th = std::tanh(x[si] / c.cap);
      x[si] = c.cap * th;
      r.dcap[si] = 1.0 - th * th;
    }
    r.on[si] = true;
    m = std::max(m, x[si]);
  }
  if (m == -kInf) return r;
  double sum = 0;
  for (int64_t si = 0; si < c.s; ++si) sum += r.on[si] ? std::exp(x[si] - m) : 0.0;
  r.lse = m + std::log(sum);
  for (int64_t si = 0; si < c.s; ++si) r.p[si] = r.on[si] ? std::exp(x[si] - r.lse) : 0.0;
  return r;
}

// out [B,T,H,D], lse [B,H,T], dq [B,T,H,D], dk and dv [B,S,K,D]; no_key [B,T,H]: the row attends
// no key; unused [B,S,K]: no query attends the key.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
  std::vector<char> no_key, unused;
};

// The forward, and the backward of sum(out * dout) given out_in (the saved output).
Reference Compute(const Case& c, const Inputs& in, const std::vector<float>* out_in) {
  Reference ref{std::vector<double>(in.q.size()), std::vector<double>(c.b * c.h * c.t),
                std::vector<double>(in.q.size()), std::vector<double>(in.k.size()),
                std::vector<double>(in.k.size()), std::vector<char>(c.b * c.t * c.h),
                std::vector<char>(c.b * c.s * c.k, 1)};
  for (int64_t bi = 0; bi < c.b; ++bi) {
    for (int64_t ti = 0; ti < c.t; ++ti) {
      for (int64_t hi = 0; hi < c.h; ++hi) {
        const Row r = ReferenceRow(c, in, bi, ti, hi);
        const int64_t kh = hi / (c.h / c.k), qo = QOff(c, bi, ti, hi);
        ref.lse[(bi * c.h + hi) * c.t + ti] = r.lse;
        ref.no_key[(bi * c.t + ti) * c.h + hi] = r.lse == -kInf;
        double delta = 0;
        for (int64_t di = 0; di < c.d && out_in != nullptr; ++di) {
          delta += double(in.dout[qo + di]) * (*out_in)[qo + di];
        }
        for (int64_t si = 0; si < c.s; ++si) {
          if (!r.on[si]) continue;
          const int64_t ko = KOff(c, bi, si, kh);
          ref.unused[(bi * c.s + si) * c.k + kh] = 0;
          double dp = 0;
          for (int64_t di = 0; di < c.d; ++di) {
            ref.out[qo + di] += r.p[si] * in.v[ko + di];
            dp += double(in.dout[qo + di]) * in.v[ko + di];
          }
          const double ds = r.p[si] * (dp - delta) * r.dcap[si] * c.Scale();
          for (int64_t di = 0; di < c.d; ++di) {
            ref.dq[qo + di] += ds * in.k[ko + di];
            ref.dk[ko + di] += ds * in.q[qo + di];
            ref.dv[ko + di] += r.p[si] * in.dout[qo + di];
          }
        }
      }
    }
  }
  return ref;
}

// got against want (tolerance in the header comment); entries of rows [i / d] that `zero` flags
// must be exactly 0, -inf wants exactly -inf. Names the first mismatch by its row of [b][n1][n2].
void Expect(const std::vector<float>& got, const std::vector<double>& want,
            const std::vector<char>& zero, int64_t n1, int64_t n2, int64_t d, double tol,
            const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double max_abs = 0;
  for (double w : want) max_abs = std::isfinite(w) ? std::max(max_abs, std::fabs(w)) : max_abs;
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t row = i / d;
    const bool exact = !zero.empty() && zero[row];
    const double w = exact ? 0.0 : want[i];
    const bool ok = (exact || std::isinf(w)) ? got[i] == w : std::fabs(got[i] - w) <= tol * max_abs;
    ASSERT_TRUE(ok) << what << " [" << row / (n1 * n2) << ", " << row / n2 % n1 << ", "
                    << row % n2 << ", " << i % d << "]: got " << got[i] << ", want " << w
                    << ", tolerance " << (exact || std::isinf(w) ? 0.0 : tol * max_abs);
  }
}

AttentionArgs Args(const Case& c, const Inputs& in, bool bf16) {
  AttentionArgs a;
  a.batch = c.b, a.q_len = c.t, a.heads = c.h, a.head_dim = c.d, a.kv_len = c.s,
  a.kv_heads = c.k;
  a.scale = c.Scale();
  a.causal = c.causal;
  a.window_left = c.left, a.window_right = c.right;
  a.soft_cap = c.cap;
  if (!in.mask.empty()) a.key_mask = in.mask.data(), a.key_mask_batch_stride = in.mask_stride;
  a.block_q = c.bq, a.block_k = c.bk;
  a.type = bf16 ? ElementType::kBF16 : ElementType::kF32;
  return a;
}

TEST(AttentionKernel, ForwardMatchesTheDefinition) {
  for (const Case& c : kCases) {
    const Inputs in(c, static_cast<int>(&c - kCases) + 1);
    const Reference ref = Compute(c, in, nullptr);
    for (bool bf16 : {false, true}) {
      for (const Variant& var : kVariants) {
        if (!Runs(var.isa)) continue;
        TestBuffer q(in.q, bf16), k(in.k, bf16), v(in.v, bf16), out(in.q.size(), bf16);
        std::vector<float> lse(ref.lse.size(), std::numeric_limits<float>::quiet_NaN());
        AttentionArgs a = Args(c, in, bf16);
        a.q = q.data(), a.k = k.data(), a.v = v.data(), a.out = out.data(), a.lse = lse.data();
        var.forward(a);
        const std::string what = std::string(var.name) + (bf16 ? " bf16 " : " f32 ") + c.name;
        Expect(out.Floats(), ref.out, ref.no_key, c.t, c.h, c.d, bf16 ? 1e-2 : 1e-4,
               what + ": out[b, t, h, d]");
        Expect(lse, ref.lse, {}, c.h, c.t, 1, 1e-4, what + ": lse[b, h, t, 0]");
      }
    }
  }
}

TEST(AttentionKernel, BackwardMatchesTheDefinition) {
  for (const Case& c : kCases) {
    const Inputs in(c, static_cast<int>(&c - kCases) + 101);
    const Reference fwd = Compute(c, in, nullptr);
    std::vector<float> lse_in(fwd.lse.begin(), fwd.lse.end());
    for (bool bf16 : {false, true}) {
      const TestBuffer out_in(std::vector<float>(fwd.out.begin(), fwd.out.end()), bf16);
      const std::vector<float> out_given = out_in.Floats();
      const Reference ref = Compute(c, in, &out_given);
      for (const Variant& var : kVariants) {
        if (!Runs(var.isa)) continue;
        TestBuffer q(in.q, bf16), k(in.k, bf16), v(in.v, bf16), dout(in.dout, bf16), o = out_in;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> dq(in.q.size(), nan), dk(in.k.size(), nan), dv(in.k.size(), nan);
        AttentionArgs a = Args(c, in, bf16);
        a.q = q.data(), a.k = k.data(), a.v = v.data(), a.out_in = o.data();
        a.lse_in = lse_in.data(), a.dout = dout.data();
        a.dq = dq.data(), a.dk = dk.data(), a.dv = dv.data();
        var.backward(a);
        const std::string what = std::string(var.name) + (bf16 ? " bf16 " : " f32 ") + c.name;
        Expect(dq, ref.dq, ref.no_key, c.t, c.h, c.d, 1e-4, what + ": dq[b, t, h, d]");
        Expect(dk, ref.dk, ref.unused, c.s, c.k, c.d, 1e-4, what + ": dk[b, s, k, d]");
        Expect(dv, ref.dv, ref.unused, c.s, c.k, c.d, 1e-4, what + ": dv[b, s, k, d]");
      }
    }
  }
}

}  // namespace
}  // namespace pjrtkit_kernels
