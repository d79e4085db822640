// Helpers of the reduction kernels' tests: arrays and bodies as the generated tables spell them
// (reduction_cases.inc), owned buffers, and comparisons with a stated tolerance.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_REDUCTION_TEST_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_REDUCTION_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/kernel_args.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {
namespace testing {

// An array of a table: element type, dimensions, base64 of its row-major bytes.
struct TestArray {
  ElementType type;
  std::vector<int64_t> dims;
  const char* base64;
};

// One body step of a table (EwStep with base64 constant bytes).
struct TestStep {
  EwOp op;
  ElementType type;
  ElementType operand_type;
  int32_t a, b, c;
  int64_t attr;
  const char* constant_base64;
};

// A region of a table: its parameter types, steps, outputs and the recognized combiner.
struct TestBody {
  std::vector<ElementType> inputs;
  std::vector<TestStep> steps;
  std::vector<int32_t> outputs;
  Combiner combiner;
};

// Decodes base64 (no line breaks).
std::string Base64Decode(const char* text);

// The ScalarComputation of a table body.
ScalarComputation MakeComputation(const TestBody& body);

// A buffer with its type (bytes kept 16-byte aligned).
class Buffer {
 public:
  Buffer(ElementType type, std::vector<int64_t> dims);
  explicit Buffer(const TestArray& array);
  // From raw bytes.
  Buffer(ElementType type, std::vector<int64_t> dims, const void* bytes);

  const ArrayType& type() const { return type_; }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  int64_t bytes() const { return type_.byte_size(); }
  ArrayArg arg() const { return ArrayArg{&type_, data()}; }
  ArrayResult result() { return ArrayResult{&type_, data()}; }
  // Fills every byte with `value`.
  void Fill(uint8_t value) { std::memset(data(), value, bytes() + 1); }

 private:
  ArrayType type_;
  std::unique_ptr<uint64_t[]> storage_;
};

// Compares `got` with `want` (same type and shape): bit-exact when rtol is 0 (NaN matches any
// NaN), else floats within rtol * max(1, |want|) per element (complex: per component). Returns
// "" or a description of the first mismatches.
std::string Compare(const Buffer& got, const TestArray& want, double rtol);
std::string Compare(const Buffer& got, const Buffer& want, double rtol);

// Element `k` of a buffer as text.
std::string ElementText(ElementType type, const void* data, int64_t k);

// Element `k` as a double (floats and integers; complex: the real part).
double ElementValue(ElementType type, const void* data, int64_t k);

// Sets element `k` from a double (integers truncate, floats round to nearest).
void SetElement(ElementType type, void* data, int64_t k, double value);

// Pointers of buffers.
std::vector<ArrayArg> Args(const std::vector<Buffer>& buffers);
std::vector<ArrayResult> Results(std::vector<Buffer>& buffers);
ArrayTypes Types(const std::vector<Buffer>& buffers);

// Buffers of the tables' arrays; result buffers of their types filled with 0xAB bytes.
std::vector<Buffer> MakeBuffers(const std::vector<TestArray>& arrays);
std::vector<Buffer> MakeResultBuffers(const std::vector<TestArray>& arrays);

// A body that applies `op` to its two parameters of `type` ((x, y) -> x op y; kInput: y), with
// `combiner`.
ScalarComputation BinaryComputation(EwOp op, ElementType type, Combiner combiner);

// A select body: compare(x, y) with `direction` on `type` -> pred.
ScalarComputation CompareComputation(ComparisonDirection direction, ElementType type);

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_REDUCTION_TEST_UTIL_H_
