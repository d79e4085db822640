// Helpers of the numerics tests: the golden tables' row types, base64, the generator's PRNG and
// hash (gen_goldens.py computes the same), the codec sweeps.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pjrtkit {
namespace sim {
namespace golden {

// One input set of golden_inputs.inc: up to three arrays of one element type.
struct InputSet {
  int type;             // pjrtkit::ElementType value of the (last) arrays.
  int kind;             // 1 unary, 2 binary, 3 select (pred, a, b), 4 clamp (min, x, max).
  int64_t n;            // Elements per array.
  const char* data[3];  // Base64 of each array (empty when unused).
};

// One op case of golden_ops.inc / golden_convert.inc.
struct OpCase {
  const char* op;        // EwOpName of the op.
  int result_type;       // ElementType of the result.
  int operand_type;      // ElementType of the operands (pred for select's first).
  int64_t attr;          // EwStep::attr.
  int input_kind;        // Which InputSet of operand_type (select: of result_type).
  const char* expected;  // Base64 of the expected result.
};

// One row of golden_codecs.inc.
struct CodecCase {
  int type;                // ElementType of the format.
  int64_t f32_sweep_size;  // Elements of F32Sweep(type).
  int64_t f64_sweep_size;  // Elements of F64Sweep(type).
  const char* decode_f32;  // Chunk hashes (hex, comma separated) of every code -> f32 bits.
  const char* decode_f64;  // ... -> f64 bits.
  const char* encode_f32;  // ... of F32Sweep -> codes.
  const char* encode_f64;  // ... of F64Sweep -> codes.
};

// Elements per hashed chunk.
constexpr int64_t kChunk = 4096;

// Decodes base64 (no line breaks).
std::string Base64Decode(const char* text);

// The generator's splitmix64 stream: element i (0-based) of the stream seeded with `seed`.
std::vector<uint64_t> SplitMix64(uint64_t seed, int64_t n);

// Order-sensitive hash of `values` (zero-extended element bits), one per kChunk elements.
std::vector<uint64_t> ChunkHashes(const std::vector<uint64_t>& values);

// Parses "hhhh,hhhh,..." into numbers.
std::vector<uint64_t> ParseHashes(const char* text);

// Floats at, between and one ulp beside every finite value of the 8/16-bit format `type`, then
// 65536 random bit patterns (as gen_goldens.py's f32_sweep).
std::vector<float> F32Sweep(int type);

// The same in f64, plus the neighbours one f32 ulp away (gen_goldens.py's f64_sweep).
std::vector<double> F64Sweep(int type);

}  // namespace golden
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_TESTDATA_GOLDEN_UTIL_H_
