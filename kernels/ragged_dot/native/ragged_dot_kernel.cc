// Compiled once per instruction set: PJRTKIT_ISA and PJRTKIT_VEC_WIDTH come from BUILD.
#include "kernels/ragged_dot/native/ragged_dot_kernel.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/native/parallel_for.h"
#include "kernels/native/scratch.h"
#include "kernels/native/simd.h"

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace {

// The register tile: kMr rows x kNr columns (two vectors) of float32 accumulators, 24 of the
// 32 vector registers with AVX-512, 12 of the 16 with AVX2 and SSE.
constexpr int kNr = 2 * kLanes;
constexpr int kMr = kLanes >= 16 ? 12 : 6;
constexpr int64_t kKc = 256;           // contraction block: a kKc x kNr panel of B stays in L1
constexpr int64_t kMc = 8 * kMr;       // rows of A packed per contraction block (L2)
constexpr int64_t kMaxNc = 256;        // output columns per work item
constexpr int64_t kRowChunk = 4 * kMc;  // rows per work item of the rows product
constexpr int64_t kGroupsRowBlocks = 4;  // most kMc blocks of output rows per groups item

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A column tile of at most kMaxNc, a multiple of kNr, the tiles of `cols` (> 0) about equal.
int64_t ColumnTile(int64_t cols) {
  const int64_t tiles = CeilDiv(cols, kMaxNc);
  return CeilDiv(CeilDiv(cols, tiles), kNr) * kNr;
}

// A logical matrix M(r, c) over a buffer of `type`: element offset + r * ld + c, or, when
// `c_major`, offset + c * ld + r.
struct View {
  ElementType type;
  const void* data;
  int64_t offset;
  int64_t ld;
  bool c_major;
};

inline float ToFloat(float v) { return v; }
inline float ToFloat(uint16_t v) { return Bf16ToFloat(v); }

// The c_major case of Pack: a blocked transpose, 16 rows of M (contiguous in memory) at a time
// into a panel that stays in L1, so that reads are whole cache lines and writes stay local.
template <typename T>
void PackColumnMajor(const T* src, int64_t ld, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                     int width, float* dst) {
  constexpr int64_t kBlock = 16;
  for (int64_t p = 0; p * width < nc; ++p) {
    const int64_t w = std::min<int64_t>(width, nc - p * width);
    const T* base = src + (c0 + p * width) * ld + r0;
    float* panel = dst + p * nr * width;
    for (int64_t rb = 0; rb < nr; rb += kBlock) {
      const int64_t re = std::min(nr, rb + kBlock);
      for (int64_t c = 0; c < w; ++c) {
        const T* col = base + c * ld;
        for (int64_t r = rb; r < re; ++r) panel[r * width + c] = ToFloat(col[r]);
      }
    }
  }
}

// Copies the first `w` of kWidth floats of `src` to `dst`; a whole panel row is a memcpy of a
// constant size, which the compiler expands into vector moves (a library call per panel row
// cost more than its copy).
template <int kWidth>
inline void CopyPanelRow(const float* src, int64_t w, float* dst) {
  if (w == kWidth) {
    std::memcpy(dst, src, kWidth * sizeof(float));
  } else {
    std::memcpy(dst, src, w * sizeof(float));
  }
}

// The row-major case of Pack: each row of M read once (float32 in place, bfloat16 widened
// into `tmp`) and cut into its panels.
template <int kWidth>
void PackRowMajor(const View& m, int64_t r0, int64_t nr, int64_t c0, int64_t nc, float* dst,
                  float* tmp) {
  const int64_t panels = CeilDiv(nc, kWidth);
  const int64_t tail = nc - (panels - 1) * kWidth;
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t offset = m.offset + (r0 + r) * m.ld + c0;
    const float* row = tmp;
    if (m.type == ElementType::kF32) {
      row = static_cast<const float*>(m.data) + offset;
    } else {
      LoadRow(m.type, m.data, offset, nc, tmp);
    }
    for (int64_t p = 0; p < panels; ++p) {
      CopyPanelRow<kWidth>(row + p * kWidth, p + 1 < panels ? kWidth : tail,
                           dst + (p * nr + r) * kWidth);
    }
  }
}

// Packs M[r0, r0 + nr) x [c0, c0 + nc) as float32 panels of kWidth columns:
// dst[p][r][w] = M(r0 + r, c0 + p * kWidth + w), the last panel zero-padded. `tmp` holds nc
// floats.
template <int kWidth>
void Pack(const View& m, int64_t r0, int64_t nr, int64_t c0, int64_t nc, float* dst,
          float* tmp) {
  const int64_t panels = CeilDiv(nc, kWidth);
  const int64_t tail = nc - (panels - 1) * kWidth;
  if (tail < kWidth) {
    float* last = dst + (panels - 1) * nr * kWidth;
    std::fill(last, last + nr * kWidth, 0.f);
  }
  if (!m.c_major) {
    PackRowMajor<kWidth>(m, r0, nr, c0, nc, dst, tmp);
  } else if (m.type == ElementType::kF32) {
    PackColumnMajor(static_cast<const float*>(m.data) + m.offset, m.ld, r0, nr, c0, nc, kWidth,
                    dst);
  } else {
    PackColumnMajor(static_cast<const uint16_t*>(m.data) + m.offset, m.ld, r0, nr, c0, nc,
                    kWidth, dst);
  }
}

// C[kMr x kNr] (leading dimension ldc) += A [kc][kMr] x B [kc][kNr], both packed.
void MicroKernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  VecF acc[kMr][2];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    acc[r][0] = Load(c + r * ldc);
    acc[r][1] = Load(c + r * ldc + kLanes);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const VecF b0 = Load(b + p * kNr);
    const VecF b1 = Load(b + p * kNr + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      // A scalar times a vector: one broadcast per row.
      const float ar = a[p * kMr + r];
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    Store(c + r * ldc, acc[r][0]);
    Store(c + r * ldc + kLanes, acc[r][1]);
  }
}

// C += packed A (a_panels panels of kc x kMr) x packed B (b_panels panels of kc x kNr, panel j
// at b + j * b_stride). B's panel stays in L1 while A's panels pass over it.
void BlockProduct(int64_t kc, int64_t a_panels, const float* a, int64_t b_panels,
                  const float* b, int64_t b_stride, float* c, int64_t ldc) {
  for (int64_t jp = 0; jp < b_panels; ++jp) {
    for (int64_t ip = 0; ip < a_panels; ++ip) {
      MicroKernel(kc, a + ip * kc * kMr, b + jp * b_stride, c + ip * kMr * ldc + jp * kNr, ldc);
    }
  }
}

int64_t ElementBytes(ElementType type) { return type == ElementType::kF32 ? 4 : 2; }

// Rows [row0, row1) of one group times its matrix, output columns [col0, col0 + tile).
struct RowsItem {
  int64_t group, row0, row1, col0;
};

// Output rows [i0, i0 + tile) and columns [j0, j0 + tile) of one group's x^T y.
struct GroupsItem {
  int64_t group, i0, j0;
};

// Zeroes the rows of `out` [rows, cols] outside the local groups' run; returns false when no
// row is inside one (then all of `out` is zero).
bool ZeroRowsOutsideGroups(const RaggedRowsArgs& a) {
  int64_t lo = a.rows, hi = 0;
  for (int64_t g = 0; g < a.groups.groups; ++g) {
    if (a.groups.end[g] > a.groups.start[g]) {
      lo = std::min(lo, a.groups.start[g]);
      hi = std::max(hi, a.groups.end[g]);
    }
  }
  const int64_t row_bytes = a.cols * ElementBytes(a.out_type);
  char* out = static_cast<char*>(a.out);
  if (lo >= hi) {
    std::memset(out, 0, a.rows * row_bytes);
    return false;
  }
  std::memset(out, 0, lo * row_bytes);
  std::memset(out + hi * row_bytes, 0, (a.rows - hi) * row_bytes);
  return true;
}

}  // namespace

void RaggedRowsProduct(const RaggedRowsArgs& a) {
  if (a.rows == 0 || a.cols == 0) return;
  if (!ZeroRowsOutsideGroups(a)) return;
#if defined(PJRTKIT_ISA_AVX512)
  if (a.amx && a.x_type == ElementType::kBF16 && a.w_type == ElementType::kBF16) {
    RaggedRowsProductAmx(a);
    return;
  }
#endif
  const int64_t depth = a.depth;
  const int64_t nc = ColumnTile(a.cols);
  std::vector<RowsItem> items;
  for (int64_t g = 0; g < a.groups.groups; ++g) {
    for (int64_t r0 = a.groups.start[g]; r0 < a.groups.end[g]; r0 += kRowChunk) {
      for (int64_t c0 = 0; c0 < a.cols; c0 += nc) {
        items.push_back({g, r0, std::min(r0 + kRowChunk, a.groups.end[g]), c0});
      }
    }
  }
  // Largest items first, so that the last ones claimed are short.
  std::stable_sort(items.begin(), items.end(), [](const RowsItem& x, const RowsItem& y) {
    return x.row1 - x.row0 > y.row1 - y.row0;
  });
  const int64_t b_size = CeilDiv(nc, kNr) * kNr * depth;
  const int64_t a_size = kMc * kKc;
  const int64_t c_size = kMc * nc;
  const int64_t tmp_size = std::max({depth, nc, kKc});
  const int workers = ParallelFor::Workers(static_cast<int64_t>(items.size()), 0);
  std::vector<Scratch<float>> scratch(workers,
                                      Scratch<float>(b_size + a_size + c_size + tmp_size));
  ParallelFor::Run(static_cast<int64_t>(items.size()), workers, [&](int w, int64_t i) {
    float* bp = scratch[w].data();
    float* ap = bp + b_size;
    float* cb = ap + a_size;
    float* tmp = cb + c_size;
    const RowsItem& it = items[i];
    const int64_t ncw = std::min(nc, a.cols - it.col0);
    const int64_t b_panels = CeilDiv(ncw, kNr);
    // B(p, j) = w[g][p][j], or w[g][j][p] when transposed; all of depth packed once.
    const View wv{a.w_type, a.w, it.group * depth * a.cols, a.w_transposed ? depth : a.cols,
                  a.w_transposed};
    Pack<kNr>(wv, 0, depth, it.col0, ncw, bp, tmp);
    // A(row, p) = x[row][p], packed as M(p, row).
    const View xv{a.x_type, a.x, 0, depth, true};
    for (int64_t r0 = it.row0; r0 < it.row1; r0 += kMc) {
      const int64_t mr = std::min(kMc, it.row1 - r0);
      const int64_t a_panels = CeilDiv(mr, kMr);
      std::fill(cb, cb + a_panels * kMr * nc, 0.f);
      for (int64_t k0 = 0; k0 < depth; k0 += kKc) {
        const int64_t kc = std::min(kKc, depth - k0);
        Pack<kMr>(xv, k0, kc, r0, mr, ap, tmp);
        BlockProduct(kc, a_panels, ap, b_panels, bp + k0 * kNr, depth * kNr, cb, nc);
      }
      for (int64_t r = 0; r < mr; ++r) {
        StoreRow(a.out_type, cb + r * nc, ncw, a.out, (r0 + r) * a.cols + it.col0);
      }
    }
  });
}

void RaggedGroupsProduct(const RaggedGroupsArgs& a) {
  if (a.x_cols == 0 || a.y_cols == 0 || a.groups.groups == 0) return;
#if defined(PJRTKIT_ISA_AVX512)
  if (a.amx && a.x_type == ElementType::kBF16 && a.y_type == ElementType::kBF16) {
    RaggedGroupsProductAmx(a);
    return;
  }
#endif
  const int64_t nc = ColumnTile(a.y_cols);
  const int64_t col_tiles = CeilDiv(a.y_cols, nc);
  // Output rows per work item: up to kGroupsRowBlocks blocks of kMc, all sharing one packed
  // block of y per contraction step (y is packed once per item, so taller items pack it fewer
  // times), as long as the call still has 4 items per thread.
  int64_t mc = kMc;
  for (int64_t blocks = kGroupsRowBlocks; blocks > 1; blocks /= 2) {
    if (a.groups.groups * CeilDiv(a.x_cols, blocks * kMc) * col_tiles >=
        4 * ParallelFor::MaxThreads()) {
      mc = blocks * kMc;
      break;
    }
  }
  std::vector<GroupsItem> items;
  for (int64_t g = 0; g < a.groups.groups; ++g) {
    for (int64_t i0 = 0; i0 < a.x_cols; i0 += mc) {
      for (int64_t j0 = 0; j0 < a.y_cols; j0 += nc) items.push_back({g, i0, j0});
    }
  }
  const GroupRows& gr = a.groups;
  std::stable_sort(items.begin(), items.end(), [&gr](const GroupsItem& x, const GroupsItem& y) {
    return gr.end[x.group] - gr.start[x.group] > gr.end[y.group] - gr.start[y.group];
  });
  const int64_t b_size = CeilDiv(nc, kNr) * kNr * kKc;
  const int64_t a_size = kMc * kKc;
  const int64_t c_size = mc * nc;
  const int64_t tmp_size = std::max({nc, kMc, kKc});
  const int workers = ParallelFor::Workers(static_cast<int64_t>(items.size()), 0);
  std::vector<Scratch<float>> scratch(workers,
                                      Scratch<float>(b_size + a_size + c_size + tmp_size));
  // M(row, c) = x[row][c] and y[row][c]: the contraction runs over a group's rows.
  const View xv{a.x_type, a.x, 0, a.x_cols, false};
  const View yv{a.y_type, a.y, 0, a.y_cols, false};
  ParallelFor::Run(static_cast<int64_t>(items.size()), workers, [&](int w, int64_t i) {
    float* bp = scratch[w].data();
    float* ap = bp + b_size;
    float* cb = ap + a_size;
    float* tmp = cb + c_size;
    const GroupsItem& it = items[i];
    const int64_t start = gr.start[it.group];
    const int64_t rows = std::max<int64_t>(0, gr.end[it.group] - start);
    const int64_t mcw = std::min(mc, a.x_cols - it.i0);
    const int64_t ncw = std::min(nc, a.y_cols - it.j0);
    const int64_t b_panels = CeilDiv(ncw, kNr);
    std::fill(cb, cb + CeilDiv(mcw, kMr) * kMr * nc, 0.f);
    for (int64_t k0 = 0; k0 < rows; k0 += kKc) {
      const int64_t kc = std::min(kKc, rows - k0);
      Pack<kNr>(yv, start + k0, kc, it.j0, ncw, bp, tmp);
      for (int64_t s0 = 0; s0 < mcw; s0 += kMc) {
        const int64_t sub = std::min(kMc, mcw - s0);
        Pack<kMr>(xv, start + k0, kc, it.i0 + s0, sub, ap, tmp);
        BlockProduct(kc, CeilDiv(sub, kMr), ap, b_panels, bp, kc * kNr, cb + s0 * nc, nc);
      }
    }
    const int64_t base = it.group * a.x_cols * a.y_cols;
    for (int64_t r = 0; r < mcw; ++r) {
      StoreRow(a.out_type, cb + r * nc, ncw, a.out, base + (it.i0 + r) * a.y_cols + it.j0);
    }
  });
}

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
