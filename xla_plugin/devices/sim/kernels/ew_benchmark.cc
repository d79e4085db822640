// Measures the fused elementwise engine against hand-written C++ loops doing the same math:
// a chain of 10 f32 ops over 16M elements (and the same chain in bf16, and with a broadcast
// operand). Prints elements/s and the ratio engine / hand loop. Not a test:
//   bazel run //xla_plugin/devices/sim/kernels:ew_benchmark
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "xla_plugin/devices/sim/kernels/elementwise_plan.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kElements = int64_t{1} << 24;
constexpr float kC1 = 0.25f, kC2 = 3.0f, kC3 = 0.5f, kC4 = 100.0f;

// Best of `reps` wall times of fn, in seconds.
double Time(const std::function<void()>& fn, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    best = std::min(best, d.count());
  }
  return best;
}

EwStep Leaf(EwOp op, ElementType type, int64_t attr) {
  EwStep s;
  s.op = op;
  s.type = type;
  s.attr = attr;
  return s;
}

EwStep Constant(ElementType type, float value) {
  EwStep s = Leaf(EwOp::kConstant, type, 0);
  if (type == ElementType::kF32) {
    s.constant.assign(reinterpret_cast<const char*>(&value), 4);
  } else {
    const uint16_t bits = static_cast<uint16_t>(EncodeFromF32(LowFloat::kBF16, value));
    s.constant.assign(reinterpret_cast<const char*>(&bits), 2);
  }
  return s;
}

EwStep Op(EwOp op, ElementType type, int32_t a, int32_t b = -1) {
  EwStep s = Leaf(op, type, 0);
  s.operands[0] = a;
  s.operands[1] = b;
  return s;
}

// t = x*y; t += c1; t *= x; t -= y; t = max(t, c2'); t -= c2; t = abs(t); t *= c3; t += x;
// t = min(t, c4): ten ops. `y_strides` lets y be broadcast.
FusedElementwise Chain(ElementType type, std::vector<int64_t> dims,
                       std::vector<int64_t> y_strides) {
  FusedElementwise f;
  f.dims = dims;
  std::vector<int64_t> dense(dims.size(), 1);
  for (size_t d = dims.size() - 1; d > 0; --d) dense[d - 1] = dense[d] * dims[d];
  f.inputs = {EwInput{type, dense}, EwInput{type, y_strides}};
  f.steps = {Leaf(EwOp::kInput, type, 0),    // 0 x
             Leaf(EwOp::kInput, type, 1),    // 1 y
             Constant(type, kC1),            // 2
             Constant(type, kC2),            // 3
             Constant(type, kC3),            // 4
             Constant(type, kC4),            // 5
             Op(EwOp::kMultiply, type, 0, 1),   // 6
             Op(EwOp::kAdd, type, 6, 2),        // 7
             Op(EwOp::kMultiply, type, 7, 0),   // 8
             Op(EwOp::kSubtract, type, 8, 1),   // 9
             Op(EwOp::kMaximum, type, 9, 2),    // 10
             Op(EwOp::kSubtract, type, 10, 3),  // 11
             Op(EwOp::kAbs, type, 11),          // 12
             Op(EwOp::kMultiply, type, 12, 4),  // 13
             Op(EwOp::kAdd, type, 13, 0),       // 14
             Op(EwOp::kMinimum, type, 14, 5)};  // 15
  f.outputs = {15};
  return f;
}

inline float HandChain(float x, float y) {
  float t = x * y;
  t += kC1;
  t *= x;
  t -= y;
  t = t > kC1 ? t : kC1;
  t -= kC2;
  t = std::fabs(t);
  t *= kC3;
  t += x;
  return t < kC4 ? t : kC4;
}

void Report(const char* name, double engine_s, double hand_s) {
  std::printf("%-44s engine %8.1f Melem/s   hand loop %8.1f Melem/s   ratio %.2f\n", name,
              kElements / engine_s / 1e6, kElements / hand_s / 1e6, hand_s / engine_s);
}

int Main() {
  std::vector<float> x(kElements), y(kElements), out(kElements), ref(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    x[i] = static_cast<float>((i * 7919) % 1000) * 0.01f - 5;
    y[i] = static_cast<float>((i * 104729) % 977) * 0.003f;
  }
  const int reps = 5;
  {
    const FusedElementwise f = Chain(ElementType::kF32, {kElements}, {1});
    const ElementwisePlan plan = ElementwisePlan::Create(f).value();
    const void* in[2] = {x.data(), y.data()};
    void* outs[1] = {out.data()};
    const double engine = Time([&] { plan.Run(in, outs); }, reps);
    const double hand = Time(
        [&] {
          const float* __restrict xs = x.data();
          const float* __restrict ys = y.data();
          float* __restrict r = ref.data();
          for (int64_t i = 0; i < kElements; ++i) r[i] = HandChain(xs[i], ys[i]);
        },
        reps);
    int64_t diffs = 0;
    for (int64_t i = 0; i < kElements; ++i) diffs += out[i] != ref[i];
    Report("f32, 10 ops, 16M elements", engine, hand);
    std::printf("  results differing from the hand loop: %lld\n", static_cast<long long>(diffs));
  }
  {
    // y broadcast along the inner dimension of [4096, 4096]: y[i] per row.
    const FusedElementwise f = Chain(ElementType::kF32, {4096, 4096}, {1, 0});
    const ElementwisePlan plan = ElementwisePlan::Create(f).value();
    const void* in[2] = {x.data(), y.data()};
    void* outs[1] = {out.data()};
    const double engine = Time([&] { plan.Run(in, outs); }, reps);
    const double hand = Time(
        [&] {
          for (int64_t i = 0; i < 4096; ++i) {
            const float yi = y[i];
            for (int64_t j = 0; j < 4096; ++j) ref[i * 4096 + j] = HandChain(x[i * 4096 + j], yi);
          }
        },
        reps);
    Report("f32, 10 ops, [4096,4096] + column bcast", engine, hand);
  }
  {
    std::vector<uint16_t> xb(kElements), yb(kElements), ob(kElements), rb(kElements);
    EncodeBlock(LowFloat::kBF16, x.data(), xb.data(), kElements);
    EncodeBlock(LowFloat::kBF16, y.data(), yb.data(), kElements);
    const FusedElementwise f = Chain(ElementType::kBF16, {kElements}, {1});
    const ElementwisePlan plan = ElementwisePlan::Create(f).value();
    const void* in[2] = {xb.data(), yb.data()};
    void* outs[1] = {ob.data()};
    const double engine = Time([&] { plan.Run(in, outs); }, reps);
    // Hand loop: bf16 in and out, f32 math in between (no per-op rounding: a lower bound).
    const double hand = Time(
        [&] {
          for (int64_t i = 0; i < kElements; ++i) {
            const float xv = BitCast<float>(static_cast<uint32_t>(xb[i]) << 16);
            const float yv = BitCast<float>(static_cast<uint32_t>(yb[i]) << 16);
            const uint32_t u = BitCast<uint32_t>(HandChain(xv, yv));
            rb[i] = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
          }
        },
        reps);
    Report("bf16, 10 ops (rounded per op), 16M", engine, hand);
  }
  return 0;
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit

int main() { return pjrtkit::sim::Main(); }
