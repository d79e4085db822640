// rng_bit_generator (indexing.h): XLA's Threefry-2x32 and Philox-4x32 bit generators, bit for bit
// as XLA:CPU computes them (XLA expands the op with its prng library; this file follows the
// algorithm, checked against jaxlib's CPU results in rng_bit_generator_test).
//
// THREE_FRY: state [key, counter]. 64-bit outputs: element i = both words of
// Threefry2x32(key, counter + i); new counter = counter + n. Narrower outputs: the shape is split
// in halves along its first even dimension (else its largest): element (.., 2h + b, ..) is word b
// of Threefry2x32(key, counter + the row-major index of (.., h, ..) in the half shape), truncated
// to the element size; new counter = counter + the half shape's element count (rank 0: one
// block, word 0).
// PHILOX (and DEFAULT, which XLA:CPU maps to PHILOX): state [key, counter_low] with the key as
// the counter's high word, or [key, counter_low, counter_high]. Block j = Philox4x32(key, 128-bit
// counter + j) gives elements 4j..4j+3 (truncated to the element size), or, for 64-bit outputs,
// elements 2j and 2j+1 (words 0|1 and 2|3); new counter = counter + blocks (the u64[2] state keeps
// the low word only).
#include <cstdint>
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {
namespace {

// Two 32-bit words.
struct Words2 {
  uint32_t w[2];
};

// Four 32-bit words.
struct Words4 {
  uint32_t w[4];
};

uint32_t Low32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) of the counter `counter` under `key`.
Words2 Threefry2x32(uint64_t key, uint64_t counter) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {Low32(key), High32(key), 0x1BD11BDAu ^ Low32(key) ^ High32(key)};
  uint32_t x0 = Low32(counter) + ks[0];
  uint32_t x1 = High32(counter) + ks[1];
  for (int group = 0; group < 5; ++group) {
    const int* rotations = kRotations + (group % 2) * 4;
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, rotations[r]) ^ x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return Words2{{x0, x1}};
}

// Philox-4x32 with 10 rounds of the 128-bit counter (low, high) under `key`.
Words4 Philox4x32(uint64_t key, uint64_t low, uint64_t high) {
  uint32_t k0 = Low32(key), k1 = High32(key);
  uint32_t x[4] = {Low32(low), High32(low), Low32(high), High32(high)};
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(x[0]) * 0xD2511F53u;
    const uint64_t p1 = static_cast<uint64_t>(x[2]) * 0xCD9E8D57u;
    const uint32_t next[4] = {High32(p1) ^ x[1] ^ k0, Low32(p1), High32(p0) ^ x[3] ^ k1, Low32(p0)};
    std::memcpy(x, next, sizeof(x));
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Words4{{x[0], x[1], x[2], x[3]}};
}

// Stores the low `bytes` bytes of `value` (little-endian) at element i of `out`.
inline void Store(char* out, int64_t bytes, int64_t i, uint64_t value) {
  switch (bytes) {
    case 1: {
      const uint8_t v = static_cast<uint8_t>(value);
      std::memcpy(out + i, &v, 1);
      return;
    }
    case 2: {
      const uint16_t v = static_cast<uint16_t>(value);
      std::memcpy(out + 2 * i, &v, 2);
      return;
    }
    case 4: {
      const uint32_t v = static_cast<uint32_t>(value);
      std::memcpy(out + 4 * i, &v, 4);
      return;
    }
    default:
      std::memcpy(out + 8 * i, &value, 8);
  }
}

// Threefry bits of an output of `dims` with elements of `bytes`; returns the new counter.
uint64_t ThreefryBits(uint64_t key, uint64_t counter, const std::vector<int64_t>& dims,
                      int64_t bytes, char* out) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return counter;  // The half shape is empty too (no loop over its other dims).
  if (bytes == 8) {
    for (int64_t i = 0; i < n; ++i) {
      const Words2 x = Threefry2x32(key, counter + static_cast<uint64_t>(i));
      Store(out, 8, i, x.w[0] | (static_cast<uint64_t>(x.w[1]) << 32));
    }
    return counter + static_cast<uint64_t>(n);
  }
  if (dims.empty()) {
    Store(out, bytes, 0, Threefry2x32(key, counter).w[0]);
    return counter + 1;
  }
  // The split dimension: the first even one, else the first of the largest.
  int split = -1;
  for (size_t k = 0; k < dims.size() && split < 0; ++k) {
    if (dims[k] % 2 == 0) split = static_cast<int>(k);
  }
  if (split < 0) {
    split = 0;
    for (size_t k = 1; k < dims.size(); ++k) {
      if (dims[k] > dims[split]) split = static_cast<int>(k);
    }
  }
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < split; ++k) outer *= dims[k];
  for (size_t k = split + 1; k < dims.size(); ++k) inner *= dims[k];
  const int64_t full = dims[split], half = (full + 1) / 2;
  uint64_t c = counter;  // counter + the row-major index in the half shape.
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t h = 0; h < half; ++h) {
      const int64_t base = (o * full + 2 * h) * inner;
      const bool second = 2 * h + 1 < full;
      for (int64_t i = 0; i < inner; ++i, ++c) {
        const Words2 x = Threefry2x32(key, c);
        Store(out, bytes, base + i, x.w[0]);
        if (second) Store(out, bytes, base + inner + i, x.w[1]);
      }
    }
  }
  return counter + static_cast<uint64_t>(outer * half * inner);
}

// Philox bits of `n` elements of `bytes`; advances the 128-bit counter (low, high).
void PhiloxBits(uint64_t key, uint64_t* low, uint64_t* high, int64_t n, int64_t bytes, char* out) {
  const int64_t per_block = bytes == 8 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  uint64_t lo = *low, hi = *high;
  for (int64_t j = 0; j < blocks; ++j) {
    const Words4 x = Philox4x32(key, lo, hi);
    if (bytes == 8) {
      const uint64_t v[2] = {x.w[0] | (static_cast<uint64_t>(x.w[1]) << 32),
                             x.w[2] | (static_cast<uint64_t>(x.w[3]) << 32)};
      for (int64_t k = 0; k < 2 && 2 * j + k < n; ++k) Store(out, 8, 2 * j + k, v[k]);
    } else {
      for (int64_t k = 0; k < 4 && 4 * j + k < n; ++k) Store(out, bytes, 4 * j + k, x.w[k]);
    }
    if (++lo == 0) ++hi;
  }
  *low = lo;
  *high = hi;
}

const char* AlgorithmName(RngAlgorithm algorithm) {
  switch (algorithm) {
    case RngAlgorithm::kDefault:
      return "DEFAULT";
    case RngAlgorithm::kThreeFry:
      return "THREE_FRY";
    case RngAlgorithm::kPhilox:
      return "PHILOX";
  }
  return "unknown";
}

}  // namespace

Status CheckRngBitGenerator(const RngBitGeneratorParams& params, const ArrayTypes& operands,
                            const ArrayTypes& results) {
  const char* op = "rng_bit_generator";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 1, results, 2));
  const RngAlgorithm algorithm = params.algorithm;
  if (algorithm != RngAlgorithm::kDefault && algorithm != RngAlgorithm::kThreeFry &&
      algorithm != RngAlgorithm::kPhilox) {
    return InvalidArgument("rng_bit_generator: algorithm " +
                           std::to_string(static_cast<int>(algorithm)) +
                           " is unknown; expected DEFAULT, THREE_FRY or PHILOX");
  }
  const ArrayType& state = *operands[0];
  const bool threefry = algorithm == RngAlgorithm::kThreeFry;
  const bool state_ok = state.type == ElementType::kU64 && state.dims.size() == 1 &&
                        (state.dims[0] == 2 || (!threefry && state.dims[0] == 3));
  if (!state_ok) {
    return InvalidArgument(std::string("rng_bit_generator: state is ") + state.ToString() +
                           "; expected " + (threefry ? "u64[2]" : "u64[2] or u64[3]") + " for " +
                           AlgorithmName(algorithm));
  }
  if (*results[0] != state) {
    return InvalidArgument("rng_bit_generator: result 0 (the new state) is " +
                           results[0]->ToString() + "; expected " + state.ToString());
  }
  const ArrayType& bits = *results[1];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "result 1 (the bits)", bits));
  const int width = ElementTypeBits(bits.type);
  if (!(IsIntegerType(bits.type) || IsFloatType(bits.type)) || width > 64) {
    return InvalidArgument("rng_bit_generator: result 1 (the bits) has element type " +
                           TypeName(bits.type) +
                           "; expected an integer or floating-point type of 8, 16, 32 or 64 bits");
  }
  return OkStatus();
}

Status RunRngBitGenerator(const RngBitGeneratorParams& params,
                          const std::vector<ArrayArg>& operands,
                          const std::vector<ArrayResult>& results) {
  const ArrayType& state_type = *operands[0].type;
  uint64_t state[3] = {0, 0, 0};
  std::memcpy(state, operands[0].data, static_cast<size_t>(state_type.dims[0]) * 8);
  const ArrayType& bits = *results[1].type;
  char* out = static_cast<char*>(results[1].data);
  const int64_t bytes = bits.element_bytes();
  if (params.algorithm == RngAlgorithm::kThreeFry) {
    state[1] = ThreefryBits(state[0], state[1], bits.dims, bytes, out);
  } else {
    const bool wide = state_type.dims[0] == 3;
    uint64_t low = state[1], high = wide ? state[2] : state[0];
    PhiloxBits(state[0], &low, &high, bits.num_elements(), bytes, out);
    state[1] = low;
    if (wide) state[2] = high;
  }
  std::memcpy(results[0].data, state, static_cast<size_t>(state_type.dims[0]) * 8);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
