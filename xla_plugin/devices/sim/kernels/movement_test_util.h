// Test helpers of the data movement and indexing kernel tests: host arrays with their types, byte
// patterns standing for element codes, status matchers.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/devices/sim/kernels/kernel_args.h"

namespace pjrtkit {
namespace sim {
namespace testing {

// A host array: its type and its dense bytes (8-byte aligned storage).
struct HostArray {
  ArrayType type;
  std::vector<uint64_t> storage;

  HostArray() = default;
  HostArray(ElementType element_type, std::vector<int64_t> dims) {
    type.type = element_type;
    type.dims = std::move(dims);
    storage.assign(static_cast<size_t>((type.byte_size() + 7) / 8 + 1), 0);
  }
  char* bytes() { return reinterpret_cast<char*>(storage.data()); }
  const char* bytes() const { return reinterpret_cast<const char*>(storage.data()); }
  // Element i as a T (sizeof(T) == element bytes).
  template <typename T>
  T Get(int64_t i) const {
    T value;
    std::memcpy(&value, bytes() + i * sizeof(T), sizeof(T));
    return value;
  }
  template <typename T>
  void Set(int64_t i, T value) {
    std::memcpy(bytes() + i * sizeof(T), &value, sizeof(T));
  }
  ArrayArg arg() const { return ArrayArg{&type, bytes()}; }
  ArrayResult result() { return ArrayResult{&type, bytes()}; }
};

// A host array of `type` holding `values` converted to T.
template <typename T>
HostArray MakeArray(ElementType type, std::vector<int64_t> dims, const std::vector<T>& values) {
  HostArray array(type, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) array.Set<T>(static_cast<int64_t>(i), values[i]);
  return array;
}

// A scalar integer of `type` with the low bytes of `bits`.
inline HostArray MakeIndexScalar(ElementType type, uint64_t bits) {
  HostArray array(type, {});
  std::memcpy(array.bytes(), &bits, static_cast<size_t>(array.type.element_bytes()));
  return array;
}

// The byte pattern standing for element code `code` in an element of `bytes` bytes: distinct
// for distinct codes below 256^bytes (pred, one byte: the code's parity, a valid pred).
inline void WritePattern(int64_t code, int64_t bytes, bool is_pred, char* out) {
  if (is_pred) {
    out[0] = static_cast<char>(code & 1);
    return;
  }
  const uint64_t hash = static_cast<uint64_t>(code) * 0x9E3779B97F4A7C15ull + 0x1234567u;
  for (int64_t b = 0; b < bytes; ++b) {
    // The low three bytes are the code's own, so codes below 2^(8 * min(bytes, 3)) stay distinct.
    const uint64_t byte =
        b < 3 ? static_cast<uint64_t>(code) >> (8 * b) : (hash >> (8 * (b % 8))) ^ b;
    out[b] = static_cast<char>(byte & 0xff);
  }
}

// Fills `array` with the patterns of codes base + i.
inline void FillPatterns(HostArray* array, int64_t base) {
  const int64_t bytes = array->type.element_bytes();
  const bool is_pred = array->type.type == ElementType::kPred;
  for (int64_t i = 0; i < array->type.num_elements(); ++i) {
    WritePattern(base + i, bytes, is_pred, array->bytes() + i * bytes);
  }
}

// Pointers of the args / results of arrays.
inline std::vector<ArrayArg> Args(const std::vector<const HostArray*>& arrays) {
  std::vector<ArrayArg> args;
  for (const HostArray* a : arrays) args.push_back(a->arg());
  return args;
}
inline ArrayTypes Types(const std::vector<const HostArray*>& arrays) {
  ArrayTypes types;
  for (const HostArray* a : arrays) types.push_back(&a->type);
  return types;
}

// Expects an INVALID_ARGUMENT status whose message contains `text`.
inline void ExpectInvalid(const Status& status, const std::string& text) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(text), std::string::npos)
      << "message: " << status.message() << "\nexpected to contain: " << text;
}

// Expects an OK status.
#define EXPECT_STATUS_OK(expr)                       \
  do {                                               \
    ::pjrtkit::Status status_ = (expr);              \
    EXPECT_TRUE(status_.ok()) << status_.ToString(); \
  } while (0)

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_MOVEMENT_TEST_UTIL_H_
