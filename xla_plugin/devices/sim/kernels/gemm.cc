#include "xla_plugin/devices/sim/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "xla_plugin/devices/sim/kernels/gemm_micro_kernels.h"

namespace pjrtkit {
namespace sim {
namespace {

// Cache blocking (BLIS's Haswell/Zen values for sgemm): a packed A block of kMc x kKc floats
// (168 KiB) stays in L2, a packed B sliver of kKc x kNr floats (16 KiB) in L1, a packed B panel
// of kKc x kNc floats (4 MiB) in L3.
constexpr int64_t kMc = 168;
constexpr int64_t kKc = 256;
constexpr int64_t kNc = 4080;
static_assert(kMc % kMr == 0 && kNc % kNr == 0, "blocks hold whole micro-tiles");

// Below this many multiply-adds, packing costs more than it saves: a direct loop runs instead.
constexpr int64_t kSmallGemmFlops = 8 * 1024;

// A float buffer whose data() is 64-byte aligned.
class AlignedFloats {
 public:
  explicit AlignedFloats(int64_t n) : storage_(static_cast<size_t>(n) + 16) {}
  float* data() {
    const uintptr_t address = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + ((64 - address % 64) % 64) / sizeof(float);
  }

 private:
  std::vector<float> storage_;
};

// Packs rows [0, mc) x columns [0, kc) of `a` into micro-panels of kMr rows: panel r holds, for
// each p, the kMr values a(r * kMr + i, p) (zeros past mc).
void PackA(int64_t mc, int64_t kc, const float* a, int64_t rs, int64_t cs, float* packed) {
  for (int64_t r = 0; r < mc; r += kMr) {
    const int64_t rows = std::min(kMr, mc - r);
    const float* src = a + r * rs;
    if (rows == kMr && cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t i = 0; i < kMr; ++i) packed[p * kMr + i] = src[i * rs + p];
      }
    } else if (rows == kMr && rs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(packed + p * kMr, src + p * cs, kMr * sizeof(float));
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t i = 0; i < kMr; ++i) {
          packed[p * kMr + i] = i < rows ? src[i * rs + p * cs] : 0.0f;
        }
      }
    }
    packed += kMr * kc;
  }
}

// Packs rows [0, kc) x columns [0, nc) of `b` into micro-panels of kNr columns: panel s holds,
// for each p, the kNr values b(p, s * kNr + j) (zeros past nc).
void PackB(int64_t kc, int64_t nc, const float* b, int64_t rs, int64_t cs, float* packed) {
  for (int64_t s = 0; s < nc; s += kNr) {
    const int64_t cols = std::min(kNr, nc - s);
    const float* src = b + s * cs;
    if (cols == kNr && cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(packed + p * kNr, src + p * rs, kNr * sizeof(float));
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t j = 0; j < kNr; ++j) {
          packed[p * kNr + j] = j < cols ? src[p * rs + j * cs] : 0.0f;
        }
      }
    }
    packed += kNr * kc;
  }
}

// Multiplies a packed mc x kc block of A by a packed kc x nc panel of B into c (overwriting it
// when !accumulate). Edge tiles go through a local tile.
void MacroKernel(MicroKernel kernel, int64_t mc, int64_t nc, int64_t kc, const float* packed_a,
                 const float* packed_b, float* c, int64_t ldc, bool accumulate) {
  alignas(64) float tile[kMr * kNr];
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int64_t cols = std::min(kNr, nc - jr);
    const float* b_panel = packed_b + jr * kc;
    for (int64_t ir = 0; ir < mc; ir += kMr) {
      const int64_t rows = std::min(kMr, mc - ir);
      const float* a_panel = packed_a + ir * kc;
      float* c_tile = c + ir * ldc + jr;
      if (rows == kMr && cols == kNr) {
        kernel(kc, a_panel, b_panel, c_tile, ldc, accumulate);
        continue;
      }
      kernel(kc, a_panel, b_panel, tile, kNr, false);
      for (int64_t i = 0; i < rows; ++i) {
        float* c_row = c_tile + i * ldc;
        const float* t_row = tile + i * kNr;
        if (accumulate) {
          for (int64_t j = 0; j < cols; ++j) c_row[j] += t_row[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) c_row[j] = t_row[j];
        }
      }
    }
  }
}

// The direct product for small problems: accumulates each element in f32, in increasing p.
void SmallGemm(int64_t m, int64_t n, int64_t k, F32MatrixView a, F32MatrixView b, float* c,
               int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* c_row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) c_row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a.data[i * a.row_stride + p * a.col_stride];
      const float* b_row = b.data + p * b.row_stride;
      for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j * b.col_stride];
    }
  }
}

// The kernels of one instruction set.
struct Kernels {
  MicroKernel micro;
  DotKernel dot;
  AxpyKernel axpy;
};

// y[i * y_stride] = sum over p < k of a(i, p) * x[p * x_stride] for i < m: dot products of
// contiguous rows, or axpy of contiguous columns, in f32.
void Gemv(const Kernels& kernels, int64_t m, int64_t k, F32MatrixView a, const float* x,
          int64_t x_stride, float* y, int64_t y_stride) {
  std::vector<float> x_dense;
  if (x_stride != 1) {
    x_dense.resize(static_cast<size_t>(k));
    for (int64_t p = 0; p < k; ++p) x_dense[p] = x[p * x_stride];
    x = x_dense.data();
  }
  if (a.col_stride == 1) {
    for (int64_t i = 0; i < m; ++i) y[i * y_stride] = kernels.dot(k, a.data + i * a.row_stride, x);
    return;
  }
  std::vector<float> y_dense(static_cast<size_t>(m), 0.0f);
  if (a.row_stride == 1) {
    for (int64_t p = 0; p < k; ++p) {
      kernels.axpy(m, x[p], a.data + p * a.col_stride, y_dense.data());
    }
  } else {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t i = 0; i < m; ++i) {
        y_dense[i] += a.data[i * a.row_stride + p * a.col_stride] * x[p];
      }
    }
  }
  for (int64_t i = 0; i < m; ++i) y[i * y_stride] = y_dense[i];
}

void GemmWith(const Kernels& kernels, int64_t m, int64_t n, int64_t k, F32MatrixView a,
              F32MatrixView b, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  if (m * n * k <= kSmallGemmFlops) return SmallGemm(m, n, k, a, b, c, ldc);
  // Matrix-vector products read each matrix element once: no packing.
  if (n == 1) return Gemv(kernels, m, k, a, b.data, b.row_stride, c, ldc);
  if (m == 1) {
    return Gemv(kernels, n, k, F32MatrixView{b.data, b.col_stride, b.row_stride}, a.data,
                a.col_stride, c, 1);
  }
  const MicroKernel kernel = kernels.micro;
  const int64_t nc_max = std::min(kNc, (n + kNr - 1) / kNr * kNr);
  const int64_t kc_max = std::min(kKc, k);
  // Row blocks of equal size (whole micro-tiles), at most kMc rows each.
  const int64_t row_blocks = (m + kMc - 1) / kMc;
  const int64_t mc_max = ((m + row_blocks - 1) / row_blocks + kMr - 1) / kMr * kMr;
  AlignedFloats packed_a(mc_max * kc_max);
  AlignedFloats packed_b(kc_max * nc_max);
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      PackB(kc, nc, b.data + pc * b.row_stride + jc * b.col_stride, b.row_stride, b.col_stride,
            packed_b.data());
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        const int64_t mc = std::min(mc_max, m - ic);
        PackA(mc, kc, a.data + ic * a.row_stride + pc * a.col_stride, a.row_stride, a.col_stride,
              packed_a.data());
        MacroKernel(kernel, mc, nc, kc, packed_a.data(), packed_b.data(), c + ic * ldc + jc, ldc,
                    pc > 0);
      }
    }
  }
}

constexpr Kernels kPortable = {MicroKernelPortable, DotPortable, AxpyPortable};
constexpr Kernels kAvx2Fma = {MicroKernelAvx2Fma, DotAvx2Fma, AxpyAvx2Fma};

// The kernels this CPU runs best, chosen once.
const Kernels& SelectedKernels() {
  static const Kernels& kernels = Avx2FmaAvailable() ? kAvx2Fma : kPortable;
  return kernels;
}

// c.re/c.im += a * b with the textbook formula (XLA's; no C99 Annex G NaN recovery).
template <typename F>
inline void MulAdd(const std::complex<F>& a, const std::complex<F>& b, std::complex<F>& c) {
  c = std::complex<F>(c.real() + (a.real() * b.real() - a.imag() * b.imag()),
                      c.imag() + (a.real() * b.imag() + a.imag() * b.real()));
}
template <typename T>
inline void MulAdd(const T& a, const T& b, T& c) {
  c += a * b;
}

// Elements of one fixed-length run of GemmDense's inner loop.
constexpr int64_t kRun = 8;

// c[t] += a * b[t] for t < kRun: a fixed trip count over non-aliasing pointers, which the
// compiler vectorizes at -O2.
template <typename T>
inline void MulAddRun(T a, const T* __restrict b, T* __restrict c) {
  for (int64_t t = 0; t < kRun; ++t) MulAdd(a, b[t], c[t]);
}

}  // namespace

void GemmF32(int64_t m, int64_t n, int64_t k, F32MatrixView a, F32MatrixView b, float* c,
             int64_t ldc) {
  GemmWith(SelectedKernels(), m, n, k, a, b, c, ldc);
}

void GemmF32Portable(int64_t m, int64_t n, int64_t k, F32MatrixView a, F32MatrixView b, float* c,
                     int64_t ldc) {
  GemmWith(kPortable, m, n, k, a, b, c, ldc);
}

const char* GemmF32KernelName() {
  return SelectedKernels().micro == MicroKernelAvx2Fma ? "avx2_fma" : "portable";
}

template <typename T>
void GemmDense(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  // Blocks of kBk rows x kBn columns of b (256 KiB of f64) stay in L2 while every row of a
  // passes over them.
  constexpr int64_t kBk = 128, kBn = 256;
  std::fill(c, c + m * n, T(0));
  for (int64_t jc = 0; jc < n; jc += kBn) {
    const int64_t nb = std::min(kBn, n - jc);
    for (int64_t pc = 0; pc < k; pc += kBk) {
      const int64_t kb = std::min(kBk, k - pc);
      for (int64_t i = 0; i < m; ++i) {
        T* c_row = c + i * n + jc;
        const T* a_row = a + i * k + pc;
        for (int64_t p = 0; p < kb; ++p) {
          const T a_ip = a_row[p];
          const T* b_row = b + (pc + p) * n + jc;
          int64_t j = 0;
          for (; j + kRun <= nb; j += kRun) MulAddRun(a_ip, b_row + j, c_row + j);
          for (; j < nb; ++j) MulAdd(a_ip, b_row[j], c_row[j]);
        }
      }
    }
  }
}

void GemmPred(int64_t m, int64_t n, int64_t k, const uint8_t* a, const uint8_t* b, uint8_t* c) {
  std::fill(c, c + m * n, uint8_t{0});
  for (int64_t i = 0; i < m; ++i) {
    uint8_t* c_row = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      if (a[i * k + p] == 0) continue;
      const uint8_t* b_row = b + p * n;
      for (int64_t j = 0; j < n; ++j) c_row[j] |= b_row[j];
    }
  }
}

template void GemmDense<double>(int64_t, int64_t, int64_t, const double*, const double*, double*);
template void GemmDense<std::complex<float>>(int64_t, int64_t, int64_t,
                                             const std::complex<float>*,
                                             const std::complex<float>*, std::complex<float>*);
template void GemmDense<std::complex<double>>(int64_t, int64_t, int64_t,
                                              const std::complex<double>*,
                                              const std::complex<double>*,
                                              std::complex<double>*);
template void GemmDense<uint32_t>(int64_t, int64_t, int64_t, const uint32_t*, const uint32_t*,
                                  uint32_t*);
template void GemmDense<uint64_t>(int64_t, int64_t, int64_t, const uint64_t*, const uint64_t*,
                                  uint64_t*);

}  // namespace sim
}  // namespace pjrtkit
