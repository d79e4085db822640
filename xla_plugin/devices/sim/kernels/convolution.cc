// convolution: im2col into host scratch, one matrix product per group and block of output rows.
//
// For each group (feature group or batch group; at most one kind has more than one) and each block
// of output rows m = (output batch n, output spatial position p), the block's window patches are
// gathered into col[m][k] with k = (window position w, input feature i) (zeros where the window
// falls into padding or between dilated input elements), multiplied by the group's kernel matrix
// kernel[k][o'] (the rhs staged as [group][w][i][o'], window reversal applied while staging), and
// the [m][o'] block is scattered into the result's layout. Everything runs in the accumulator type
// of contraction_util.h: f32 blocks go through the f32 matmul.
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/contraction_util.h"
#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/gemm.h"

namespace pjrtkit {
namespace sim {
namespace {

namespace cu = contraction_util;

// Largest magnitude of a padding amount, and of any derived spatial size, the kernel accepts.
constexpr int64_t kMaxSpatialExtent = int64_t{1} << 60;

// Accumulator values gathered per block of output rows (4 MiB of f32).
constexpr int64_t kColBlockElements = int64_t{1} << 20;

// The shape of one convolution, derived from its params and operand types.
struct ConvGeometry {
  int64_t spatial = 0;                         // Number of spatial dimensions.
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation, pad_low;
  std::vector<bool> reversal;
  std::vector<int64_t> in_sizes, window_sizes, out_sizes;  // Per spatial dimension.
  int64_t batch_in = 0, features_in = 0;      // lhs batch and feature sizes.
  int64_t batch_out = 0, features_out = 0;    // result batch and feature sizes.
  int64_t kernel_in = 0;                      // Input features per group (rhs input features).
  int64_t groups = 1;                         // feature_group_count * batch_group_count.
  int64_t out_per_group = 0;                  // features_out / groups.
};

// v[i], or `fallback` when v is empty (an omitted attribute).
int64_t OrDefault(const std::vector<int64_t>& v, size_t i, int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// (x == 0 ? 0 : (x - 1) * d + 1) with overflow checks.
bool Dilate(int64_t x, int64_t d, int64_t* out) {
  if (x == 0) {
    *out = 0;
    return true;
  }
  int64_t scaled;
  if (__builtin_mul_overflow(x - 1, d, &scaled) || scaled > kMaxSpatialExtent) return false;
  *out = scaled + 1;
  return true;
}

// Checks one list of dimension numbers: each in [0, rank), none in `used` yet (then marked).
Status CheckDimensionNumber(const char* name, int64_t d, int64_t rank, std::vector<bool>* used) {
  if (d < 0 || d >= rank) {
    return InvalidArgument("convolution: " + std::string(name) + " " + std::to_string(d) +
                           " is out of range (expected 0 <= d < " + std::to_string(rank) + ")");
  }
  if ((*used)[d]) {
    return InvalidArgument("convolution: " + std::string(name) + " " + std::to_string(d) +
                           " repeats a dimension of the same operand (expected unique "
                           "dimension numbers)");
  }
  (*used)[d] = true;
  return OkStatus();
}

Status CheckDimensionNumbers(const char* operand, int64_t first, const char* first_name,
                             const std::vector<int64_t>& spatial, const char* spatial_name,
                             int64_t last, const char* last_name, int64_t rank) {
  if (static_cast<int64_t>(spatial.size()) != rank - 2) {
    return InvalidArgument("convolution: " + std::string(spatial_name) + " " +
                           cu::VectorToString(spatial) + " has " +
                           std::to_string(spatial.size()) + " entries (expected rank - 2 = " +
                           std::to_string(rank - 2) + " for the " + operand + ")");
  }
  std::vector<bool> used(static_cast<size_t>(rank), false);
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumber(first_name, first, rank, &used));
  for (int64_t d : spatial) PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumber(spatial_name, d, rank, &used));
  return CheckDimensionNumber(last_name, last, rank, &used);
}

// Checks an attribute of one value per spatial dimension (or none: the default).
Status CheckSpatialList(const char* name, size_t size, int64_t spatial) {
  if (size != 0 && static_cast<int64_t>(size) != spatial) {
    return InvalidArgument("convolution: " + std::string(name) + " has " + std::to_string(size) +
                           " entries (expected " + std::to_string(spatial) +
                           ", one per spatial dimension, or none for the default)");
  }
  return OkStatus();
}

// Validates params against the operand types and derives the geometry.
Status ComputeGeometry(const ConvolutionParams& p, const ArrayType& lhs, const ArrayType& rhs,
                       ConvGeometry* g) {
  const int64_t rank = static_cast<int64_t>(lhs.dims.size());
  if (rank < 2 || static_cast<int64_t>(rhs.dims.size()) != rank) {
    return InvalidArgument("convolution: lhs " + lhs.ToString() + " and rhs " + rhs.ToString() +
                           " (expected equal ranks of at least 2)");
  }
  const int64_t s = rank - 2;
  g->spatial = s;
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(
      "lhs", p.input_batch_dimension, "input_batch_dimension", p.input_spatial_dimensions,
      "input_spatial_dimensions", p.input_feature_dimension, "input_feature_dimension", rank));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(
      "rhs", p.kernel_input_feature_dimension, "kernel_input_feature_dimension",
      p.kernel_spatial_dimensions, "kernel_spatial_dimensions",
      p.kernel_output_feature_dimension, "kernel_output_feature_dimension", rank));
  PJRTKIT_RETURN_IF_ERROR(CheckSpatialList("window_strides", p.window_strides.size(), s));
  PJRTKIT_RETURN_IF_ERROR(CheckSpatialList("padding", p.padding.size(), s));
  PJRTKIT_RETURN_IF_ERROR(CheckSpatialList("lhs_dilation", p.lhs_dilation.size(), s));
  PJRTKIT_RETURN_IF_ERROR(CheckSpatialList("rhs_dilation", p.rhs_dilation.size(), s));
  PJRTKIT_RETURN_IF_ERROR(CheckSpatialList("window_reversal", p.window_reversal.size(), s));
  if (p.feature_group_count < 1 || p.batch_group_count < 1) {
    return InvalidArgument("convolution: feature_group_count " +
                           std::to_string(p.feature_group_count) + " and batch_group_count " +
                           std::to_string(p.batch_group_count) + " (expected both >= 1)");
  }
  if (p.feature_group_count > 1 && p.batch_group_count > 1) {
    return InvalidArgument("convolution: feature_group_count " +
                           std::to_string(p.feature_group_count) + " and batch_group_count " +
                           std::to_string(p.batch_group_count) + " (expected one of them = 1)");
  }
  g->batch_in = lhs.dims[p.input_batch_dimension];
  g->features_in = lhs.dims[p.input_feature_dimension];
  g->kernel_in = rhs.dims[p.kernel_input_feature_dimension];
  g->features_out = rhs.dims[p.kernel_output_feature_dimension];
  if (g->batch_in % p.batch_group_count != 0) {
    return InvalidArgument("convolution: lhs batch size " + std::to_string(g->batch_in) +
                           " is not a multiple of batch_group_count " +
                           std::to_string(p.batch_group_count));
  }
  if (g->features_in % p.feature_group_count != 0) {
    return InvalidArgument("convolution: lhs feature size " + std::to_string(g->features_in) +
                           " is not a multiple of feature_group_count " +
                           std::to_string(p.feature_group_count));
  }
  if (g->kernel_in != g->features_in / p.feature_group_count) {
    return InvalidArgument(
        "convolution: rhs input feature size " + std::to_string(g->kernel_in) +
        " (expected lhs feature size / feature_group_count = " +
        std::to_string(g->features_in / p.feature_group_count) + ")");
  }
  g->groups = p.feature_group_count * p.batch_group_count;
  if (g->features_out % g->groups != 0) {
    return InvalidArgument("convolution: rhs output feature size " +
                           std::to_string(g->features_out) + " is not a multiple of " +
                           (p.feature_group_count > 1 ? "feature_group_count "
                                                      : "batch_group_count ") +
                           std::to_string(g->groups));
  }
  g->out_per_group = g->features_out / g->groups;
  g->batch_out = g->batch_in / p.batch_group_count;
  g->strides.assign(s, 1);
  g->lhs_dilation.assign(s, 1);
  g->rhs_dilation.assign(s, 1);
  g->pad_low.assign(s, 0);
  g->reversal.assign(s, false);
  g->in_sizes.assign(s, 0);
  g->window_sizes.assign(s, 0);
  g->out_sizes.assign(s, 0);
  for (int64_t j = 0; j < s; ++j) {
    const std::string where = " of spatial dimension " + std::to_string(j);
    g->strides[j] = OrDefault(p.window_strides, j, 1);
    g->lhs_dilation[j] = OrDefault(p.lhs_dilation, j, 1);
    g->rhs_dilation[j] = OrDefault(p.rhs_dilation, j, 1);
    if (g->strides[j] < 1 || g->lhs_dilation[j] < 1 || g->rhs_dilation[j] < 1) {
      return InvalidArgument("convolution: window_strides " + std::to_string(g->strides[j]) +
                             ", lhs_dilation " + std::to_string(g->lhs_dilation[j]) +
                             ", rhs_dilation " + std::to_string(g->rhs_dilation[j]) + where +
                             " (expected all >= 1)");
    }
    const int64_t low = p.padding.empty() ? 0 : p.padding[j].first;
    const int64_t high = p.padding.empty() ? 0 : p.padding[j].second;
    if (low < -kMaxSpatialExtent || low > kMaxSpatialExtent || high < -kMaxSpatialExtent ||
        high > kMaxSpatialExtent) {
      return InvalidArgument("convolution: padding (" + std::to_string(low) + ", " +
                             std::to_string(high) + ")" + where +
                             " (expected magnitudes below 2^60)");
    }
    g->pad_low[j] = low;
    g->reversal[j] = !p.window_reversal.empty() && p.window_reversal[j];
    g->in_sizes[j] = lhs.dims[p.input_spatial_dimensions[j]];
    g->window_sizes[j] = rhs.dims[p.kernel_spatial_dimensions[j]];
    int64_t dilated_in = 0, dilated_window = 0;
    if (!Dilate(g->in_sizes[j], g->lhs_dilation[j], &dilated_in) ||
        !Dilate(g->window_sizes[j], g->rhs_dilation[j], &dilated_window)) {
      return InvalidArgument("convolution: the dilated input or window" + where +
                             " is too large (expected below 2^60)");
    }
    const int64_t padded = low + dilated_in + high;  // |each term| < 2^61: no overflow.
    if (padded > kMaxSpatialExtent) {
      return InvalidArgument("convolution: the padded input" + where +
                             " is too large (expected below 2^60)");
    }
    g->out_sizes[j] = padded <= 0 || dilated_window > padded
                          ? 0
                          : (padded - dilated_window) / g->strides[j] + 1;
  }
  return OkStatus();
}

// Where output position `p` and window positions 0..window-1 read the lhs along spatial dimension
// j: the lhs index, or -1 in padding or between dilated elements.
void SpatialRow(const ConvGeometry& g, int64_t j, int64_t p, int64_t* row) {
  const int64_t window = g.window_sizes[j];
  const int64_t in = g.in_sizes[j];
  const int64_t dilation = g.lhs_dilation[j];
  const int64_t dilated_in = in == 0 ? 0 : (in - 1) * dilation + 1;
  int64_t pos = p * g.strides[j] - g.pad_low[j];
  for (int64_t w = 0; w < window; ++w, pos += g.rhs_dilation[j]) {
    if (pos < 0 || pos >= dilated_in) {
      row[w] = -1;
    } else if (dilation == 1) {
      row[w] = pos;
    } else {
      row[w] = pos % dilation == 0 ? pos / dilation : -1;
    }
  }
}

// a * b; complex with the textbook formula (XLA's; no C99 Annex G NaN recovery).
template <typename T>
inline T Mul(T a, T b) {
  return a * b;
}
template <typename F>
inline std::complex<F> Mul(std::complex<F> a, std::complex<F> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// acc[t] += x[t] * y[t] for t < n, in runs of fixed length the compiler vectorizes.
template <typename T>
void MultiplyAccumulateRun(const T* __restrict x, const T* __restrict y, T* __restrict acc) {
  for (int t = 0; t < 8; ++t) acc[t] += Mul(x[t], y[t]);
}
template <typename T>
void MultiplyAccumulate(int64_t n, const T* x, const T* y, T* acc) {
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) MultiplyAccumulateRun(x + t, y + t, acc + t);
  for (; t < n; ++t) acc[t] += Mul(x[t], y[t]);
}
// Pred: OR of ANDs.
template <>
void MultiplyAccumulate<uint8_t>(int64_t n, const uint8_t* x, const uint8_t* y, uint8_t* acc) {
  for (int64_t t = 0; t < n; ++t) acc[t] |= static_cast<uint8_t>(x[t] & y[t]);
}

// GEMM in the accumulator type T on dense row-major blocks: c[m, n] = a[m, k] x b[k, n].
void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  GemmF32(m, n, k, F32MatrixView{a, k, 1}, F32MatrixView{b, n, 1}, c, n);
}
void Gemm(int64_t m, int64_t n, int64_t k, const uint8_t* a, const uint8_t* b, uint8_t* c) {
  GemmPred(m, n, k, a, b, c);
}
template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  GemmDense<T>(m, n, k, a, b, c);
}

// The convolution in accumulator type T, once the operands are staged.
template <typename T>
class ConvRunner {
 public:
  // lhs: dense [batch_in][in_sizes...][features_in]; kernel: dense [groups][window...][kernel_in]
  // [out_per_group]; out: the result's layout in T, element strides out_strides (batch, spatial
  // dims..., feature).
  ConvRunner(const ConvGeometry& g, const ConvolutionParams& p, const T* lhs, const T* kernel,
             T* out, std::vector<int64_t> out_strides)
      : g_(g), lhs_(lhs), kernel_(kernel), out_(out), out_strides_(std::move(out_strides)) {
    feature_group_ = p.feature_group_count > 1;
    const int64_t s = g.spatial;
    lhs_strides_.assign(s + 1, 0);
    int64_t stride = g.features_in;
    for (int64_t j = s - 1; j >= 0; --j) {
      lhs_strides_[j + 1] = stride;
      stride *= g.in_sizes[j];
    }
    lhs_strides_[0] = stride;  // Batch.
    window_total_ = 1;
    out_spatial_total_ = 1;
    for (int64_t j = 0; j < s; ++j) {
      window_total_ *= g.window_sizes[j];
      out_spatial_total_ *= g.out_sizes[j];
      row_starts_.push_back(row_size_);
      row_size_ += g.window_sizes[j];
    }
    k_ = window_total_ * g.kernel_in;
  }

  void Run() {
    if (feature_group_ && g_.kernel_in == 1 && g_.groups > 1) return RunDepthwise();
    const int64_t m_total = g_.batch_out * out_spatial_total_;
    const int64_t block = std::max<int64_t>(1, std::min(m_total, kColBlockElements / k_));
    std::vector<T> col(static_cast<size_t>(block * k_));
    std::vector<T> product(static_cast<size_t>(block * g_.out_per_group));
    for (int64_t group = 0; group < g_.groups; ++group) {
      const T* kernel = kernel_ + group * k_ * g_.out_per_group;
      for (int64_t m0 = 0; m0 < m_total; m0 += block) {
        const int64_t rows = std::min(block, m_total - m0);
        Im2Col(group, m0, rows, col.data());
        Gemm(rows, g_.out_per_group, k_, col.data(), kernel, product.data());
        Scatter(group, m0, rows, product.data());
      }
    }
  }

 private:
  // Decomposes output row m into its batch index and spatial position.
  void Decompose(int64_t m, int64_t* n, std::vector<int64_t>* pos) const {
    for (int64_t j = g_.spatial - 1; j >= 0; --j) {
      (*pos)[j] = m % g_.out_sizes[j];
      m /= g_.out_sizes[j];
    }
    *n = m;
  }

  // Advances (n, pos) to the next output row.
  void Next(int64_t* n, std::vector<int64_t>* pos) const {
    for (int64_t j = g_.spatial - 1; j >= 0; --j) {
      if (++(*pos)[j] < g_.out_sizes[j]) return;
      (*pos)[j] = 0;
    }
    ++*n;
  }

  // Gathers rows [m0, m0 + rows) of the group's col matrix.
  void Im2Col(int64_t group, int64_t m0, int64_t rows, T* col) const {
    const int64_t s = g_.spatial;
    const int64_t kin = g_.kernel_in;
    const int64_t feature_offset = feature_group_ ? group * kin : 0;
    const int64_t batch_offset = feature_group_ ? 0 : group * g_.batch_out;
    int64_t n = 0;
    std::vector<int64_t> pos(s, 0), w(s, 0);
    std::vector<int64_t> lhs_index(static_cast<size_t>(row_size_));
    std::vector<const int64_t*> rows_of(s);  // Per spatial dimension: the lhs index of each w.
    for (int64_t j = 0; j < s; ++j) rows_of[j] = lhs_index.data() + row_starts_[j];
    Decompose(m0, &n, &pos);
    for (int64_t r = 0; r < rows; ++r, Next(&n, &pos)) {
      const int64_t base = (batch_offset + n) * lhs_strides_[0] + feature_offset;
      for (int64_t j = 0; j < s; ++j) {
        SpatialRow(g_, j, pos[j], lhs_index.data() + row_starts_[j]);
      }
      std::fill(w.begin(), w.end(), 0);
      T* dst = col + r * k_;
      for (int64_t wi = 0; wi < window_total_; ++wi) {
        int64_t offset = 0;
        bool valid = true;
        for (int64_t j = 0; j < s; ++j) {
          const int64_t index = rows_of[j][w[j]];
          if (index < 0) {
            valid = false;
            break;
          }
          offset += index * lhs_strides_[j + 1];
        }
        if (valid) {
          std::memcpy(dst, lhs_ + base + offset, static_cast<size_t>(kin) * sizeof(T));
        } else {
          std::fill(dst, dst + kin, T(0));
        }
        dst += kin;
        for (int64_t j = s - 1; j >= 0; --j) {
          if (++w[j] < g_.window_sizes[j]) break;
          w[j] = 0;
        }
      }
    }
  }

  // Depthwise convolutions (one input feature per group): for each output position, the window's
  // input features multiply the kernel's row of every output feature at once,
  // acc[g * multiplier + t] += x[g] * kernel[w][g * multiplier + t].
  void RunDepthwise() const {
    const int64_t s = g_.spatial;
    const int64_t groups = g_.groups, multiplier = g_.out_per_group;
    const int64_t features = groups * multiplier;
    // The kernel as [window][feature]: feature o = group * multiplier + t.
    std::vector<T> kernel(static_cast<size_t>(window_total_ * features));
    for (int64_t group = 0; group < groups; ++group) {
      for (int64_t w = 0; w < window_total_; ++w) {
        for (int64_t t = 0; t < multiplier; ++t) {
          kernel[w * features + group * multiplier + t] =
              kernel_[(group * window_total_ + w) * multiplier + t];
        }
      }
    }
    std::vector<T> acc(static_cast<size_t>(features)), spread(static_cast<size_t>(features));
    std::vector<int64_t> lhs_index(static_cast<size_t>(row_size_)), pos(s, 0), w(s, 0);
    int64_t n = 0;
    const int64_t m_total = g_.batch_out * out_spatial_total_;
    for (int64_t m = 0; m < m_total; ++m, Next(&n, &pos)) {
      for (int64_t j = 0; j < s; ++j) {
        SpatialRow(g_, j, pos[j], lhs_index.data() + row_starts_[j]);
      }
      std::fill(acc.begin(), acc.end(), T(0));
      std::fill(w.begin(), w.end(), 0);
      for (int64_t wi = 0; wi < window_total_; ++wi) {
        int64_t offset = n * lhs_strides_[0];
        bool valid = true;
        for (int64_t j = 0; j < s && valid; ++j) {
          const int64_t index = lhs_index[row_starts_[j] + w[j]];
          valid = index >= 0;
          offset += index * lhs_strides_[j + 1];
        }
        if (valid) {
          const T* x = lhs_ + offset;
          const T* k = kernel.data() + wi * features;
          if (multiplier == 1) {
            MultiplyAccumulate(features, x, k, acc.data());
          } else {
            for (int64_t group = 0; group < groups; ++group) {
              std::fill(spread.begin() + group * multiplier,
                        spread.begin() + (group + 1) * multiplier, x[group]);
            }
            MultiplyAccumulate(features, spread.data(), k, acc.data());
          }
        }
        for (int64_t j = s - 1; j >= 0; --j) {
          if (++w[j] < g_.window_sizes[j]) break;
          w[j] = 0;
        }
      }
      int64_t out = n * out_strides_[0];
      for (int64_t j = 0; j < s; ++j) out += pos[j] * out_strides_[j + 1];
      const int64_t feature_stride = out_strides_[s + 1];
      for (int64_t o = 0; o < features; ++o) out_[out + o * feature_stride] = acc[o];
    }
  }

  // Writes product rows [m0, m0 + rows) of the group into the result layout.
  void Scatter(int64_t group, int64_t m0, int64_t rows, const T* product) const {
    const int64_t s = g_.spatial;
    const int64_t per = g_.out_per_group;
    const int64_t feature_stride = out_strides_[s + 1];
    int64_t n = 0;
    std::vector<int64_t> pos(s, 0);
    Decompose(m0, &n, &pos);
    for (int64_t r = 0; r < rows; ++r, Next(&n, &pos)) {
      int64_t offset = n * out_strides_[0] + group * per * feature_stride;
      for (int64_t j = 0; j < s; ++j) offset += pos[j] * out_strides_[j + 1];
      const T* src = product + r * per;
      T* dst = out_ + offset;
      if (feature_stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(per) * sizeof(T));
      } else {
        for (int64_t o = 0; o < per; ++o) dst[o * feature_stride] = src[o];
      }
    }
  }

  const ConvGeometry& g_;
  bool feature_group_ = false;           // Groups split features (else batches).
  const T* lhs_;                         // [batch_in][in_sizes...][features_in].
  const T* kernel_;                      // [groups][window...][kernel_in][out_per_group].
  T* out_;                               // The result's layout.
  std::vector<int64_t> out_strides_;     // Batch, spatial..., feature.
  std::vector<int64_t> lhs_strides_;     // Batch, spatial... of lhs_.
  std::vector<int64_t> row_starts_;      // Offset of each spatial dimension's SpatialRow.
  int64_t row_size_ = 0;                 // Sum of the window sizes.
  int64_t window_total_ = 1, out_spatial_total_ = 1, k_ = 0;
};

// The operand converted to the accumulator (or the operand itself when already stored so).
const void* ConvertOperand(const ArrayArg& arg, cu::Accumulator accumulator,
                           std::vector<unsigned char>* storage) {
  const ElementType type = arg.type->type;
  const ElementType acc_type = cu::AccumulatorElementType(accumulator);
  const bool same = type == acc_type ||
                    (accumulator == cu::Accumulator::kU32 && type == ElementType::kS32) ||
                    (accumulator == cu::Accumulator::kU64 && type == ElementType::kS64);
  if (same) return arg.data;
  const int64_t n = arg.type->num_elements();
  storage->resize(static_cast<size_t>(n * cu::AccumulatorBytes(accumulator)));
  cu::ConvertToAccumulator(type, arg.data, accumulator, storage->data(), n);
  return storage->data();
}

template <typename T>
void RunTyped(const ConvGeometry& g, const ConvolutionParams& p,
              const std::vector<ArrayArg>& operands, cu::Accumulator accumulator, T* out,
              std::vector<int64_t> out_strides) {
  const ArrayType& lhs_type = *operands[0].type;
  const ArrayType& rhs_type = *operands[1].type;
  const int64_t s = g.spatial;
  // lhs as [batch][spatial...][feature], transposed only when it is laid out otherwise.
  std::vector<unsigned char> lhs_converted;
  const T* lhs = static_cast<const T*>(ConvertOperand(operands[0], accumulator, &lhs_converted));
  std::vector<int64_t> order = {p.input_batch_dimension};
  order.insert(order.end(), p.input_spatial_dimensions.begin(), p.input_spatial_dimensions.end());
  order.push_back(p.input_feature_dimension);
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == int64_t(i);
  std::vector<T> lhs_transposed;
  if (!identity) {
    const std::vector<int64_t> strides = RowMajorStrides(lhs_type.dims);
    std::vector<int64_t> dims, src_strides;
    for (int64_t d : order) {
      dims.push_back(lhs_type.dims[d]);
      src_strides.push_back(strides[d]);
    }
    lhs_transposed.resize(static_cast<size_t>(lhs_type.num_elements()));
    cu::StridedCopy(sizeof(T), lhs, dims, src_strides, lhs_transposed.data());
    lhs = lhs_transposed.data();
  }
  // rhs as [group][window...][kernel_in][out_per_group], reversed where window_reversal says.
  std::vector<unsigned char> rhs_converted;
  const T* rhs = static_cast<const T*>(ConvertOperand(operands[1], accumulator, &rhs_converted));
  const std::vector<int64_t> rhs_strides = RowMajorStrides(rhs_type.dims);
  const int64_t out_stride = rhs_strides[p.kernel_output_feature_dimension];
  std::vector<int64_t> dims = {g.groups}, src_strides = {g.out_per_group * out_stride};
  const T* start = rhs;
  for (int64_t j = 0; j < s; ++j) {
    const int64_t d = p.kernel_spatial_dimensions[j];
    dims.push_back(rhs_type.dims[d]);
    if (g.reversal[j] && rhs_type.dims[d] > 0) {
      start += (rhs_type.dims[d] - 1) * rhs_strides[d];
      src_strides.push_back(-rhs_strides[d]);
    } else {
      src_strides.push_back(rhs_strides[d]);
    }
  }
  dims.push_back(g.kernel_in);
  src_strides.push_back(rhs_strides[p.kernel_input_feature_dimension]);
  dims.push_back(g.out_per_group);
  src_strides.push_back(out_stride);
  std::vector<T> kernel(static_cast<size_t>(rhs_type.num_elements()));
  cu::StridedCopy(sizeof(T), start, dims, src_strides, kernel.data());
  ConvRunner<T>(g, p, lhs, kernel.data(), out, std::move(out_strides)).Run();
}

}  // namespace

Status CheckConvolution(const ConvolutionParams& params, const ArrayTypes& operands,
                        const ArrayTypes& results) {
  if (operands.size() != 2 || results.size() != 1) {
    return InvalidArgument("convolution: expected 2 operands (lhs, rhs) and 1 result, got " +
                           std::to_string(operands.size()) + " operands and " +
                           std::to_string(results.size()) + " results");
  }
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("convolution", "lhs", operands[0]));
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("convolution", "rhs", operands[1]));
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("convolution", "result", results[0]));
  const ArrayType& lhs = *operands[0];
  const ArrayType& rhs = *operands[1];
  const ArrayType& result = *results[0];
  cu::Accumulator accumulator;
  PJRTKIT_RETURN_IF_ERROR(
      cu::ChooseAccumulator("convolution", lhs.type, rhs.type, result.type, &accumulator));
  ConvGeometry g;
  PJRTKIT_RETURN_IF_ERROR(ComputeGeometry(params, lhs, rhs, &g));
  const int64_t rank = static_cast<int64_t>(lhs.dims.size());
  if (static_cast<int64_t>(result.dims.size()) != rank) {
    return InvalidArgument("convolution: result " + result.ToString() + " (expected rank " +
                           std::to_string(rank) + ")");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(
      "result", params.output_batch_dimension, "output_batch_dimension",
      params.output_spatial_dimensions, "output_spatial_dimensions",
      params.output_feature_dimension, "output_feature_dimension", rank));
  std::vector<int64_t> expected(static_cast<size_t>(rank), 0);
  expected[params.output_batch_dimension] = g.batch_out;
  expected[params.output_feature_dimension] = g.features_out;
  for (int64_t j = 0; j < g.spatial; ++j) {
    expected[params.output_spatial_dimensions[j]] = g.out_sizes[j];
  }
  if (result.dims != expected) {
    return InvalidArgument("convolution: result " + result.ToString() + " (expected dimensions " +
                           cu::VectorToString(expected) + ")");
  }
  return OkStatus();
}

Status RunConvolution(const ConvolutionParams& params, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs its computations.
  const ArrayType& result = *results[0].type;
  cu::Accumulator accumulator;
  PJRTKIT_RETURN_IF_ERROR(cu::ChooseAccumulator("convolution", operands[0].type->type,
                                                operands[1].type->type, result.type,
                                                &accumulator));
  ConvGeometry g;
  PJRTKIT_RETURN_IF_ERROR(ComputeGeometry(params, *operands[0].type, *operands[1].type, &g));
  const int64_t count = result.num_elements();
  if (count == 0) return OkStatus();
  const int64_t acc_bytes = cu::AccumulatorBytes(accumulator);
  const ElementType acc_type = cu::AccumulatorElementType(accumulator);
  const bool direct = result.type == acc_type ||
                      (accumulator == cu::Accumulator::kU32 && result.type == ElementType::kS32) ||
                      (accumulator == cu::Accumulator::kU64 && result.type == ElementType::kS64);
  std::vector<unsigned char> scratch;
  void* out = results[0].data;
  if (!direct) {
    scratch.resize(static_cast<size_t>(count * acc_bytes));
    out = scratch.data();
  }
  int64_t window_total = g.kernel_in;
  for (int64_t w : g.window_sizes) window_total *= w;
  if (window_total == 0) {
    std::memset(out, 0, static_cast<size_t>(count * acc_bytes));  // Empty sums.
  } else {
    const std::vector<int64_t> strides = RowMajorStrides(result.dims);
    std::vector<int64_t> out_strides = {strides[params.output_batch_dimension]};
    for (int64_t d : params.output_spatial_dimensions) out_strides.push_back(strides[d]);
    out_strides.push_back(strides[params.output_feature_dimension]);
    switch (accumulator) {
      case cu::Accumulator::kF32:
        RunTyped(g, params, operands, accumulator, static_cast<float*>(out), out_strides);
        break;
      case cu::Accumulator::kF64:
        RunTyped(g, params, operands, accumulator, static_cast<double*>(out), out_strides);
        break;
      case cu::Accumulator::kC64:
        RunTyped(g, params, operands, accumulator, static_cast<std::complex<float>*>(out),
                 out_strides);
        break;
      case cu::Accumulator::kC128:
        RunTyped(g, params, operands, accumulator, static_cast<std::complex<double>*>(out),
                 out_strides);
        break;
      case cu::Accumulator::kU32:
        RunTyped(g, params, operands, accumulator, static_cast<uint32_t*>(out), out_strides);
        break;
      case cu::Accumulator::kU64:
        RunTyped(g, params, operands, accumulator, static_cast<uint64_t*>(out), out_strides);
        break;
      case cu::Accumulator::kPred:
        RunTyped(g, params, operands, accumulator, static_cast<uint8_t*>(out), out_strides);
        break;
    }
  }
  if (!direct) cu::ConvertFromAccumulator(accumulator, out, result.type, results[0].data, count);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
