#include "xla_plugin/devices/sim/kernels/box_copy.h"

#include <algorithm>
#include <cstring>

namespace pjrtkit {
namespace sim {
namespace {

// Copies n elements of N bytes between byte-strided rows (memcpy of a constant size compiles to
// one load and store).
template <int N>
void CopyRow(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst, src, N);
    src += ss;
    dst += ds;
  }
}

// Tile edge (elements) of the transposing loop: 32 x 32 tiles of up to 8-byte elements keep the
// 32 source lines a tile reads in L1 while its destination rows are written.
constexpr int64_t kTile = 32;

// Outer loop positions kept on the stack before Run falls back to the heap.
constexpr int kInlineRank = 16;

// Calls body(src, dst) for every index of dims[0..num) except dimension `skip` (-1: none), with
// src and dst advanced by the byte strides.
template <typename Body>
void ForEachOuter(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
                  const std::vector<int64_t>& ds, int num, int skip, const char* src, char* dst,
                  Body body) {
  int64_t inline_index[kInlineRank] = {};
  std::vector<int64_t> heap_index;
  int64_t* index = inline_index;
  if (num > kInlineRank) {
    heap_index.assign(num, 0);
    index = heap_index.data();
  }
  while (true) {
    body(src, dst);
    int k = num - 1;
    for (; k >= 0; --k) {
      if (k == skip) continue;
      if (++index[k] < dims[k]) {
        src += ss[k];
        dst += ds[k];
        break;
      }
      src -= ss[k] * (dims[k] - 1);
      dst -= ds[k] * (dims[k] - 1);
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace

BoxCopy::BoxCopy(int64_t element_bytes, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dst_strides)
    : element_bytes_(element_bytes) {
  num_elements_ = 1;
  for (int64_t d : dims) num_elements_ *= d;
  switch (element_bytes) {
    case 1:
      row_fn_ = &CopyRow<1>;
      break;
    case 2:
      row_fn_ = &CopyRow<2>;
      break;
    case 4:
      row_fn_ = &CopyRow<4>;
      break;
    case 8:
      row_fn_ = &CopyRow<8>;
      break;
    case 16:
      row_fn_ = &CopyRow<16>;
      break;
    default:
      row_fn_ = nullptr;
      break;
  }
  if (num_elements_ == 0) {
    mode_ = Mode::kEmpty;
    return;
  }
  // Drop unit dimensions; merge a dimension into the one outside it when both layouts continue
  // contiguously.
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    const int64_t ss = src_strides[k] * element_bytes, ds = dst_strides[k] * element_bytes;
    if (!dims_.empty() && src_strides_.back() == ss * dims[k] &&
        dst_strides_.back() == ds * dims[k]) {
      dims_.back() *= dims[k];
      src_strides_.back() = ss;
      dst_strides_.back() = ds;
      continue;
    }
    dims_.push_back(dims[k]);
    src_strides_.push_back(ss);
    dst_strides_.push_back(ds);
  }
  if (dims_.empty() ||
      (dims_.size() == 1 && src_strides_[0] == element_bytes && dst_strides_[0] == element_bytes)) {
    mode_ = Mode::kContiguous;
    return;
  }
  const int last = static_cast<int>(dims_.size()) - 1;
  if (src_strides_[last] == element_bytes && dst_strides_[last] == element_bytes) {
    mode_ = Mode::kRows;
    return;
  }
  mode_ = Mode::kElements;
  if (row_fn_ == nullptr || dst_strides_[last] != element_bytes || dims_[last] < 4) return;
  for (int k = 0; k < last; ++k) {
    if (src_strides_[k] == element_bytes && dims_[k] >= 4) {
      mode_ = Mode::kTiles;
      tile_dim_ = k;
      return;
    }
  }
}

void BoxCopy::RunTiles(const char* src, char* dst) const {
  const int last = static_cast<int>(dims_.size()) - 1;
  const int64_t na = dims_[tile_dim_], nl = dims_[last];
  const int64_t sa = src_strides_[tile_dim_], da = dst_strides_[tile_dim_];
  const int64_t sl = src_strides_[last], dl = dst_strides_[last];
  for (int64_t a0 = 0; a0 < na; a0 += kTile) {
    const int64_t a1 = std::min(na, a0 + kTile);
    for (int64_t l0 = 0; l0 < nl; l0 += kTile) {
      const int64_t count = std::min(nl - l0, kTile);
      for (int64_t a = a0; a < a1; ++a) {
        row_fn_(src + a * sa + l0 * sl, sl, dst + a * da + l0 * dl, dl, count);
      }
    }
  }
}

void BoxCopy::Run(const char* src, char* dst) const {
  const int last = static_cast<int>(dims_.size()) - 1;
  switch (mode_) {
    case Mode::kEmpty:
      return;
    case Mode::kContiguous:
      std::memcpy(dst, src, static_cast<size_t>(num_elements_ * element_bytes_));
      return;
    case Mode::kRows: {
      const size_t row_bytes = static_cast<size_t>(dims_[last] * element_bytes_);
      ForEachOuter(dims_, src_strides_, dst_strides_, last, -1, src, dst,
                   [row_bytes](const char* s, char* d) { std::memcpy(d, s, row_bytes); });
      return;
    }
    case Mode::kElements: {
      const int64_t n = dims_[last], ss = src_strides_[last], ds = dst_strides_[last];
      const int64_t eb = element_bytes_;
      RowFn fn = row_fn_;
      ForEachOuter(dims_, src_strides_, dst_strides_, last, -1, src, dst,
                   [fn, n, ss, ds, eb](const char* s, char* d) {
                     if (fn != nullptr) {
                       fn(s, ss, d, ds, n);
                       return;
                     }
                     for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, eb);
                   });
      return;
    }
    case Mode::kTiles:
      ForEachOuter(dims_, src_strides_, dst_strides_, last, tile_dim_, src, dst,
                   [this](const char* s, char* d) { RunTiles(s, d); });
      return;
  }
}

}  // namespace sim
}  // namespace pjrtkit
