// Throughput of the sim device's dot_general and convolution kernels on one thread, in GFLOP/s
// of thread CPU time (robust to other processes on a shared machine) and of wall time.
//
//   bazel run -c opt //xla_plugin/devices/sim/kernels:contraction_benchmark
//
// Compare the f32 matmul with NumPy's on the same thread count in the same session, e.g.
//   OPENBLAS_NUM_THREADS=1 .venv/bin/python -c "import numpy as np, time; ..."
// (the report states how the ratio was measured).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/gemm.h"

namespace pjrtkit {
namespace sim {
namespace {

double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// Best of `reps` runs (after one warm-up): thread CPU seconds and wall seconds.
void Measure(const std::string& name, double flops, int reps, const std::function<void()>& run) {
  run();
  double best_cpu = 1e30, best_wall = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double c0 = ThreadSeconds();
    const auto w0 = std::chrono::steady_clock::now();
    run();
    best_cpu = std::min(best_cpu, ThreadSeconds() - c0);
    best_wall = std::min(
        best_wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  }
  std::printf("%-48s %9.3f ms %8.1f GFLOP/s (cpu)  %8.1f GFLOP/s (wall)\n", name.c_str(),
              best_cpu * 1e3, flops / best_cpu * 1e-9, flops / best_wall * 1e-9);
}

std::vector<unsigned char> RandomBytes(const ArrayType& type) {
  std::vector<unsigned char> bytes(static_cast<size_t>(type.byte_size()));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  if (type.type == ElementType::kF32) {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      const float v = d(rng);
      std::copy_n(reinterpret_cast<const unsigned char*>(&v), 4, bytes.data() + i);
    }
  } else if (type.type == ElementType::kF64) {
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      const double v = d(rng);
      std::copy_n(reinterpret_cast<const unsigned char*>(&v), 8, bytes.data() + i);
    }
  } else if (type.type == ElementType::kBF16) {
    for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
      const float v = d(rng);
      std::copy_n(reinterpret_cast<const unsigned char*>(&v) + 2, 2, bytes.data() + i);
    }
  } else {
    for (auto& b : bytes) b = static_cast<unsigned char>(rng() & 0x3f);  // Small, finite.
  }
  return bytes;
}

void BenchDot(const std::string& name, const DotGeneralParams& p, const ArrayType& lhs,
              const ArrayType& rhs, const ArrayType& result, double flops, int reps) {
  const Status check = CheckDotGeneral(p, {&lhs, &rhs}, {&result});
  if (!check.ok()) {
    std::printf("%s: %s\n", name.c_str(), check.ToString().c_str());
    return;
  }
  const std::vector<unsigned char> a = RandomBytes(lhs), b = RandomBytes(rhs);
  std::vector<unsigned char> c(static_cast<size_t>(result.byte_size()));
  Measure(name, flops, reps, [&] {
    (void)RunDotGeneral(p, {{&lhs, a.data()}, {&rhs, b.data()}}, {{&result, c.data()}});
  });
}

void BenchConv(const std::string& name, const ConvolutionParams& p, const ArrayType& lhs,
               const ArrayType& rhs, const ArrayType& result, int reps) {
  const Status check = CheckConvolution(p, {&lhs, &rhs}, {&result});
  if (!check.ok()) {
    std::printf("%s: %s\n", name.c_str(), check.ToString().c_str());
    return;
  }
  // 2 * result elements * (window elements * input features per group).
  double k = static_cast<double>(rhs.dims[p.kernel_input_feature_dimension]);
  for (int64_t d : p.kernel_spatial_dimensions) k *= static_cast<double>(rhs.dims[d]);
  const double flops = 2.0 * static_cast<double>(result.num_elements()) * k;
  const std::vector<unsigned char> a = RandomBytes(lhs), b = RandomBytes(rhs);
  std::vector<unsigned char> c(static_cast<size_t>(result.byte_size()));
  Measure(name, flops, reps, [&] {
    (void)RunConvolution(p, {{&lhs, a.data()}, {&rhs, b.data()}}, {{&result, c.data()}});
  });
}

DotGeneralParams Matmul(int64_t lhs_contract, int64_t rhs_contract) {
  DotGeneralParams p;
  p.lhs_contracting_dimensions = {lhs_contract};
  p.rhs_contracting_dimensions = {rhs_contract};
  return p;
}

// NHWC x HWIO -> NHWC, 2-D, stride 1, `pad` on every side.
ConvolutionParams Nhwc(int64_t pad, int64_t groups) {
  ConvolutionParams p;
  p.window_strides = {1, 1};
  p.padding = {{pad, pad}, {pad, pad}};
  p.input_batch_dimension = 0;
  p.input_feature_dimension = 3;
  p.input_spatial_dimensions = {1, 2};
  p.kernel_input_feature_dimension = 2;
  p.kernel_output_feature_dimension = 3;
  p.kernel_spatial_dimensions = {0, 1};
  p.output_batch_dimension = 0;
  p.output_feature_dimension = 3;
  p.output_spatial_dimensions = {1, 2};
  p.feature_group_count = groups;
  return p;
}

void Main() {
  std::printf("f32 micro-kernel: %s\n", GemmF32KernelName());
  const ElementType f32 = ElementType::kF32;
  for (int64_t n : {256, 512, 1024, 2048}) {
    BenchDot("matmul f32 " + std::to_string(n) + "^3", Matmul(1, 0), {f32, {n, n}}, {f32, {n, n}},
             {f32, {n, n}}, 2.0 * n * n * n, n >= 2048 ? 3 : 8);
  }
  BenchDot("matmul f32 1024^3, rhs transposed (x @ w.T)", Matmul(1, 1), {f32, {1024, 1024}},
           {f32, {1024, 1024}}, {f32, {1024, 1024}}, 2.0 * 1024 * 1024 * 1024, 8);
  BenchDot("matmul f32 1000x1000x1000", Matmul(1, 0), {f32, {1000, 1000}}, {f32, {1000, 1000}},
           {f32, {1000, 1000}}, 2e9, 8);
  BenchDot("matvec f32 4096x4096", Matmul(1, 0), {f32, {4096, 4096}}, {f32, {4096}},
           {f32, {4096}}, 2.0 * 4096 * 4096, 8);
  {
    DotGeneralParams p;
    p.lhs_batching_dimensions = {0};
    p.rhs_batching_dimensions = {0};
    p.lhs_contracting_dimensions = {2};
    p.rhs_contracting_dimensions = {1};
    BenchDot("batch matmul f32 64 x 128x64x128", p, {f32, {64, 128, 64}}, {f32, {64, 64, 128}},
             {f32, {64, 128, 128}}, 2.0 * 64 * 128 * 64 * 128, 8);
  }
  BenchDot("matmul bf16 x bf16 -> f32 1024^3", Matmul(1, 0),
           {ElementType::kBF16, {1024, 1024}}, {ElementType::kBF16, {1024, 1024}},
           {f32, {1024, 1024}}, 2.0 * 1024 * 1024 * 1024, 5);
  BenchDot("matmul f64 512^3", Matmul(1, 0), {ElementType::kF64, {512, 512}},
           {ElementType::kF64, {512, 512}}, {ElementType::kF64, {512, 512}},
           2.0 * 512 * 512 * 512, 5);
  BenchDot("matmul s8 x s8 -> s32 512^3", Matmul(1, 0), {ElementType::kS8, {512, 512}},
           {ElementType::kS8, {512, 512}}, {ElementType::kS32, {512, 512}},
           2.0 * 512 * 512 * 512, 5);

  BenchConv("conv NHWC 8x32x32x64 * 3x3x64x64 SAME", Nhwc(1, 1), {f32, {8, 32, 32, 64}},
            {f32, {3, 3, 64, 64}}, {f32, {8, 32, 32, 64}}, 5);
  BenchConv("conv NHWC 8x32x32x64 * 1x1x64x128", Nhwc(0, 1), {f32, {8, 32, 32, 64}},
            {f32, {1, 1, 64, 128}}, {f32, {8, 32, 32, 128}}, 5);
  BenchConv("conv NHWC 16x28x28x3 * 5x5x3x32 SAME", Nhwc(2, 1), {f32, {16, 28, 28, 3}},
            {f32, {5, 5, 3, 32}}, {f32, {16, 28, 28, 32}}, 5);
  BenchConv("depthwise NHWC 8x32x32x64 * 3x3x1x64 SAME", Nhwc(1, 64), {f32, {8, 32, 32, 64}},
            {f32, {3, 3, 1, 64}}, {f32, {8, 32, 32, 64}}, 5);
  {
    ConvolutionParams p = Nhwc(1, 1);  // NCHW x OIHW -> NCHW.
    p.input_feature_dimension = 1;
    p.input_spatial_dimensions = {2, 3};
    p.kernel_output_feature_dimension = 0;
    p.kernel_input_feature_dimension = 1;
    p.kernel_spatial_dimensions = {2, 3};
    p.output_feature_dimension = 1;
    p.output_spatial_dimensions = {2, 3};
    BenchConv("conv NCHW 8x64x32x32 * 64x64x3x3 SAME", p, {f32, {8, 64, 32, 32}},
              {f32, {64, 64, 3, 3}}, {f32, {8, 64, 32, 32}}, 5);
  }
  {
    // The weight gradient of the NHWC 3x3 SAME convolution above, as jax.grad emits it:
    // [f, 0, 1, b] x [i, 0, 1, o] -> [0, 1, b, f] with padding 1.
    ConvolutionParams p;
    p.window_strides = {1, 1};
    p.padding = {{1, 1}, {1, 1}};
    p.input_batch_dimension = 3;
    p.input_feature_dimension = 0;
    p.input_spatial_dimensions = {1, 2};
    p.kernel_input_feature_dimension = 0;
    p.kernel_output_feature_dimension = 3;
    p.kernel_spatial_dimensions = {1, 2};
    p.output_batch_dimension = 2;
    p.output_feature_dimension = 3;
    p.output_spatial_dimensions = {0, 1};
    BenchConv("conv weight gradient (x, dy) -> 3x3x64x64", p, {f32, {8, 32, 32, 64}},
              {f32, {8, 32, 32, 64}}, {f32, {3, 3, 64, 64}}, 5);
  }
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit

int main() {
  pjrtkit::sim::Main();
  return 0;
}
