// Compiled once per instruction set: PJRTKIT_ISA and PJRTKIT_VEC_WIDTH come from BUILD.
//
// Passes over memory per call (what bounds these kernels at large shapes): the forward reads x
// once and writes y once; the backward reads x and dy once each and writes dx once. Everything
// else (statistics, the row sums of the gradient) is recomputed from a row that is already in
// L1/L2: a 4096-channel float32 row is 16 KiB.
#include "kernels/layer_norm/native/layer_norm_kernel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/native/parallel_for.h"
#include "kernels/native/scratch.h"
#include "kernels/native/simd.h"

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace {

constexpr int64_t kElementsPerItem = 1 << 15;  // Work per claimed item: ~10 us or more.
// Backward: rows are cut into at most this many chunks, fixed by the shape alone; each chunk sums
// its own dscale/doffset partials, and the partials are added in chunk order. So the parameter
// gradients do not depend on the number of threads or on which thread ran which chunk.
constexpr int64_t kMaxChunks = 64;

int64_t RowsPerItem(int64_t channels) {
  return std::max<int64_t>(1, kElementsPerItem / std::max<int64_t>(1, channels));
}

// Row `r` of `base` as float32: the buffer itself for float32 (no copy), else converted into
// `scratch` (c floats).
const float* RowF32(ElementType type, const void* base, int64_t r, int64_t c, float* scratch) {
  if (type == ElementType::kF32) return static_cast<const float*>(base) + r * c;
  LoadRow(type, base, r * c, c, scratch);
  return scratch;
}

// Where row `r` of a `type` output is written as float32: in place for float32, else `scratch`
// (then FinishRow converts it).
float* OutRowF32(ElementType type, void* base, int64_t r, int64_t c, float* scratch) {
  if (type == ElementType::kF32) return static_cast<float*>(base) + r * c;
  return scratch;
}

void FinishRow(ElementType type, const float* row, int64_t r, int64_t c, void* base) {
  if (type != ElementType::kF32) StoreRow(type, row, c, base, r * c);
}

// sum(v[0:n]) with vector lanes.
float RowSum(const float* v, int64_t n) {
  VecF acc = Splat(0.f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc += Load(v + i);
  float s = Sum(acc);
  for (; i < n; ++i) s += v[i];
  return s;
}

// sum((v - c)^2) with vector lanes.
float RowSquares(const float* v, int64_t n, float c) {
  VecF acc = Splat(0.f);
  const VecF cv = Splat(c);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    VecF d = Load(v + i) - cv;
    acc += d * d;
  }
  float s = Sum(acc);
  for (; i < n; ++i) s += (v[i] - c) * (v[i] - c);
  return s;
}

// Mean and 1/sqrt(variance + epsilon) of one row; the forward and the backward both call this,
// so the backward's statistics are bit for bit the forward's.
struct RowStats {
  float mean;
  float rstd;
};

RowStats Stats(const float* x, int64_t c, const LayerNormArgs& a) {
  const float mean = a.subtract_mean ? RowSum(x, c) / c : 0.f;
  return {mean, 1.f / std::sqrt(RowSquares(x, c, mean) / c + a.epsilon)};
}

// The backward of one row: dx into `dx` (may be `dy`'s scratch), and, when `partials` is not
// null, dy * xhat and dy added to partials[0:c] and partials[c:2c].
void BackwardRow(const LayerNormArgs& a, const float* x, const float* dy, float* dx,
                 float* partials) {
  const int64_t c = a.channels;
  const RowStats st = Stats(x, c, a);
  const VecF mv = Splat(st.mean), rv = Splat(st.rstd);
  // sum(g), sum(g * xhat) with g = dy * scale, xhat = (x - mean) * rstd.
  VecF sg = Splat(0.f), sgx = Splat(0.f);
  int64_t i = 0;
  if (partials != nullptr) {
    float* ps = partials;
    float* po = partials + c;
    for (; i + kLanes <= c; i += kLanes) {
      const VecF xh = (Load(x + i) - mv) * rv;
      const VecF d = Load(dy + i);
      const VecF g = d * Load(a.scale + i);
      sg += g;
      sgx += g * xh;
      Store(ps + i, Load(ps + i) + d * xh);
      Store(po + i, Load(po + i) + d);
    }
  } else {
    for (; i + kLanes <= c; i += kLanes) {
      const VecF xh = (Load(x + i) - mv) * rv;
      const VecF g = Load(dy + i) * Load(a.scale + i);
      sg += g;
      sgx += g * xh;
    }
  }
  float sum_g = Sum(sg), sum_gx = Sum(sgx);
  for (; i < c; ++i) {
    const float xh = (x[i] - st.mean) * st.rstd;
    const float g = dy[i] * a.scale[i];
    sum_g += g;
    sum_gx += g * xh;
    if (partials != nullptr) {
      partials[i] += dy[i] * xh;
      partials[c + i] += dy[i];
    }
  }
  const float mg = a.subtract_mean ? sum_g / c : 0.f;
  const float mgx = sum_gx / c;
  const VecF mgv = Splat(mg), mgxv = Splat(mgx);
  for (i = 0; i + kLanes <= c; i += kLanes) {
    const VecF xh = (Load(x + i) - mv) * rv;
    const VecF g = Load(dy + i) * Load(a.scale + i);
    Store(dx + i, (g - mgv - xh * mgxv) * rv);
  }
  for (; i < c; ++i) {
    const float xh = (x[i] - st.mean) * st.rstd;
    dx[i] = (dy[i] * a.scale[i] - mg - xh * mgx) * st.rstd;
  }
}

// dscale / doffset: the chunks' partials ([chunks][2c]) added in chunk order.
void SumPartials(const LayerNormArgs& a, const float* partials, int64_t chunks) {
  const int64_t c = a.channels;
  std::fill(a.dscale, a.dscale + c, 0.f);
  std::fill(a.doffset, a.doffset + c, 0.f);
  for (int64_t k = 0; k < chunks; ++k) {
    const float* ps = partials + k * 2 * c;
    const float* po = ps + c;
    int64_t i = 0;
    for (; i + kLanes <= c; i += kLanes) {
      Store(a.dscale + i, Load(a.dscale + i) + Load(ps + i));
      Store(a.doffset + i, Load(a.doffset + i) + Load(po + i));
    }
    for (; i < c; ++i) {
      a.dscale[i] += ps[i];
      a.doffset[i] += po[i];
    }
  }
}

}  // namespace

void LayerNormForward(const LayerNormArgs& a) {
  const int64_t c = a.channels;
  const int64_t per = RowsPerItem(c);
  const int64_t items = (a.rows + per - 1) / per;
  const int workers = ParallelFor::Workers(items, 0);
  const bool convert = a.type != ElementType::kF32;
  std::vector<Scratch<float>> scratch(workers, Scratch<float>(convert ? 2 * c : 0));
  ParallelFor::Run(items, workers, [&](int w, int64_t item) {
    float* in_row = scratch[w].data();
    float* out_row = convert ? in_row + c : nullptr;
    const int64_t end = std::min(a.rows, (item + 1) * per);
    for (int64_t r = item * per; r < end; ++r) {
      const float* x = RowF32(a.type, a.x, r, c, in_row);
      float* y = OutRowF32(a.type, a.y, r, c, out_row);
      const RowStats st = Stats(x, c, a);
      const VecF mv = Splat(st.mean), rv = Splat(st.rstd);
      int64_t i = 0;
      for (; i + kLanes <= c; i += kLanes) {
        Store(y + i, (Load(x + i) - mv) * rv * Load(a.scale + i) + Load(a.offset + i));
      }
      for (; i < c; ++i) y[i] = (x[i] - st.mean) * st.rstd * a.scale[i] + a.offset[i];
      FinishRow(a.type, y, r, c, a.y);
      a.mean[r] = st.mean;
      a.rstd[r] = st.rstd;
    }
  });
}

void LayerNormBackward(const LayerNormArgs& a) {
  const int64_t c = a.channels;
  // Chunks of whole rows, their number fixed by the shape (see kMaxChunks).
  const int64_t chunk_rows = std::max(RowsPerItem(c), (a.rows + kMaxChunks - 1) / kMaxChunks);
  const int64_t chunks = (a.rows + chunk_rows - 1) / chunk_rows;
  const int workers = ParallelFor::Workers(chunks, 0);
  const bool convert = a.type != ElementType::kF32;
  // Per worker: x and dy rows converted to float32 (16-bit types only).
  std::vector<Scratch<float>> scratch(workers, Scratch<float>(convert ? 2 * c : 0));
  // Per chunk: dscale and doffset partials, written only by the chunk's worker.
  std::unique_ptr<float[]> partials(a.param_grads ? new float[chunks * 2 * c] : nullptr);
  ParallelFor::Run(chunks, workers, [&](int w, int64_t chunk) {
    float* x_row = scratch[w].data();
    float* dy_row = convert ? x_row + c : nullptr;
    float* part = nullptr;
    if (a.param_grads) {
      part = partials.get() + chunk * 2 * c;
      std::fill(part, part + 2 * c, 0.f);
    }
    const int64_t end = std::min(a.rows, (chunk + 1) * chunk_rows);
    for (int64_t r = chunk * chunk_rows; r < end; ++r) {
      const float* x = RowF32(a.type, a.x, r, c, x_row);
      const float* dy = RowF32(a.type, a.dy, r, c, dy_row);
      // 16-bit: dx overwrites the dy scratch row (element i is read before it is written).
      float* dx = OutRowF32(a.type, a.dx, r, c, dy_row);
      BackwardRow(a, x, dy, dx, part);
      FinishRow(a.type, dx, r, c, a.dx);
    }
  });
  if (a.param_grads) {
    SumPartials(a, partials.get(), chunks);
  } else {
    std::fill(a.dscale, a.dscale + c, 0.f);
    std::fill(a.doffset, a.doffset + c, 0.f);
  }
}

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
