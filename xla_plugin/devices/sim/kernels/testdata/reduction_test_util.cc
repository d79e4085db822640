#include "xla_plugin/devices/sim/kernels/testdata/reduction_test_util.h"

#include <cmath>
#include <sstream>

namespace pjrtkit {
namespace sim {
namespace testing {
namespace {

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  float value;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    value = mant == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return (h & 0x8000) ? -value : value;
}

float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool IsFloatLike(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 ||
         t == ElementType::kF64 || t == ElementType::kC64 || t == ElementType::kC128;
}

template <typename T>
T Load(const void* data, int64_t k) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + k * sizeof(T), sizeof(T));
  return v;
}

// Component `c` (0 real, 1 imaginary) of element k as double; integers exact up to 2^53.
double Component(ElementType t, const void* data, int64_t k, int c) {
  switch (t) {
    case ElementType::kC64:
      return Load<float>(data, 2 * k + c);
    case ElementType::kC128:
      return Load<double>(data, 2 * k + c);
    default:
      return c == 0 ? ElementValue(t, data, k) : 0;
  }
}

bool Close(double got, double want, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::max(1.0, std::fabs(want));
}

std::string CompareBytes(ElementType type, const std::vector<int64_t>& dims, const void* got,
                         const void* want, double rtol) {
  ArrayType array{type, dims};
  const int64_t n = array.num_elements();
  const int64_t bytes = array.element_bytes();
  std::ostringstream out;
  int mismatches = 0;
  for (int64_t k = 0; k < n; ++k) {
    bool same;
    if (IsFloatLike(type)) {
      same = true;
      const int parts = (type == ElementType::kC64 || type == ElementType::kC128) ? 2 : 1;
      for (int c = 0; c < parts; ++c) {
        const double g = Component(type, got, k, c);
        const double w = Component(type, want, k, c);
        if (rtol == 0) {
          same = same && ((std::isnan(g) && std::isnan(w)) ||
                          std::memcmp(static_cast<const char*>(got) + k * bytes,
                                      static_cast<const char*>(want) + k * bytes, bytes) == 0);
        } else {
          same = same && Close(g, w, rtol);
        }
      }
    } else {
      same = std::memcmp(static_cast<const char*>(got) + k * bytes,
                         static_cast<const char*>(want) + k * bytes, bytes) == 0;
    }
    if (!same && mismatches++ < 8) {
      out << " [" << k << "] got " << ElementText(type, got, k) << " want "
          << ElementText(type, want, k) << ";";
    }
  }
  if (mismatches == 0) return "";
  return std::to_string(mismatches) + " of " + std::to_string(n) + " elements differ:" + out.str();
}

}  // namespace

std::string Base64Decode(const char* text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0;
  uint32_t acc = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    const int v = value(*p);
    if (v < 0) continue;
    acc = ((acc << 6) | static_cast<uint32_t>(v)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

ScalarComputation MakeComputation(const TestBody& body) {
  ScalarComputation c;
  for (ElementType t : body.inputs) c.body.inputs.push_back(EwInput{t, {}});
  for (const TestStep& s : body.steps) {
    EwStep step;
    step.op = s.op;
    step.type = s.type;
    step.operand_type = s.operand_type;
    step.operands[0] = s.a;
    step.operands[1] = s.b;
    step.operands[2] = s.c;
    step.attr = s.attr;
    step.constant = Base64Decode(s.constant_base64);
    c.body.steps.push_back(step);
  }
  c.body.outputs = body.outputs;
  c.combiner = body.combiner;
  return c;
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims) {
  type_.type = type;
  type_.dims = std::move(dims);
  const int64_t words = type_.byte_size() / 8 + 2;
  storage_.reset(new uint64_t[words]);
  std::memset(storage_.get(), 0, words * 8);
}

Buffer::Buffer(const TestArray& array) : Buffer(array.type, array.dims) {
  const std::string bytes = Base64Decode(array.base64);
  std::memcpy(data(), bytes.data(), std::min<size_t>(bytes.size(), type_.byte_size()));
}

Buffer::Buffer(ElementType type, std::vector<int64_t> dims, const void* bytes)
    : Buffer(type, std::move(dims)) {
  std::memcpy(data(), bytes, type_.byte_size());
}

std::string Compare(const Buffer& got, const TestArray& want, double rtol) {
  if (got.type().type != want.type || got.type().dims != want.dims) return "type mismatch";
  const std::string bytes = Base64Decode(want.base64);
  if (static_cast<int64_t>(bytes.size()) != got.bytes()) return "size mismatch in the table";
  return CompareBytes(want.type, want.dims, got.data(), bytes.data(), rtol);
}

std::string Compare(const Buffer& got, const Buffer& want, double rtol) {
  if (got.type() != want.type()) return "type mismatch";
  return CompareBytes(want.type().type, want.type().dims, got.data(), want.data(), rtol);
}

double ElementValue(ElementType type, const void* data, int64_t k) {
  switch (type) {
    case ElementType::kPred:
      return Load<uint8_t>(data, k);
    case ElementType::kS8:
      return Load<int8_t>(data, k);
    case ElementType::kS16:
      return Load<int16_t>(data, k);
    case ElementType::kS32:
      return Load<int32_t>(data, k);
    case ElementType::kS64:
      return static_cast<double>(Load<int64_t>(data, k));
    case ElementType::kU8:
      return Load<uint8_t>(data, k);
    case ElementType::kU16:
      return Load<uint16_t>(data, k);
    case ElementType::kU32:
      return Load<uint32_t>(data, k);
    case ElementType::kU64:
      return static_cast<double>(Load<uint64_t>(data, k));
    case ElementType::kF16:
      return HalfToFloat(Load<uint16_t>(data, k));
    case ElementType::kBF16:
      return Bf16ToFloat(Load<uint16_t>(data, k));
    case ElementType::kF32:
      return Load<float>(data, k);
    case ElementType::kF64:
      return Load<double>(data, k);
    case ElementType::kC64:
      return Load<float>(data, 2 * k);
    case ElementType::kC128:
      return Load<double>(data, 2 * k);
    default:
      return 0;
  }
}

void SetElement(ElementType type, void* data, int64_t k, double value) {
  auto store = [&](auto v) {
    std::memcpy(static_cast<char*>(data) + k * sizeof(v), &v, sizeof(v));
  };
  switch (type) {
    case ElementType::kPred:
      store(static_cast<uint8_t>(value != 0));
      break;
    case ElementType::kS8:
      store(static_cast<int8_t>(value));
      break;
    case ElementType::kS16:
      store(static_cast<int16_t>(value));
      break;
    case ElementType::kS32:
      store(static_cast<int32_t>(value));
      break;
    case ElementType::kS64:
      store(static_cast<int64_t>(value));
      break;
    case ElementType::kU8:
      store(static_cast<uint8_t>(value));
      break;
    case ElementType::kU16:
      store(static_cast<uint16_t>(value));
      break;
    case ElementType::kU32:
      store(static_cast<uint32_t>(value));
      break;
    case ElementType::kU64:
      store(static_cast<uint64_t>(value));
      break;
    case ElementType::kF32:
      store(static_cast<float>(value));
      break;
    case ElementType::kF64:
      store(value);
      break;
    case ElementType::kBF16: {
      // Exact for the small integers the tests use.
      const float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      store(static_cast<uint16_t>(bits >> 16));
      break;
    }
    case ElementType::kF16: {
      // Exact for small integers: find the bits by search over the finite codes.
      for (uint32_t h = 0; h < 0x10000; ++h) {
        if (HalfToFloat(static_cast<uint16_t>(h)) == static_cast<float>(value)) {
          store(static_cast<uint16_t>(h));
          break;
        }
      }
      break;
    }
    default:
      break;
  }
}

std::string ElementText(ElementType type, const void* data, int64_t k) {
  std::ostringstream out;
  out.precision(9);
  if (type == ElementType::kC64 || type == ElementType::kC128) {
    out << "(" << Component(type, data, k, 0) << "," << Component(type, data, k, 1) << ")";
  } else if (type == ElementType::kS64) {
    out << Load<int64_t>(data, k);
  } else if (type == ElementType::kU64) {
    out << Load<uint64_t>(data, k);
  } else {
    out << ElementValue(type, data, k);
  }
  return out.str();
}

std::vector<ArrayArg> Args(const std::vector<Buffer>& buffers) {
  std::vector<ArrayArg> args;
  for (const Buffer& b : buffers) args.push_back(b.arg());
  return args;
}

std::vector<ArrayResult> Results(std::vector<Buffer>& buffers) {
  std::vector<ArrayResult> results;
  for (Buffer& b : buffers) results.push_back(b.result());
  return results;
}

ArrayTypes Types(const std::vector<Buffer>& buffers) {
  ArrayTypes types;
  for (const Buffer& b : buffers) types.push_back(&b.type());
  return types;
}

std::vector<Buffer> MakeBuffers(const std::vector<TestArray>& arrays) {
  std::vector<Buffer> buffers;
  for (const TestArray& a : arrays) buffers.emplace_back(a);
  return buffers;
}

std::vector<Buffer> MakeResultBuffers(const std::vector<TestArray>& arrays) {
  std::vector<Buffer> buffers;
  for (const TestArray& a : arrays) {
    buffers.emplace_back(a.type, a.dims);
    std::memset(buffers.back().data(), 0xAB, buffers.back().bytes());
  }
  return buffers;
}

ScalarComputation BinaryComputation(EwOp op, ElementType type, Combiner combiner) {
  ScalarComputation c;
  c.body.inputs = {EwInput{type, {}}, EwInput{type, {}}};
  EwStep x{EwOp::kInput, type};
  x.attr = 0;
  EwStep y{EwOp::kInput, type};
  y.attr = 1;
  c.body.steps = {x, y};
  if (op == EwOp::kInput) {
    c.body.outputs = {1};
  } else {
    EwStep s{op, type};
    s.operands[0] = 0;
    s.operands[1] = 1;
    c.body.steps.push_back(s);
    c.body.outputs = {2};
  }
  c.combiner = combiner;
  return c;
}

ScalarComputation CompareComputation(ComparisonDirection direction, ElementType type) {
  ScalarComputation c;
  c.body.inputs = {EwInput{type, {}}, EwInput{type, {}}};
  EwStep x{EwOp::kInput, type};
  x.attr = 0;
  EwStep y{EwOp::kInput, type};
  y.attr = 1;
  EwStep s{EwOp::kCompare, ElementType::kPred, type};
  s.operands[0] = 0;
  s.operands[1] = 1;
  s.attr = static_cast<int64_t>(direction);
  c.body.steps = {x, y, s};
  c.body.outputs = {2};
  return c;
}

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit
