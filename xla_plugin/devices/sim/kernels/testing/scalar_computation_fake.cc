// TEST-ONLY stand-in for scalar_computation.h until the reduction kernels' implementation lands
// on main (then the collectives test links the real :scalar_computation and this file goes away).
// CheckScalarComputation checks the body's parameter and result types; ApplyScalarComputation
// evaluates the combiners the collectives' typed loops leave to it in the tests (add, multiply,
// maximum, minimum of f16/bf16 through f32 with one rounding per op, using the engine's
// ConvertArray; complex multiply), reading the combiner, not the body.
#include <cmath>
#include <complex>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"

namespace pjrtkit {
namespace sim {

Status CheckScalarComputation(const ScalarComputation& computation,
                              const std::vector<ElementType>& input_types,
                              const std::vector<ElementType>& result_types) {
  const FusedElementwise& body = computation.body;
  if (body.inputs.size() != input_types.size() || body.outputs.size() != result_types.size()) {
    return InvalidArgument("scalar computation: (fake) parameter or result count");
  }
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (body.inputs[i].type != input_types[i]) {
      return InvalidArgument(std::string("scalar computation: (fake) parameter ") +
                             std::to_string(i) + " is " + ElementTypeName(body.inputs[i].type) +
                             ", expected " + ElementTypeName(input_types[i]));
    }
  }
  return OkStatus();
}

void ApplyScalarComputation(const ScalarComputation& computation, int64_t n,
                            const std::vector<const void*>& inputs,
                            const std::vector<int64_t>& input_strides,
                            const std::vector<void*>& results) {
  const ElementType type = computation.body.inputs[0].type;
  const int64_t bytes = ElementTypeBits(type) / 8;
  for (int64_t k = 0; k < n; ++k) {
    const char* a = static_cast<const char*>(inputs[0]) + k * input_strides[0] * bytes;
    const char* b = static_cast<const char*>(inputs[1]) + k * input_strides[1] * bytes;
    char* out = static_cast<char*>(results[0]) + k * bytes;
    if (type == ElementType::kC64) {
      std::complex<float> x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      const std::complex<float> z(x.real() * y.real() - x.imag() * y.imag(),
                                  x.real() * y.imag() + x.imag() * y.real());
      std::memcpy(out, &z, 8);
      continue;
    }
    float x, y, z = 0;
    ConvertArray(type, a, ElementType::kF32, &x, 1);
    ConvertArray(type, b, ElementType::kF32, &y, 1);
    switch (computation.combiner) {
      case Combiner::kAdd: z = x + y; break;
      case Combiner::kMultiply: z = x * y; break;
      case Combiner::kMaximum: z = std::isnan(x) || x > y ? x : y; break;
      case Combiner::kMinimum: z = std::isnan(x) || x < y ? x : y; break;
      default: break;
    }
    ConvertArray(ElementType::kF32, &z, type, out, 1);
  }
}

}  // namespace sim
}  // namespace pjrtkit
