#include "xla_plugin/devices/sim/kernels/window_geometry.h"

#include <algorithm>

#include "xla_plugin/devices/sim/kernels/reduction_types.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kMaxWindowParam = int64_t{1} << 40;
constexpr int64_t kMaxDilated = int64_t{1} << 61;

// Floor and ceiling of a / b for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

int64_t Gcd(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// x with a * x = 1 (mod m), for gcd(a, m) = 1 and m >= 1.
int64_t ModularInverse(int64_t a, int64_t m) {
  if (m == 1) return 0;
  __int128 old_r = a % m, r = m, old_s = 1, s = 0;
  while (r != 0) {
    const __int128 q = old_r / r;
    __int128 t = old_r - q * r;
    old_r = r;
    r = t;
    t = old_s - q * s;
    old_s = s;
    s = t;
  }
  __int128 x = old_s % m;
  if (x < 0) x += m;
  return static_cast<int64_t>(x);
}

// Checks the optional per-dimension vector `values` (name `name`): empty, or rank entries in
// [low, high]; fills `out` (default `fallback`).
Status OptionalVector(const char* op, const char* name, const std::vector<int64_t>* values,
                      size_t rank, int64_t low, int64_t high, int64_t fallback,
                      std::vector<int64_t>* out) {
  out->assign(rank, fallback);
  if (values == nullptr || values->empty()) return OkStatus();
  if (values->size() != rank) {
    return InvalidArgument(std::string(op) + ": " + name + " has " +
                           std::to_string(values->size()) + " entries (expected the rank " +
                           std::to_string(rank) + ")");
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t v = (*values)[d];
    if (v < low || v > high) {
      return InvalidArgument(std::string(op) + ": " + name + "[" + std::to_string(d) +
                             "] = " + std::to_string(v) + " (expected " + std::to_string(low) +
                             " <= it <= " + std::to_string(high) + ")");
    }
    (*out)[d] = v;
  }
  return OkStatus();
}

}  // namespace

Status MakeWindowDims(const char* op, const WindowAttributes& attributes,
                      const std::vector<int64_t>& input_dims, std::vector<WindowDim>* dims) {
  const size_t rank = input_dims.size();
  const std::vector<int64_t>* window = attributes.window_dimensions;
  if (window == nullptr || window->size() != rank) {
    return InvalidArgument(std::string(op) + ": window_dimensions has " +
                           std::to_string(window == nullptr ? 0 : window->size()) +
                           " entries (expected the rank " + std::to_string(rank) + ")");
  }
  std::vector<int64_t> sizes, strides, base, dilation;
  PJRTKIT_RETURN_IF_ERROR(
      OptionalVector(op, "window_dimensions", window, rank, 1, kMaxWindowParam, 1, &sizes));
  PJRTKIT_RETURN_IF_ERROR(OptionalVector(op, "window_strides", attributes.window_strides, rank, 1,
                                         kMaxWindowParam, 1, &strides));
  PJRTKIT_RETURN_IF_ERROR(OptionalVector(op, "base_dilations", attributes.base_dilations, rank, 1,
                                         kMaxWindowParam, 1, &base));
  PJRTKIT_RETURN_IF_ERROR(OptionalVector(op, "window_dilations", attributes.window_dilations, rank,
                                         1, kMaxWindowParam, 1, &dilation));
  const auto* padding = attributes.padding;
  if (padding != nullptr && !padding->empty() && padding->size() != rank) {
    return InvalidArgument(std::string(op) + ": padding has " + std::to_string(padding->size()) +
                           " rows (expected the rank " + std::to_string(rank) + ")");
  }
  dims->assign(rank, WindowDim());
  for (size_t d = 0; d < rank; ++d) {
    WindowDim& dim = (*dims)[d];
    dim.input = input_dims[d];
    dim.size = sizes[d];
    dim.stride = strides[d];
    dim.base_dilation = base[d];
    dim.window_dilation = dilation[d];
    if (padding != nullptr && !padding->empty()) {
      dim.pad_low = (*padding)[d].first;
      dim.pad_high = (*padding)[d].second;
      for (int64_t pad : {dim.pad_low, dim.pad_high}) {
        if (pad < -kMaxWindowParam || pad > kMaxWindowParam) {
          return InvalidArgument(std::string(op) + ": padding[" + std::to_string(d) + "] = (" +
                                 std::to_string(dim.pad_low) + ", " + std::to_string(dim.pad_high) +
                                 ") (expected values within +-" + std::to_string(kMaxWindowParam) +
                                 ")");
        }
      }
    }
    const __int128 dilated =
        dim.input == 0 ? 0 : static_cast<__int128>(dim.input - 1) * dim.base_dilation + 1;
    if (dilated > kMaxDilated) {
      return InvalidArgument(std::string(op) + ": dimension " + std::to_string(d) +
                             " dilated by base_dilations is too large (expected at most " +
                             std::to_string(kMaxDilated) + " elements)");
    }
    const __int128 padded = dilated + dim.pad_low + dim.pad_high;
    const __int128 window_span = static_cast<__int128>(dim.size - 1) * dim.window_dilation + 1;
    const bool empty = padded <= 0 || window_span > padded;
    dim.output = empty ? 0 : static_cast<int64_t>((padded - window_span) / dim.stride + 1);
  }
  return OkStatus();
}

std::vector<int64_t> WindowOutputDims(const std::vector<WindowDim>& dims) {
  std::vector<int64_t> out;
  for (const WindowDim& dim : dims) out.push_back(dim.output);
  return out;
}

Progression ValidPositions(const WindowDim& dim, int64_t k) {
  Progression p;
  if (dim.output == 0 || dim.input == 0) return p;
  const int64_t s = dim.stride;
  const int64_t bd = dim.base_dilation;
  const int64_t c = k * dim.window_dilation - dim.pad_low;  // Output o reads p = o * s + c.
  const int64_t last = (dim.input - 1) * bd;                // Largest p of an input element.
  const int64_t o_min = c >= 0 ? 0 : CeilDiv(-c, s);
  if (last - c < 0) return p;
  const int64_t o_max = std::min(dim.output - 1, FloorDiv(last - c, s));
  if (o_min > o_max) return p;
  int64_t first = o_min;
  int64_t step = 1;
  if (bd > 1) {
    // o * s + c = 0 (mod bd): solvable when gcd(s, bd) divides -c; then o = o0 (mod bd / g).
    const int64_t g = Gcd(s, bd);
    int64_t r = (-c) % bd;
    if (r < 0) r += bd;
    if (r % g != 0) return p;
    step = bd / g;
    const __int128 solution =
        static_cast<__int128>(r / g) * ModularInverse((s / g) % step, step) % step;
    int64_t shift = (static_cast<int64_t>(solution) - o_min) % step;
    if (shift < 0) shift += step;
    first = o_min + shift;
    if (first > o_max) return p;
  }
  p.count = (o_max - first) / step + 1;
  p.first = first;
  p.step = step;
  p.in_first = (first * s + c) / bd;
  p.in_step = step * s / bd;
  return p;
}

void ReachingOffsets(const WindowDim& dim, int64_t* first, int64_t* last) {
  *first = 0;
  *last = -1;
  if (dim.output == 0 || dim.input == 0) return;
  const int64_t wd = dim.window_dilation;
  const int64_t top = (dim.input - 1) * dim.base_dilation;  // Largest position of an element.
  *first = std::max<int64_t>(0, CeilDiv(dim.pad_low - (dim.output - 1) * dim.stride, wd));
  *last = std::min<int64_t>(dim.size - 1, FloorDiv(top + dim.pad_low, wd));
}

int64_t CountReachingOffsets(const std::vector<WindowDim>& dims) {
  constexpr int64_t kSaturated = int64_t{1} << 62;
  int64_t count = 1;
  for (const WindowDim& dim : dims) {
    int64_t first, last;
    ReachingOffsets(dim, &first, &last);
    const int64_t n = std::max<int64_t>(0, last - first + 1);
    if (n == 0) return 0;
    count = count > kSaturated / n ? kSaturated : count * n;
  }
  return count;
}

OffsetIterator::OffsetIterator(const std::vector<WindowDim>& dims) {
  for (const WindowDim& dim : dims) {
    int64_t first, last;
    ReachingOffsets(dim, &first, &last);
    if (first > last) valid_ = false;
    first_.push_back(first);
    last_.push_back(last);
  }
  offset_ = first_;
}

void OffsetIterator::Advance() {
  for (int d = static_cast<int>(offset_.size()) - 1; d >= 0; --d) {
    if (++offset_[d] <= last_[d]) return;
    offset_[d] = first_[d];
  }
  valid_ = false;
}

PairBox::PairBox(const std::vector<Progression>& progressions,
                 const std::vector<int64_t>& out_strides, const std::vector<int64_t>& in_strides) {
  size_ = 1;
  for (size_t d = 0; d < progressions.size(); ++d) {
    const Progression& p = progressions[d];
    count_.push_back(p.count);
    out_step_.push_back(p.step * out_strides[d]);
    in_step_.push_back(p.in_step * in_strides[d]);
    out_ += p.first * out_strides[d];
    in_ += p.in_first * in_strides[d];
    size_ *= p.count;
  }
  index_.assign(progressions.size(), 0);
}

int64_t PairBox::Next(int64_t max, int64_t* out_offsets, int64_t* in_offsets) {
  int64_t produced = 0;
  const int rank = static_cast<int>(count_.size());
  if (rank == 0) {
    if (done_ < size_ && max > 0) {
      out_offsets[0] = out_;
      in_offsets[0] = in_;
      done_ = size_;
      return 1;
    }
    return 0;
  }
  const int last = rank - 1;
  while (produced < max && done_ < size_) {
    // A run along the last dimension, then the carry into the outer ones.
    const int64_t take = std::min(count_[last] - index_[last], max - produced);
    const int64_t out_step = out_step_[last], in_step = in_step_[last];
    for (int64_t j = 0; j < take; ++j) {
      out_offsets[produced + j] = out_ + j * out_step;
      in_offsets[produced + j] = in_ + j * in_step;
    }
    produced += take;
    done_ += take;
    index_[last] += take;
    out_ += take * out_step;
    in_ += take * in_step;
    if (index_[last] < count_[last]) break;
    out_ -= count_[last] * out_step;
    in_ -= count_[last] * in_step;
    index_[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      out_ += out_step_[d];
      in_ += in_step_[d];
      if (++index_[d] < count_[d]) break;
      out_ -= count_[d] * out_step_[d];
      in_ -= count_[d] * in_step_[d];
      index_[d] = 0;
    }
  }
  return produced;
}

}  // namespace sim
}  // namespace pjrtkit
