#include "xla_plugin/devices/sim/kernels/testdata/golden_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"

namespace pjrtkit {
namespace sim {
namespace golden {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Every finite value of the format, sorted, zeros merged into +0.
std::vector<double> FiniteValues(int type) {
  LowFloat format;
  LowFloatOf(static_cast<ElementType>(type), &format);
  const int bits = ElementTypeBits(static_cast<ElementType>(type));
  std::vector<double> values;
  for (uint32_t code = 0; code < (1u << bits); ++code) {
    const double v = DecodeToF32(format, code);
    if (std::isfinite(v)) values.push_back(v == 0 ? 0.0 : v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<double> ValuesAndMidpoints(int type) {
  std::vector<double> fin = FiniteValues(type);
  std::vector<double> out = fin;
  for (size_t i = 0; i + 1 < fin.size(); ++i) out.push_back((fin[i] + fin[i + 1]) / 2);
  return out;
}

}  // namespace

std::string Base64Decode(const char* text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    const int v = Base64Value(*p);
    if (v < 0) continue;  // '=' padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::vector<uint64_t> SplitMix64(uint64_t seed, int64_t n) {
  std::vector<uint64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t z = seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    out[i] = z ^ (z >> 31);
  }
  return out;
}

std::vector<uint64_t> ChunkHashes(const std::vector<uint64_t>& values) {
  std::vector<uint64_t> out;
  for (size_t s = 0; s < values.size(); s += kChunk) {
    uint64_t sum = 0;
    for (size_t i = s; i < values.size() && i < s + kChunk; ++i) {
      uint64_t z = values[i] * 0x9E3779B97F4A7C15ull + (i - s + 1) * 0xD6E8FEB86659FD93ull;
      z = (z ^ (z >> 32)) * 0xD6E8FEB86659FD93ull;
      sum += z ^ (z >> 32);
    }
    out.push_back(sum);
  }
  return out;
}

std::vector<uint64_t> ParseHashes(const char* text) {
  std::vector<uint64_t> out;
  const char* p = text;
  while (*p != '\0') {
    char* end = nullptr;
    out.push_back(std::strtoull(p, &end, 16));
    p = (*end == ',') ? end + 1 : end;
  }
  return out;
}

std::vector<float> F32Sweep(int type) {
  std::vector<uint32_t> base;
  for (double v : ValuesAndMidpoints(type)) {
    base.push_back(BitCast<uint32_t>(static_cast<float>(v)));
  }
  std::vector<float> out;
  for (int delta : {0, 1, -1}) {
    for (uint32_t b : base) out.push_back(BitCast<float>(b + static_cast<uint32_t>(delta)));
  }
  for (uint64_t r : SplitMix64(99, 1 << 16)) {
    out.push_back(BitCast<float>(static_cast<uint32_t>(r)));
  }
  return out;
}

std::vector<double> F64Sweep(int type) {
  std::vector<uint64_t> base;
  for (double v : ValuesAndMidpoints(type)) base.push_back(BitCast<uint64_t>(v));
  std::vector<double> out;
  const uint64_t kF32Ulp = 1ull << 29;
  const uint64_t deltas[] = {0, 1, ~uint64_t{0}, kF32Ulp, ~kF32Ulp + 1};
  for (uint64_t delta : deltas) {
    for (uint64_t b : base) out.push_back(BitCast<double>(b + delta));
  }
  for (uint64_t r : SplitMix64(98, 1 << 16)) out.push_back(BitCast<double>(r));
  return out;
}

}  // namespace golden
}  // namespace sim
}  // namespace pjrtkit
