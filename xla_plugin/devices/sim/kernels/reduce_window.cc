// StableHLO reduce_window as XLA:CPU computes it: each result starts at the init value and
// combines the window's input elements in window order (row-major); positions in the padding or
// in base-dilation holes are skipped. The kernel runs window offset by window offset, each over
// all the results it reaches at once. Cumulative windows (every window a prefix or a suffix of its
// row: jax.lax.cumsum and friends, reverse ones, their gradients) run as linear scans instead;
// where those regroup the combinations (suffix scans, blocked engine scans) floats may round
// differently from XLA's sequential order (see GenericScan and RunTypedScan).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/reduction_util.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"
#include "xla_plugin/devices/sim/kernels/typed_combiner.h"
#include "xla_plugin/devices/sim/kernels/window_geometry.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr char kOp[] = "reduce_window";
// Elements per engine call of the generic path.
constexpr int64_t kChunk = 1024;
// Rows of the typed loop shorter than this may run along another dimension.
constexpr int64_t kShortRun = 16;
// Window offsets that reach the input, at most (Check refuses more).
constexpr int64_t kMaxOffsets = int64_t{1} << 32;

WindowAttributes Attributes(const ReduceWindowParams& params) {
  WindowAttributes attributes;
  attributes.window_dimensions = &params.window_dimensions;
  attributes.window_strides = &params.window_strides;
  attributes.base_dilations = &params.base_dilations;
  attributes.window_dilations = &params.window_dilations;
  attributes.padding = &params.padding;
  return attributes;
}

// The operands and results of one run, promoted to the results' types.
struct Arrays {
  size_t n = 0;
  std::vector<const void*> inputs;
  std::vector<const void*> inits;
  std::vector<void*> results;
  std::vector<int64_t> bytes;
};

// The scan shape of a cumulative window: [outer][input][inner] -> [outer][output][inner].
struct ScanShape {
  int64_t outer = 1;
  int64_t input = 0;
  int64_t output = 0;
  int64_t inner = 1;
  bool suffix = false;  // Windows [o, input) instead of [0, o].
};

// Whether every window is a prefix (or, with `suffix` set, a suffix) of one dimension's row.
bool FindScan(const std::vector<WindowDim>& dims, ScanShape* shape) {
  int scan = -1;
  for (size_t d = 0; d < dims.size(); ++d) {
    const WindowDim& w = dims[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1) return false;
    if (w.size == 1) {
      if (w.pad_low != 0 || w.pad_high != 0) return false;
      continue;
    }
    if (scan >= 0) return false;
    scan = static_cast<int>(d);
  }
  if (scan < 0) return false;
  const WindowDim& w = dims[scan];
  if (w.pad_low == w.size - 1 && w.pad_high >= 0 && w.input + w.pad_high <= w.size) {
    shape->suffix = false;
  } else if (w.pad_low == 0 && w.pad_high == w.size - 1 && w.size >= w.input) {
    shape->suffix = true;
  } else {
    return false;
  }
  for (int d = 0; d < scan; ++d) shape->outer *= dims[d].input;
  for (size_t d = scan + 1; d < dims.size(); ++d) shape->inner *= dims[d].input;
  shape->input = w.input;
  shape->output = w.output;
  return true;
}

// Rows o >= input of a prefix scan repeat row input - 1.
void RepeatLastRow(const ScanShape& s, int64_t bytes, void* out) {
  char* base = static_cast<char*>(out);
  const int64_t row = s.inner * bytes;
  for (int64_t a = 0; a < s.outer; ++a) {
    char* block = base + a * s.output * row;
    for (int64_t o = s.input; o < s.output; ++o) {
      std::memcpy(block + o * row, block + (s.input - 1) * row, row);
    }
  }
}

void RunTypedScan(const TypedCombiner& loops, const ScanShape& s, const void* x, const void* init,
                  int64_t bytes, void* out) {
  const char* in = static_cast<const char*>(x);
  char* res = static_cast<char*>(out);
  const int64_t row = s.inner * bytes;
  const int64_t dir = s.suffix ? -1 : 1;
  const int64_t start = s.suffix ? s.input - 1 : 0;
  for (int64_t a = 0; a < s.outer; ++a) {
    const char* in_block = in + a * s.input * row;
    char* out_block = res + a * s.output * row;
    if (s.inner >= s.input) {
      // Row by row: row o = row (o - dir) op input row o.
      for (int64_t t = 0; t < s.input; ++t) {
        const int64_t o = start + dir * t;
        const void* prev = t == 0 ? init : out_block + (o - dir) * row;
        loops.combine(s.inner, prev, t == 0 ? 0 : 1, in_block + o * row, 1, out_block + o * row);
      }
    } else {
      // Lane by lane: one scan of the input's length per inner index.
      for (int64_t b = 0; b < s.inner; ++b) {
        loops.scan(s.input, init, in_block + (start * s.inner + b) * bytes, dir * s.inner,
                   out_block + (start * s.inner + b) * bytes, dir * s.inner);
      }
    }
  }
  if (!s.suffix) RepeatLastRow(s, bytes, out);
}

// The engine's scan of one cumulative window, all [outer][inner] lanes at once. Rows are split
// into `blocks` blocks of `length` rows laid out [row in block][block][lane], so each step is one
// engine call over every block: (1) scan within the blocks, (2) carry from block to block,
// (3) combine each block with the carry before it; about 2 * length + blocks calls. With one block
// a prefix scan is XLA's sequential order exactly. A suffix scan computes s_o = body(x_o,
// s_{o+1}) and then body(init, s_o): the window's order with its combinations regrouped, as a
// blocked prefix scan regroups them (floats may round differently from XLA; the results are the
// same for associative bodies).
class GenericScan {
 public:
  GenericScan(const ReduceWindowParams& params, const ScanShape& shape, const Arrays& arrays)
      : shape_(shape), arrays_(arrays), applier_(params.body) {
    const int64_t rows = shape.input;
    lanes_ = shape.outer * shape.inner;
    length_ = rows;
    if (lanes_ < kBlockedScanLanes && rows > kBlockedScanRows) {
      length_ = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(rows))));
    }
    blocks_ = (rows + length_ - 1) / length_;
    const size_t n = arrays.n;
    calls_in_.resize(2 * n);
    calls_out_.resize(n);
    strides_.resize(2 * n);
  }

  void Run() {
    const size_t n = arrays_.n;
    std::vector<std::vector<char>> x(n), local(n), carry(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t bytes = arrays_.bytes[i];
      x[i].assign(length_ * blocks_ * lanes_ * bytes, 0);
      local[i].assign(length_ * blocks_ * lanes_ * bytes, 0);
      carry[i].assign(blocks_ * lanes_ * bytes, 0);
      Gather(i, x[i].data());
    }
    const bool suffix = shape_.suffix;
    // (1) Within blocks. Prefix scans start block 0 with the init value.
    for (int64_t t = 0; t < length_; ++t) {
      const int64_t active = Active(t);
      for (size_t i = 0; i < n; ++i) {
        const int64_t row = blocks_ * lanes_ * arrays_.bytes[i];
        if (t == 0) std::memcpy(local[i].data(), x[i].data(), active * lanes_ * arrays_.bytes[i]);
        calls_in_[i] = t == 0 ? arrays_.inits[i] : local[i].data() + (t - 1) * row;
        strides_[i] = t == 0 ? 0 : 1;
        calls_in_[n + i] = x[i].data() + t * row;
        strides_[n + i] = 1;
        calls_out_[i] = local[i].data() + t * row;
      }
      if (t == 0 && !suffix) {
        Call(lanes_, /*swap=*/false);  // Block 0's first row combined with the init value.
      } else if (t > 0) {
        Call(active * lanes_, suffix);
      }
    }
    // (2) The carry into each block: carry[b] = everything before block b + 1.
    for (int64_t b = 0; b + 1 < blocks_; ++b) {
      for (size_t i = 0; i < n; ++i) {
        const int64_t lane_bytes = lanes_ * arrays_.bytes[i];
        const char* last = local[i].data() + ((length_ - 1) * blocks_ + b) * lane_bytes;
        if (b == 0) {
          std::memcpy(carry[i].data(), last, lane_bytes);
          continue;
        }
        calls_in_[i] = carry[i].data() + (b - 1) * lane_bytes;
        calls_in_[n + i] = last;
        strides_[i] = strides_[n + i] = 1;
        calls_out_[i] = carry[i].data() + b * lane_bytes;
      }
      if (b > 0) Call(lanes_, suffix);
    }
    // (3) Blocks 1.. combined with their carry, into x (no longer needed).
    for (int64_t t = 0; t < length_; ++t) {
      const int64_t active = Active(t);
      for (size_t i = 0; i < n; ++i) {
        const int64_t lane_bytes = lanes_ * arrays_.bytes[i];
        const int64_t row = blocks_ * lane_bytes;
        std::memcpy(x[i].data() + t * row, local[i].data() + t * row, lane_bytes);
        calls_in_[i] = carry[i].data();
        calls_in_[n + i] = local[i].data() + t * row + lane_bytes;
        strides_[i] = strides_[n + i] = 1;
        calls_out_[i] = x[i].data() + t * row + lane_bytes;
      }
      if (active > 1) Call((active - 1) * lanes_, suffix);
    }
    // Suffix scans: the init value combined last, over everything at once.
    if (suffix) {
      for (size_t i = 0; i < n; ++i) {
        calls_in_[i] = arrays_.inits[i];
        strides_[i] = 0;
        calls_in_[n + i] = x[i].data();
        strides_[n + i] = 1;
        calls_out_[i] = local[i].data();
      }
      Call(length_ * blocks_ * lanes_, /*swap=*/false);
    }
    for (size_t i = 0; i < n; ++i) Scatter(i, (suffix ? local : x)[i].data());
    if (!suffix) {
      for (size_t i = 0; i < n; ++i) RepeatLastRow(shape_, arrays_.bytes[i], arrays_.results[i]);
    }
  }

 private:
  // Scans with fewer lanes than this over more rows than kBlockedScanRows run blocked.
  static constexpr int64_t kBlockedScanLanes = 1024;
  static constexpr int64_t kBlockedScanRows = 64;

  // Blocks that have row t.
  int64_t Active(int64_t t) const { return (shape_.input - t + length_ - 1) / length_; }

  // Input row of scan step u (suffix scans walk the rows backwards).
  int64_t RowOf(int64_t u) const { return shape_.suffix ? shape_.input - 1 - u : u; }

  // The calls' inputs are (a..., b...); with `swap` the engine gets (b..., a...).
  void Call(int64_t count, bool swap) {
    const size_t n = arrays_.n;
    if (swap) {
      for (size_t i = 0; i < n; ++i) {
        std::swap(calls_in_[i], calls_in_[n + i]);
        std::swap(strides_[i], strides_[n + i]);
      }
    }
    applier_.Apply(count, calls_in_.data(), strides_.data(), calls_out_.data());
  }

  // Operand i's rows into dst[t][b][lane].
  void Gather(size_t i, char* dst) const {
    const int64_t bytes = arrays_.bytes[i];
    const int64_t run = shape_.inner * bytes;
    const char* x = static_cast<const char*>(arrays_.inputs[i]);
    for (int64_t u = 0; u < shape_.input; ++u) {
      char* row = dst + ((u % length_) * blocks_ + u / length_) * lanes_ * bytes;
      for (int64_t a = 0; a < shape_.outer; ++a) {
        std::memcpy(row + a * run, x + (a * shape_.input + RowOf(u)) * run, run);
      }
    }
  }

  // src[t][b][lane] into result i's rows.
  void Scatter(size_t i, const char* src) const {
    const int64_t bytes = arrays_.bytes[i];
    const int64_t run = shape_.inner * bytes;
    char* out = static_cast<char*>(arrays_.results[i]);
    for (int64_t u = 0; u < shape_.input; ++u) {
      const char* row = src + ((u % length_) * blocks_ + u / length_) * lanes_ * bytes;
      for (int64_t a = 0; a < shape_.outer; ++a) {
        std::memcpy(out + (a * shape_.output + RowOf(u)) * run, row + a * run, run);
      }
    }
  }

  const ScanShape& shape_;
  const Arrays& arrays_;
  ScalarApplier applier_;
  int64_t lanes_ = 1;
  int64_t length_ = 1;
  int64_t blocks_ = 1;
  std::vector<const void*> calls_in_;
  std::vector<void*> calls_out_;
  std::vector<int64_t> strides_;
};

// Typed loops: for each window offset, each row of its box accumulated in place.
void RunTyped(const TypedCombiner& loops, const std::vector<WindowDim>& dims,
              const std::vector<int64_t>& out_strides, const std::vector<int64_t>& in_strides,
              const Arrays& arrays) {
  const int64_t bytes = arrays.bytes[0];
  const char* x = static_cast<const char*>(arrays.inputs[0]);
  char* acc = static_cast<char*>(arrays.results[0]);
  std::vector<Progression> progressions(dims.size());
  std::vector<int64_t> out_offsets(kChunk), in_offsets(kChunk);
  for (OffsetIterator it(dims); it.valid(); it.Advance()) {
    int64_t count = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
      progressions[d] = ValidPositions(dims[d], it.offset()[d]);
      count *= progressions[d].count;
    }
    if (count == 0) continue;
    // The last dimension runs inside the typed loop (memory order) unless it is short and another
    // is much longer; a box iterates the others.
    size_t inner = dims.empty() ? 0 : dims.size() - 1;
    for (size_t d = 0; d + 1 < dims.size(); ++d) {
      if (progressions[inner].count < kShortRun &&
          progressions[d].count > 4 * progressions[inner].count) {
        inner = d;
      }
    }
    int64_t length = 1, out_step = 0, in_step = 0;
    std::vector<Progression> rows = progressions;
    if (!dims.empty()) {
      length = progressions[inner].count;
      out_step = progressions[inner].step * out_strides[inner];
      in_step = progressions[inner].in_step * in_strides[inner];
      rows[inner].count = 1;
    }
    PairBox box(rows, out_strides, in_strides);
    int64_t got;
    while ((got = box.Next(kChunk, out_offsets.data(), in_offsets.data())) > 0) {
      for (int64_t j = 0; j < got; ++j) {
        loops.accumulate(length, acc + out_offsets[j] * bytes, out_step, x + in_offsets[j] * bytes,
                         in_step);
      }
    }
  }
}

// The engine: for each window offset, its box in chunks gathered, combined and scattered back.
void RunGeneric(const ReduceWindowParams& params, const std::vector<WindowDim>& dims,
                const std::vector<int64_t>& out_strides, const std::vector<int64_t>& in_strides,
                const Arrays& arrays) {
  const size_t n = arrays.n;
  ScalarApplier applier(params.body);
  std::vector<int64_t> out_offsets(kChunk), in_offsets(kChunk);
  std::vector<std::vector<char>> acc(n), x(n), res(n);
  std::vector<const void*> call_inputs(2 * n);
  std::vector<void*> call_results(n);
  const std::vector<int64_t> strides(2 * n, 1);
  for (size_t i = 0; i < n; ++i) {
    acc[i].resize(kChunk * arrays.bytes[i]);
    x[i].resize(kChunk * arrays.bytes[i]);
    res[i].resize(kChunk * arrays.bytes[i]);
    call_inputs[i] = acc[i].data();
    call_inputs[n + i] = x[i].data();
    call_results[i] = res[i].data();
  }
  std::vector<Progression> progressions(dims.size());
  for (OffsetIterator it(dims); it.valid(); it.Advance()) {
    for (size_t d = 0; d < dims.size(); ++d) {
      progressions[d] = ValidPositions(dims[d], it.offset()[d]);
    }
    PairBox box(progressions, out_strides, in_strides);
    int64_t got;
    while ((got = box.Next(kChunk, out_offsets.data(), in_offsets.data())) > 0) {
      for (size_t i = 0; i < n; ++i) {
        GatherElements(arrays.results[i], out_offsets.data(), got, arrays.bytes[i], acc[i].data());
        GatherElements(arrays.inputs[i], in_offsets.data(), got, arrays.bytes[i], x[i].data());
      }
      applier.Apply(got, call_inputs.data(), strides.data(), call_results.data());
      for (size_t i = 0; i < n; ++i) {
        ScatterElements(res[i].data(), out_offsets.data(), got, arrays.bytes[i], arrays.results[i]);
      }
    }
  }
}

}  // namespace

Status CheckReduceWindow(const ReduceWindowParams& params, const ArrayTypes& operands,
                         const ArrayTypes& results) {
  const size_t n = results.size();
  if (n == 0) {
    return InvalidArgument("reduce_window: no results (expected one per input, at least 1)");
  }
  if (operands.size() != 2 * n) {
    return InvalidArgument("reduce_window: " + std::to_string(operands.size()) +
                           " operands (expected 2 x " + std::to_string(n) +
                           " results: the inputs, then their init values)");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "operand " + std::to_string(i), operands[i]));
  }
  for (size_t i = 0; i < n; ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "result " + std::to_string(i), results[i]));
  }
  const std::vector<int64_t>& dims = operands[0]->dims;
  std::vector<WindowDim> window;
  PJRTKIT_RETURN_IF_ERROR(MakeWindowDims(kOp, Attributes(params), dims, &window));
  if (CountReachingOffsets(window) > kMaxOffsets) {
    return InvalidArgument("reduce_window: the window has more than " +
                           std::to_string(kMaxOffsets) +
                           " offsets that reach the input (expected fewer)");
  }
  const std::vector<int64_t> out_dims = WindowOutputDims(window);
  std::vector<ElementType> types;
  for (size_t i = 0; i < n; ++i) {
    const ArrayType* input = operands[i];
    const ArrayType* init = operands[n + i];
    if (input->dims != dims) {
      return InvalidArgument(Describe(kOp, "input " + std::to_string(i), input) +
                             ": shape differs from input 0 (expected " + DimsToString(dims) + ")");
    }
    if (!init->dims.empty() || init->type != input->type) {
      return InvalidArgument(Describe(kOp, "init value " + std::to_string(i), init) +
                             ": expected a " + ElementTypeName(input->type) + " scalar");
    }
    if (results[i]->dims != out_dims) {
      return InvalidArgument(Describe(kOp, "result " + std::to_string(i), results[i]) +
                             ": expected dimensions " + DimsToString(out_dims) +
                             " (the number of windows)");
    }
    if (!IsPromotable(input->type, results[i]->type)) {
      return InvalidArgument(Describe(kOp, "result " + std::to_string(i), results[i]) +
                             ": input type " + ElementTypeName(input->type) +
                             " is not promotable to the result type");
    }
    types.push_back(results[i]->type);
  }
  std::vector<ElementType> parameters(types);
  parameters.insert(parameters.end(), types.begin(), types.end());
  Status body = CheckScalarComputation(params.body, parameters, types);
  if (!body.ok()) return InvalidArgument("reduce_window: body: " + body.message());
  return OkStatus();
}

Status RunReduceWindow(const ReduceWindowParams& params, const std::vector<ArrayArg>& operands,
                       const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs (the typed loops rely on it).
  const size_t n = results.size();
  const std::vector<int64_t>& in_dims = operands[0].type->dims;
  std::vector<WindowDim> dims;
  PJRTKIT_RETURN_IF_ERROR(MakeWindowDims(kOp, Attributes(params), in_dims, &dims));
  const int64_t out_count = results[0].type->num_elements();
  if (out_count == 0) return OkStatus();
  const int64_t in_count = operands[0].type->num_elements();
  Arrays arrays;
  arrays.n = n;
  std::vector<std::vector<char>> storage(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const ElementType from = operands[i].type->type;
    const ElementType to = results[i].type->type;
    arrays.bytes.push_back(TypeBytes(to));
    arrays.inputs.push_back(PromoteArray(from, operands[i].data, to, in_count, &storage[i]));
    arrays.inits.push_back(PromoteArray(from, operands[n + i].data, to, 1, &storage[n + i]));
    arrays.results.push_back(results[i].data);
  }
  TypedCombiner loops;
  const bool typed =
      n == 1 && GetTypedCombiner(params.body.combiner, results[0].type->type, &loops);
  ScanShape scan;
  if (in_count > 0 && FindScan(dims, &scan)) {
    if (typed) {
      RunTypedScan(loops, scan, arrays.inputs[0], arrays.inits[0], arrays.bytes[0],
                   arrays.results[0]);
    } else {
      GenericScan(params, scan, arrays).Run();
    }
    return OkStatus();
  }
  for (size_t i = 0; i < n; ++i) {
    FillWithScalar(arrays.results[i], arrays.inits[i], arrays.bytes[i], out_count);
  }
  if (in_count == 0) return OkStatus();
  const std::vector<int64_t> out_strides = RowMajorStrides(results[0].type->dims);
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  if (typed) {
    RunTyped(loops, dims, out_strides, in_strides, arrays);
  } else {
    RunGeneric(params, dims, out_strides, in_strides, arrays);
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
