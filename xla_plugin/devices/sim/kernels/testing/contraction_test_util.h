// Test helpers for the contraction and collective kernel tests: golden arrays stored as hex
// bytes, element decoding for tolerance comparisons, and ArrayArg/ArrayResult plumbing.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTING_CONTRACTION_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTING_CONTRACTION_TEST_UTIL_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"
#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {
namespace testing {

// An array of a golden table: element type, dims, little-endian bytes as hex.
struct GoldenArray {
  ElementType type;
  std::vector<int64_t> dims;
  const char* hex;
};

inline ArrayType TypeOf(const GoldenArray& array) { return ArrayType{array.type, array.dims}; }

inline std::vector<unsigned char> Bytes(const GoldenArray& array) {
  const std::string hex = array.hex;
  std::vector<unsigned char> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return bytes;
}

inline bool IsIntegral(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
      return true;
    default:
      return false;
  }
}

// Element i of a float or complex array as complex<double> (f16, bf16, f32, f64, c64, c128).
inline std::complex<double> Decode(ElementType type, const unsigned char* data, int64_t i) {
  uint16_t half;
  switch (type) {
    case ElementType::kF16: {
      std::memcpy(&half, data + 2 * i, 2);
      const int exp = (half >> 10) & 31, man = half & 1023;
      double v = exp == 0    ? std::ldexp(man, -24)
                 : exp == 31 ? (man ? NAN : INFINITY)
                             : std::ldexp(man | 1024, exp - 25);
      return (half & 0x8000) ? -v : v;
    }
    case ElementType::kBF16: {
      std::memcpy(&half, data + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(half) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      return f;
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, data + 8 * i, 8);
      return d;
    }
    case ElementType::kC64: {
      float f[2];
      std::memcpy(f, data + 8 * i, 8);
      return {f[0], f[1]};
    }
    case ElementType::kC128: {
      double d[2];
      std::memcpy(d, data + 16 * i, 16);
      return {d[0], d[1]};
    }
    default:
      ADD_FAILURE() << "Decode: unexpected type " << ElementTypeName(type);
      return 0;
  }
}

// Expects `got` (bytes of `type`) to equal `want`: byte for byte for integers, pred and zero
// tolerances; else |got - want| <= abs_tol + rel_tol * |want| per element (real and imaginary
// parts separately).
inline void ExpectArrayNear(const std::string& name, const ArrayType& type,
                            const std::vector<unsigned char>& got,
                            const std::vector<unsigned char>& want, double abs_tol,
                            double rel_tol) {
  ASSERT_EQ(got.size(), want.size()) << name;
  if (IsIntegral(type.type) || (abs_tol == 0 && rel_tol == 0)) {
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << name << ": byte " << i << " of " << type.ToString();
    }
    return;
  }
  for (int64_t i = 0; i < type.num_elements(); ++i) {
    const std::complex<double> g = Decode(type.type, got.data(), i);
    const std::complex<double> w = Decode(type.type, want.data(), i);
    ASSERT_LE(std::fabs(g.real() - w.real()), abs_tol + rel_tol * std::fabs(w.real()))
        << name << ": element " << i << " got " << g << " want " << w;
    ASSERT_LE(std::fabs(g.imag() - w.imag()), abs_tol + rel_tol * std::fabs(w.imag()))
        << name << ": element " << i << " got " << g << " want " << w;
  }
}

// The reduction region (x, y) -> x op y on scalars of `type`, with its combiner.
inline ScalarComputation Reduction(Combiner combiner, ElementType type) {
  EwOp op = EwOp::kAdd;
  switch (combiner) {
    case Combiner::kMultiply: op = EwOp::kMultiply; break;
    case Combiner::kMaximum: op = EwOp::kMaximum; break;
    case Combiner::kMinimum: op = EwOp::kMinimum; break;
    case Combiner::kAnd: op = EwOp::kAnd; break;
    case Combiner::kOr: op = EwOp::kOr; break;
    case Combiner::kXor: op = EwOp::kXor; break;
    default: break;
  }
  ScalarComputation c;
  c.combiner = combiner;
  c.body.inputs = {EwInput{type, {}}, EwInput{type, {}}};
  EwStep x{EwOp::kInput, type};
  x.attr = 0;
  EwStep y{EwOp::kInput, type};
  y.attr = 1;
  EwStep result{op, type};
  result.operands[0] = 0;
  result.operands[1] = 1;
  if (combiner == Combiner::kReplace) {  // (x, y) -> y.
    c.body.steps = {x, y};
    c.body.outputs = {1};
    return c;
  }
  c.body.steps = {x, y, result};
  c.body.outputs = {2};
  return c;
}

// The message of a non-OK status contains `text`.
#define EXPECT_ERROR_CONTAINS(status_expr, text)                                   \
  do {                                                                             \
    const ::pjrtkit::Status status_ = (status_expr);                               \
    EXPECT_EQ(status_.code(), ::pjrtkit::StatusCode::kInvalidArgument)             \
        << status_.ToString();                                                     \
    EXPECT_NE(status_.message().find(text), std::string::npos) << status_.ToString(); \
  } while (false)

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTING_CONTRACTION_TEST_UTIL_H_
