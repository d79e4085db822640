// Test-only helpers shared by the native kernels' gtests: bfloat16-exact random inputs, and a
// buffer as a kernel reads or writes it (float32, or bfloat16 bits).
#ifndef PJRTKIT_KERNELS_NATIVE_TEST_BUFFER_H_
#define PJRTKIT_KERNELS_NATIVE_TEST_BUFFER_H_

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/native/bfloat16.h"

namespace pjrtkit_kernels {

// n normal samples rounded to bfloat16, so float32 and bfloat16 runs share one reference.
inline std::vector<float> RandomBf16Exact(int64_t n, std::mt19937* gen) {
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = Bf16ToFloat(FloatToBf16(dist(*gen)));
  return v;
}

// A kernel's input or output buffer: float32, or bfloat16 bits.
struct TestBuffer {
  bool bf16;
  std::vector<float> f;
  std::vector<uint16_t> h;
  TestBuffer(const std::vector<float>& x, bool is_bf16) : bf16(is_bf16) {
    if (!bf16) f = x;
    for (size_t i = 0; bf16 && i < x.size(); ++i) h.push_back(FloatToBf16(x[i]));
  }
  // NaN everywhere: an element the kernel does not write fails the comparison.
  TestBuffer(int64_t n, bool is_bf16)
      : TestBuffer(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()), is_bf16) {}
  void* data() { return bf16 ? static_cast<void*>(h.data()) : f.data(); }
  std::vector<float> Floats() const {
    if (!bf16) return f;
    std::vector<float> out;
    for (uint16_t e : h) out.push_back(Bf16ToFloat(e));
    return out;
  }
};

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_NATIVE_TEST_BUFFER_H_
