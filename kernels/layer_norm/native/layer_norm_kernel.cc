// Compiled once per instruction set: PJRTKIT_ISA and PJRTKIT_VEC_WIDTH come from BUILD.
#include "kernels/layer_norm/native/layer_norm_kernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/native/parallel_for.h"
#include "kernels/native/simd.h"

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace {

constexpr int64_t kElementsPerItem = 1 << 15;  // Work per claimed item: ~10 us or more.

int64_t RowsPerItem(int64_t channels) {
  return std::max<int64_t>(1, kElementsPerItem / std::max<int64_t>(1, channels));
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

}  // namespace

void LayerNormForward(const LayerNormArgs& a) {
  const int64_t c = a.channels;
  const int64_t per = RowsPerItem(c);
  const int64_t items = (a.rows + per - 1) / per;
  const int workers = ParallelFor::Workers(items, 0);
  std::vector<std::vector<float>> scratch(workers, std::vector<float>(c));
  ParallelFor::Run(items, workers, [&](int w, int64_t item) {
    float* row = scratch[w].data();
    const int64_t end = std::min(a.rows, (item + 1) * per);
    for (int64_t r = item * per; r < end; ++r) {
      LoadRow(a.type, a.x, r * c, c, row);
      const float mean = a.subtract_mean ? RowSum(row, c) / c : 0.f;
      const float rstd = 1.f / std::sqrt(RowSquares(row, c, mean) / c + a.epsilon);
      const VecF mv = Splat(mean), rv = Splat(rstd);
      int64_t i = 0;
      for (; i + kLanes <= c; i += kLanes) {
        Store(row + i, (Load(row + i) - mv) * rv * Load(a.scale + i) + Load(a.offset + i));
      }
      for (; i < c; ++i) row[i] = (row[i] - mean) * rstd * a.scale[i] + a.offset[i];
      StoreRow(a.type, row, c, a.y, r * c);
      a.mean[r] = mean;
      a.rstd[r] = rstd;
    }
  });
}

void LayerNormBackward(const LayerNormArgs& a) {
  const int64_t c = a.channels;
  const int64_t per = RowsPerItem(c);
  const int64_t items = (a.rows + per - 1) / per;
  const int workers = ParallelFor::Workers(items, 0);
  // Per worker: x row, dy row, and partial dscale / doffset sums.
  std::vector<std::vector<float>> scratch(workers, std::vector<float>(4 * c, 0.f));
  ParallelFor::Run(items, workers, [&](int w, int64_t item) {
    float* x = scratch[w].data();
    float* dy = x + c;
    float* dscale = dy + c;
    float* doffset = dscale + c;
    const int64_t end = std::min(a.rows, (item + 1) * per);
    for (int64_t r = item * per; r < end; ++r) {
      LoadRow(a.type, a.x, r * c, c, x);
      LoadRow(a.type, a.dy, r * c, c, dy);
      const float mean = a.mean[r], rstd = a.rstd[r];
      const VecF mv = Splat(mean), rv = Splat(rstd);
      // x <- xhat; accumulate sum(g), sum(g * xhat) with g = dy * scale.
      VecF sg = Splat(0.f), sgx = Splat(0.f);
      int64_t i = 0;
      for (; i + kLanes <= c; i += kLanes) {
        const VecF xh = (Load(x + i) - mv) * rv;
        const VecF d = Load(dy + i);
        const VecF g = d * Load(a.scale + i);
        Store(x + i, xh);
        sg += g;
        sgx += g * xh;
        Store(dscale + i, Load(dscale + i) + d * xh);
        Store(doffset + i, Load(doffset + i) + d);
      }
      float sum_g = Sum(sg), sum_gx = Sum(sgx);
      for (; i < c; ++i) {
        const float xh = (x[i] - mean) * rstd;
        const float g = dy[i] * a.scale[i];
        x[i] = xh;
        sum_g += g;
        sum_gx += g * xh;
        dscale[i] += dy[i] * xh;
        doffset[i] += dy[i];
      }
      const float mg = a.subtract_mean ? sum_g / c : 0.f;
      const float mgx = sum_gx / c;
      const VecF mgv = Splat(mg), mgxv = Splat(mgx);
      for (i = 0; i + kLanes <= c; i += kLanes) {
        const VecF g = Load(dy + i) * Load(a.scale + i);
        Store(dy + i, (g - mgv - Load(x + i) * mgxv) * rv);
      }
      for (; i < c; ++i) dy[i] = (dy[i] * a.scale[i] - mg - x[i] * mgx) * rstd;
      StoreRow(a.type, dy, c, a.dx, r * c);
    }
  });
  for (int64_t i = 0; i < c; ++i) {
    float s = 0.f, o = 0.f;
    for (int w = 0; w < workers; ++w) {
      s += scratch[w][2 * c + i];
      o += scratch[w][3 * c + i];
    }
    a.dscale[i] = s;
    a.doffset[i] = o;
  }
}

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
