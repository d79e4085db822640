// The native ragged_dot products of bfloat16 operands on AMX tiles (kernels/native/amx.h): the
// avx512 variant's RaggedRowsProduct and RaggedGroupsProduct hand them these calls when
// `args.amx`. Compiled once per instruction set like the rest of the kernel; empty except in the
// avx512 variant.
#include "kernels/ragged_dot/native/ragged_dot_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/native/parallel_for.h"
#include "kernels/native/scratch.h"
#include "kernels/native/simd.h"
#include "kernels/native/amx.h"

#if defined(PJRTKIT_ISA_AVX512)
namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {
namespace {

using amx::kBlock;
using amx::kStep;
using amx::RoundUp;

constexpr int64_t kMaxCols = 256;     // output columns per work item (8 packed B panels)
constexpr int64_t kRowChunk = 512;    // rows per work item of the rows product
constexpr int64_t kSubRows = 128;     // rows whose A blocks stay in L2 while the panels pass
constexpr int64_t kPassSteps = 32;    // contraction steps (of 32) per pass over the C blocks
constexpr int64_t kGroupRows = 128;   // output rows per work item of the groups product
constexpr int64_t kChunk = 1024;      // a group's rows packed at a time by the groups product
constexpr int64_t kPackOnceItems = 128;  // work items per group from which operands are packed once

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A column tile of at most kMaxCols, a multiple of 32, the tiles of `cols` (> 0) about equal.
int64_t ColumnTile(int64_t cols) {
  const int64_t tiles = CeilDiv(cols, kMaxCols);
  return RoundUp(CeilDiv(cols, tiles), kBlock);
}

// C [32 blocks x ldc] = (C when `accumulate`, else 0) + A x the packed B panels (panel j:
// columns 32 j .., `panel_stride` bfloat16 apart); A's block i (rows 32 i ..) is `a` advanced by
// i * a_block bfloat16, with `steps` steps. The contraction in passes of kPassSteps steps, whose
// A and B steps stay in L2 while every C block of the pass is updated.
void Blocks(amx::Rows a, int64_t a_block, int64_t blocks, int64_t steps, const uint16_t* b,
            int64_t panels, int64_t panel_stride, float* c, int64_t ldc, bool accumulate) {
  if (steps == 0) {
    if (!accumulate) std::fill(c, c + blocks * kBlock * ldc, 0.f);
    return;
  }
  for (int64_t s0 = 0; s0 < steps; s0 += kPassSteps) {
    const int64_t ns = std::min(kPassSteps, steps - s0);
    for (int64_t j = 0; j < panels; ++j) {
      for (int64_t i = 0; i < blocks; ++i) {
        amx::BlockProduct(ns, {a.data + i * a_block + s0 * a.step, a.ld, a.step},
                          b + j * panel_stride + s0 * kStep, c + i * kBlock * ldc + j * kBlock,
                          ldc, accumulate || s0 > 0);
      }
    }
  }
}

struct RowsItem {
  int64_t group, row0, row1, col0;
};

struct GroupsItem {
  int64_t group, i0, j0;
};

}  // namespace

void RaggedRowsProductAmx(const RaggedRowsArgs& a) {
  const int64_t depth = a.depth;
  const int64_t depth_pad = RoundUp(depth, kBlock);
  const int64_t a_block = depth_pad * kBlock;  // bfloat16 of one packed 32-row block
  const int64_t nc = ColumnTile(a.cols);
  const uint16_t* x = static_cast<const uint16_t*>(a.x);
  const uint16_t* w = static_cast<const uint16_t*>(a.w);
  // x packed once (PackA), each group's rows from its own block on (`first_block`), in
  // kRowChunk-row pieces packed in parallel: every column tile then reads contiguous tiles.
  std::vector<int64_t> first_block(a.groups.groups + 1, 0);
  std::vector<RowsItem> pieces;
  for (int64_t g = 0; g < a.groups.groups; ++g) {
    const int64_t rows = std::max<int64_t>(0, a.groups.end[g] - a.groups.start[g]);
    first_block[g + 1] = first_block[g] + CeilDiv(rows, kBlock);
    for (int64_t r0 = a.groups.start[g]; r0 < a.groups.end[g]; r0 += kRowChunk) {
      pieces.push_back({g, r0, std::min(r0 + kRowChunk, a.groups.end[g]), 0});
    }
  }
  // Not zero-filled here: PackA writes every element, tails included.
  std::unique_ptr<uint16_t[]> x_packed(new uint16_t[first_block.back() * a_block]);
  const auto block_of = [&](int64_t g, int64_t row) {
    return x_packed.get() + (first_block[g] + (row - a.groups.start[g]) / kBlock) * a_block;
  };
  ParallelFor::Run(static_cast<int64_t>(pieces.size()), 0, [&](int, int64_t i) {
    const RowsItem& p = pieces[i];
    amx::PackA(x + p.row0 * depth, depth, true, p.row1 - p.row0, depth, block_of(p.group, p.row0));
  });
  std::vector<RowsItem> items;
  for (const RowsItem& p : pieces) {
    for (int64_t c0 = 0; c0 < a.cols; c0 += nc) items.push_back({p.group, p.row0, p.row1, c0});
  }
  std::stable_sort(items.begin(), items.end(), [](const RowsItem& x, const RowsItem& y) {
    return x.row1 - x.row0 > y.row1 - y.row0;
  });
  const int64_t panel = depth_pad / kBlock * kStep;
  const int64_t b_size = nc / kBlock * panel;
  const int workers = ParallelFor::Workers(static_cast<int64_t>(items.size()), 0);
  std::vector<Scratch<uint16_t>> packed(workers, Scratch<uint16_t>(b_size));
  std::vector<Scratch<float>> c_blocks(workers, Scratch<float>(kSubRows * nc));
  ParallelFor::Run(static_cast<int64_t>(items.size()), workers, [&](int worker, int64_t i) {
    amx::TileScope tiles;
    uint16_t* bp = packed[worker].data();
    float* c = c_blocks[worker].data();
    const RowsItem& it = items[i];
    const int64_t ncw = std::min(nc, a.cols - it.col0);
    const int64_t panels = CeilDiv(ncw, kBlock);
    // B(p, j) = w[g][p][col0 + j], or w[g][col0 + j][p] when transposed.
    const uint16_t* wg = w + it.group * depth * a.cols;
    for (int64_t j = 0; j < panels; ++j) {
      const int64_t col = it.col0 + j * kBlock;
      const int64_t width = std::min(kBlock, ncw - j * kBlock);
      if (a.w_transposed) {
        amx::PackB(wg + col * depth, depth, false, depth, width, bp + j * panel);
      } else {
        amx::PackB(wg + col, a.cols, true, depth, width, bp + j * panel);
      }
    }
    for (int64_t r0 = it.row0; r0 < it.row1; r0 += kSubRows) {
      const int64_t mr = std::min(kSubRows, it.row1 - r0);
      Blocks({block_of(it.group, r0), kBlock, kBlock * kBlock}, a_block, CeilDiv(mr, kBlock),
             depth_pad / kBlock, bp, panels, panel, c, nc, false);
      for (int64_t r = 0; r < mr; ++r) {
        StoreRow(a.out_type, c + r * nc, ncw, a.out, (r0 + r) * a.cols + it.col0);
      }
    }
  });
}

namespace {

// RaggedGroupsProductAmx with each work item packing its own operands (see there).
void GroupsPackedPerItem(const RaggedGroupsArgs& a, int64_t nc) {
  const GroupRows& gr = a.groups;
  std::vector<GroupsItem> items;
  for (int64_t g = 0; g < gr.groups; ++g) {
    for (int64_t i0 = 0; i0 < a.x_cols; i0 += kGroupRows) {
      for (int64_t j0 = 0; j0 < a.y_cols; j0 += nc) items.push_back({g, i0, j0});
    }
  }
  std::stable_sort(items.begin(), items.end(), [&gr](const GroupsItem& x, const GroupsItem& y) {
    return gr.end[x.group] - gr.start[x.group] > gr.end[y.group] - gr.start[y.group];
  });
  // The contraction (a group's rows) in chunks of kChunk rows, packed per chunk.
  const int64_t panel = kChunk / kBlock * kStep;
  const int64_t b_size = nc / kBlock * panel;
  const int64_t a_size = kGroupRows * kChunk;
  const int workers = ParallelFor::Workers(static_cast<int64_t>(items.size()), 0);
  std::vector<Scratch<uint16_t>> packed(workers, Scratch<uint16_t>(b_size + a_size));
  std::vector<Scratch<float>> c_blocks(workers, Scratch<float>(kGroupRows * nc));
  const uint16_t* x = static_cast<const uint16_t*>(a.x);
  const uint16_t* y = static_cast<const uint16_t*>(a.y);
  ParallelFor::Run(static_cast<int64_t>(items.size()), workers, [&](int worker, int64_t i) {
    amx::TileScope tiles;
    uint16_t* bp = packed[worker].data();
    uint16_t* ap = bp + b_size;
    float* c = c_blocks[worker].data();
    const GroupsItem& it = items[i];
    const int64_t start = gr.start[it.group];
    const int64_t rows = std::max<int64_t>(0, gr.end[it.group] - start);
    const int64_t mcw = std::min(kGroupRows, a.x_cols - it.i0);
    const int64_t ncw = std::min(nc, a.y_cols - it.j0);
    const int64_t panels = CeilDiv(ncw, kBlock);
    if (rows == 0) std::fill(c, c + kGroupRows * nc, 0.f);
    for (int64_t k0 = 0; k0 < rows; k0 += kChunk) {
      const int64_t kc = std::min(kChunk, rows - k0);
      // A(i, k) = x[start + k0 + k][i0 + i]; B(k, j) = y[start + k0 + k][j0 + j].
      amx::PackA(x + (start + k0) * a.x_cols + it.i0, a.x_cols, false, mcw, kc, ap);
      for (int64_t j = 0; j < panels; ++j) {
        amx::PackB(y + (start + k0) * a.y_cols + it.j0 + j * kBlock, a.y_cols, true, kc,
                   std::min(kBlock, ncw - j * kBlock), bp + j * panel);
      }
      const int64_t steps = RoundUp(kc, kBlock) / kBlock;
      Blocks({ap, kBlock, kBlock * kBlock}, steps * kBlock * kBlock, CeilDiv(mcw, kBlock), steps,
             bp, panels, panel, c, nc, k0 > 0);
    }
    const int64_t base = it.group * a.x_cols * a.y_cols;
    for (int64_t r = 0; r < mcw; ++r) {
      StoreRow(a.out_type, c + r * nc, ncw, a.out, base + (it.i0 + r) * a.y_cols + it.j0);
    }
  });
}

// RaggedGroupsProductAmx with every operand packed once per call (see there).
void GroupsPackedOnce(const RaggedGroupsArgs& a, int64_t nc) {
  const GroupRows& gr = a.groups;
  const uint16_t* x = static_cast<const uint16_t*>(a.x);
  const uint16_t* y = static_cast<const uint16_t*>(a.y);
  // Each group's x^T (A: x_cols rows, the group's rows the contraction) and y (B panels),
  // 32 columns of x or y per piece, pieces in parallel; the work items then only multiply.
  const int64_t x_blocks = CeilDiv(a.x_cols, kBlock), y_panels = CeilDiv(a.y_cols, kBlock);
  std::vector<int64_t> steps(gr.groups), first_step(gr.groups + 1, 0);
  for (int64_t g = 0; g < gr.groups; ++g) {
    steps[g] = CeilDiv(std::max<int64_t>(0, gr.end[g] - gr.start[g]), kBlock);
    first_step[g + 1] = first_step[g] + steps[g];
  }
  // Group g's A block i at a_packed + (first_step[g] * x_blocks + i * steps[g]) * 32 * 32, its B
  // panel j at b_packed + (first_step[g] * y_panels + j * steps[g]) * kStep.
  std::unique_ptr<uint16_t[]> a_packed(
      new uint16_t[first_step.back() * x_blocks * kBlock * kBlock]);
  std::unique_ptr<uint16_t[]> b_packed(new uint16_t[first_step.back() * y_panels * kStep]);
  const auto a_block = [&](int64_t g, int64_t i) {
    return a_packed.get() + (first_step[g] * x_blocks + i * steps[g]) * kBlock * kBlock;
  };
  const auto b_panel = [&](int64_t g, int64_t j) {
    return b_packed.get() + (first_step[g] * y_panels + j * steps[g]) * kStep;
  };
  const int64_t pieces = gr.groups * (x_blocks + y_panels);
  ParallelFor::Run(pieces, 0, [&](int, int64_t p) {
    const int64_t g = p / (x_blocks + y_panels), q = p % (x_blocks + y_panels);
    if (steps[g] == 0) return;
    const int64_t rows = gr.end[g] - gr.start[g];
    if (q < x_blocks) {  // A(i, k) = x[start + k][32 q + i]
      amx::PackA(x + gr.start[g] * a.x_cols + q * kBlock, a.x_cols, false,
                 std::min(kBlock, a.x_cols - q * kBlock), rows, a_block(g, q));
    } else {  // B(k, j) = y[start + k][32 j + j']
      const int64_t j = q - x_blocks;
      amx::PackB(y + gr.start[g] * a.y_cols + j * kBlock, a.y_cols, true, rows,
                 std::min(kBlock, a.y_cols - j * kBlock), b_panel(g, j));
    }
  });
  std::vector<GroupsItem> items;
  for (int64_t g = 0; g < gr.groups; ++g) {
    for (int64_t i0 = 0; i0 < a.x_cols; i0 += kGroupRows) {
      for (int64_t j0 = 0; j0 < a.y_cols; j0 += nc) items.push_back({g, i0, j0});
    }
  }
  std::stable_sort(items.begin(), items.end(), [&steps](const GroupsItem& u, const GroupsItem& v) {
    return steps[u.group] > steps[v.group];
  });
  const int workers = ParallelFor::Workers(static_cast<int64_t>(items.size()), 0);
  std::vector<Scratch<float>> c_blocks(workers, Scratch<float>(kGroupRows * nc));
  ParallelFor::Run(static_cast<int64_t>(items.size()), workers, [&](int worker, int64_t i) {
    amx::TileScope tiles;
    float* c = c_blocks[worker].data();
    const GroupsItem& it = items[i];
    const int64_t g = it.group;
    const int64_t mcw = std::min(kGroupRows, a.x_cols - it.i0);
    const int64_t ncw = std::min(nc, a.y_cols - it.j0);
    Blocks({a_block(g, it.i0 / kBlock), kBlock, kBlock * kBlock}, steps[g] * kBlock * kBlock,
           CeilDiv(mcw, kBlock), steps[g], b_panel(g, it.j0 / kBlock), CeilDiv(ncw, kBlock),
           steps[g] * kStep, c, nc, false);
    const int64_t base = g * a.x_cols * a.y_cols;
    for (int64_t r = 0; r < mcw; ++r) {
      StoreRow(a.out_type, c + r * nc, ncw, a.out, base + (it.i0 + r) * a.y_cols + it.j0);
    }
  });
}

}  // namespace

void RaggedGroupsProductAmx(const RaggedGroupsArgs& a) {
  // Work items of kGroupRows x nc outputs: packing per item repacks each column of x once per
  // column tile of y and each column of y once per row tile, which outweighed the products from
  // kPackOnceItems items per group on (2 cores, bfloat16: 2048 x 2048 x 4096 per item 47.5 ms,
  // packed once 28.9 ms; 1024 x 1024, 32 items, per item 9.2 ms, once 13.3 ms).
  const int64_t nc = ColumnTile(a.y_cols);
  if (CeilDiv(a.x_cols, kGroupRows) * CeilDiv(a.y_cols, nc) >= kPackOnceItems) {
    GroupsPackedOnce(a, nc);
  } else {
    GroupsPackedPerItem(a, nc);
  }
}

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
#endif  // PJRTKIT_ISA_AVX512
