// Sort (indexing.h): each row along the sort dimension is sorted as a permutation by a merge sort
// of our own (stable, and safe with a comparator that is no strict weak order: it never reads
// outside the row, whatever the comparator answers), then every operand is gathered by it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {
namespace {

// Sorts perm[0, n) by less(element, element), stably: insertion sort of short runs, then
// bottom-up merges through `scratch` (n entries).
template <typename Less>
void MergeSortPermutation(int64_t* perm, int64_t n, int64_t* scratch, const Less& less) {
  constexpr int64_t kRun = 16;
  for (int64_t lo = 0; lo < n; lo += kRun) {
    const int64_t hi = std::min(n, lo + kRun);
    for (int64_t i = lo + 1; i < hi; ++i) {
      const int64_t x = perm[i];
      int64_t j = i;
      for (; j > lo && less(x, perm[j - 1]); --j) perm[j] = perm[j - 1];
      perm[j] = x;
    }
  }
  int64_t* src = perm;
  int64_t* dst = scratch;
  for (int64_t width = kRun; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(n, lo + width), hi = std::min(n, lo + 2 * width);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = less(src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    std::swap(src, dst);
  }
  if (src != perm) std::memcpy(perm, src, static_cast<size_t>(n) * sizeof(int64_t));
}

// Whether the keys path covers operands of `type`.
bool KeysCover(ElementType type) {
  return type == ElementType::kPred || IsIntegerType(type) || type == ElementType::kF16 ||
         type == ElementType::kBF16 || type == ElementType::kF32 || type == ElementType::kF64;
}

// Whether comparison `type` applies to elements of `element` (the spec's compare, C3).
bool ComparisonTypeFits(ComparisonType type, ElementType element) {
  switch (type) {
    case ComparisonType::kSigned:
      return IsSignedIntegerType(element);
    case ComparisonType::kUnsigned:
      return IsUnsignedIntegerType(element) || element == ElementType::kPred;
    case ComparisonType::kFloat:
    case ComparisonType::kTotalOrder:
      return IsFloatType(element);
    default:
      return false;
  }
}

// Raw bits of element i of `width` bytes, zero-extended.
uint64_t ReadBits(const char* data, int64_t width, int64_t i) {
  switch (width) {
    case 1: {
      uint8_t v;
      std::memcpy(&v, data + i, 1);
      return v;
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      return v;
    }
  }
}

// IEEE layout of the keys path's float types.
struct FloatLayout {
  int bits;           // Total width.
  int mantissa_bits;  // Stored mantissa bits.
};

FloatLayout LayoutOf(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return {16, 10};
    case ElementType::kBF16:
      return {16, 7};
    case ElementType::kF32:
      return {32, 23};
    default:
      return {64, 52};
  }
}

// The value of float `bits` of `type` as a double (exact for f16, bf16, f32, f64).
double FloatValue(ElementType type, uint64_t bits) {
  switch (type) {
    case ElementType::kF16: {
      const int exponent = static_cast<int>((bits >> 10) & 0x1f);
      const double mantissa = static_cast<double>(bits & 0x3ff);
      double magnitude;
      if (exponent == 0) {
        magnitude = std::ldexp(mantissa, -24);
      } else if (exponent == 31) {
        magnitude = mantissa == 0 ? INFINITY : NAN;
      } else {
        magnitude = std::ldexp(mantissa + 1024, exponent - 25);
      }
      return (bits & 0x8000) ? -magnitude : magnitude;
    }
    case ElementType::kBF16:
    case ElementType::kF32: {
      const uint32_t b = type == ElementType::kBF16 ? static_cast<uint32_t>(bits << 16)
                                                    : static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    default: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
  }
}

// Maps float bits to an unsigned integer of the same total order (-NaN < -Inf < ... < -0.0 <
// +0.0 < ... < +Inf < +NaN); `canonicalize` first makes -0.0 +0.0 and every NaN +NaN.
uint64_t TotalOrderBits(ElementType type, uint64_t bits, bool canonicalize) {
  const FloatLayout layout = LayoutOf(type);
  const uint64_t sign = uint64_t{1} << (layout.bits - 1);
  const uint64_t all = layout.bits == 64 ? ~uint64_t{0} : (sign << 1) - 1;
  if (canonicalize) {
    const uint64_t magnitude = bits & (sign - 1);
    const uint64_t infinity = (sign - 1) & ~((uint64_t{1} << layout.mantissa_bits) - 1);
    if (magnitude == 0) bits = 0;
    if (magnitude > infinity) bits = infinity | (uint64_t{1} << (layout.mantissa_bits - 1));
  }
  return (bits & sign) ? (~bits & all) : (bits | sign);
}

// One key of a row: its values in a form compared with < and ==.
struct RowKey {
  const SortKey* key = nullptr;
  ElementType type = ElementType::kInvalid;
  bool as_float = false;       // FLOAT comparison: `values`; otherwise `bits`.
  std::vector<uint64_t> bits;  // Order-preserving unsigned images.
  std::vector<double> values;  // Float values (NaN compares unordered).
};

// Fills `key` from the row of `len` elements of `data` (element stride `stride`).
void LoadRowKey(const char* data, int64_t width, int64_t stride, int64_t len, RowKey* key) {
  const ElementType type = key->type;
  for (int64_t k = 0; k < len; ++k) {
    const uint64_t raw = ReadBits(data, width, k * stride);
    if (key->as_float) {
      key->values[k] = FloatValue(type, raw);
    } else if (IsSignedIntegerType(type)) {
      const int shift = static_cast<int>(64 - 8 * width);
      const int64_t value = static_cast<int64_t>(raw << shift) >> shift;
      key->bits[k] = static_cast<uint64_t>(value) ^ (uint64_t{1} << 63);
    } else if (IsFloatType(type)) {
      key->bits[k] = TotalOrderBits(type, raw, key->key->canonicalize);
    } else {
      key->bits[k] = raw;
    }
  }
}

// Gathers the row of `len` elements of `width` bytes (stride `stride` elements) by `perm`.
void GatherRow(const char* src, char* dst, int64_t width, int64_t stride, int64_t len,
               const int64_t* perm) {
  switch (width) {
    case 1:
      for (int64_t k = 0; k < len; ++k) dst[k * stride] = src[perm[k] * stride];
      return;
    case 2:
      for (int64_t k = 0; k < len; ++k)
        std::memcpy(dst + 2 * k * stride, src + 2 * perm[k] * stride, 2);
      return;
    case 4:
      for (int64_t k = 0; k < len; ++k)
        std::memcpy(dst + 4 * k * stride, src + 4 * perm[k] * stride, 4);
      return;
    case 8:
      for (int64_t k = 0; k < len; ++k)
        std::memcpy(dst + 8 * k * stride, src + 8 * perm[k] * stride, 8);
      return;
    default:
      for (int64_t k = 0; k < len; ++k) {
        std::memcpy(dst + width * k * stride, src + width * perm[k] * stride,
                    static_cast<size_t>(width));
      }
  }
}

// Checks the comparator body's signature: 2n scalar inputs (lhs_i, rhs_i of operand i's type)
// and one pred output.
Status CheckComparatorBody(const FusedElementwise& body, const ArrayTypes& operands) {
  if (!body.dims.empty()) {
    return InvalidArgument("sort: the comparator's dims are " + DimsString(body.dims) +
                           "; expected [] (a computation on scalars)");
  }
  const size_t n = operands.size();
  if (body.inputs.size() != 2 * n) {
    return InvalidArgument("sort: the comparator takes " + std::to_string(body.inputs.size()) +
                           " inputs; expected " + std::to_string(2 * n) +
                           " (lhs and rhs of each operand)");
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const EwInput& input = body.inputs[i];
    if (input.type != operands[i / 2]->type || !input.strides.empty()) {
      return InvalidArgument("sort: comparator input " + std::to_string(i) + " is " +
                             TypeName(input.type) + " with strides " + DimsString(input.strides) +
                             "; expected a " + TypeName(operands[i / 2]->type) +
                             " scalar (operand " + std::to_string(i / 2) + "'s type, no strides)");
    }
  }
  if (body.outputs.size() != 1) {
    return InvalidArgument("sort: the comparator returns " + std::to_string(body.outputs.size()) +
                           " values; expected 1 pred");
  }
  const int32_t out = body.outputs[0];
  if (out < 0 || static_cast<size_t>(out) >= body.steps.size() ||
      body.steps[out].type != ElementType::kPred) {
    return InvalidArgument("sort: the comparator's output is step " + std::to_string(out) +
                           (out >= 0 && static_cast<size_t>(out) < body.steps.size()
                                ? " of type " + TypeName(body.steps[out].type)
                                : std::string(" (no such step)")) +
                           "; expected a pred step");
  }
  return Validate(body);
}

// Checks the comparator's keys against the operands.
Status CheckSortKeys(const std::vector<SortKey>& keys, const ArrayTypes& operands) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const SortKey& key = keys[i];
    const std::string name = "sort: key " + std::to_string(i);
    if (key.operand < 0 || static_cast<size_t>(key.operand) >= operands.size()) {
      return InvalidArgument(name + " compares operand " + std::to_string(key.operand) +
                             "; expected an operand in [0, " + std::to_string(operands.size()) +
                             ")");
    }
    if (key.direction != ComparisonDirection::kLt && key.direction != ComparisonDirection::kGt) {
      return InvalidArgument(name + " has direction " +
                             std::to_string(static_cast<int>(key.direction)) +
                             "; expected LT or GT");
    }
    const ElementType type = operands[key.operand]->type;
    if (!ComparisonTypeFits(key.type, type)) {
      return InvalidArgument(name + " has comparison type " +
                             std::to_string(static_cast<int>(key.type)) + " for operand " +
                             std::to_string(key.operand) + " of " + TypeName(type) +
                             "; expected SIGNED for signed integers, UNSIGNED for unsigned "
                             "integers and pred, FLOAT or TOTALORDER for floats (complex keys "
                             "are not supported)");
    }
    if (key.canonicalize && key.type != ComparisonType::kTotalOrder) {
      return InvalidArgument(name +
                             " canonicalizes without TOTALORDER; expected canonicalize "
                             "only with TOTALORDER");
    }
  }
  return OkStatus();
}

}  // namespace

Status CheckSort(const SortParams& params, const ArrayTypes& operands, const ArrayTypes& results) {
  const char* op = "sort";
  if (operands.empty()) return InvalidArgument("sort: expected at least 1 operand, got 0");
  PJRTKIT_RETURN_IF_ERROR(
      CheckArrayCounts(op, operands, operands.size(), results, operands.size()));
  const ArrayType& first = *operands[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string what = "operand " + std::to_string(i);
    PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, what, *operands[i]));
    if (operands[i]->dims != first.dims) {
      return InvalidArgument("sort: " + what + " has dimensions " + DimsString(operands[i]->dims) +
                             "; expected operand 0's " + DimsString(first.dims));
    }
    if (*results[i] != *operands[i]) {
      return InvalidArgument("sort: result " + std::to_string(i) + " is " + results[i]->ToString() +
                             "; expected " + operands[i]->ToString() + " (" + what + "'s type)");
    }
  }
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  if (params.dimension < -rank || params.dimension >= rank) {
    return InvalidArgument("sort: dimension " + std::to_string(params.dimension) +
                           " is out of range; expected [" + std::to_string(-rank) + ", " +
                           std::to_string(rank) + ") (the operands' rank)");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckSortKeys(params.comparator.keys, operands));
  return CheckComparatorBody(params.comparator.body, operands);
}

Status RunSort(const SortParams& params, const std::vector<ArrayArg>& operands,
               const std::vector<ArrayResult>& results) {
  const ArrayType& shape = *operands[0].type;
  const int64_t rank = static_cast<int64_t>(shape.dims.size());
  const int64_t dim = params.dimension < 0 ? params.dimension + rank : params.dimension;
  const int64_t len = shape.dims[dim];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < dim; ++k) outer *= shape.dims[k];
  for (int64_t k = dim + 1; k < rank; ++k) inner *= shape.dims[k];
  if (outer == 0 || inner == 0 || len == 0) return OkStatus();
  const size_t n = operands.size();
  std::vector<int64_t> widths(n);
  for (size_t i = 0; i < n; ++i) widths[i] = operands[i].type->element_bytes();

  bool use_keys = !params.comparator.keys.empty();
  for (const SortKey& key : params.comparator.keys) {
    use_keys = use_keys && KeysCover(operands[key.operand].type->type);
  }
  std::vector<RowKey> keys;
  if (use_keys) {
    for (const SortKey& key : params.comparator.keys) {
      RowKey row_key;
      row_key.key = &key;
      row_key.type = operands[key.operand].type->type;
      row_key.as_float = key.type == ComparisonType::kFloat;
      (row_key.as_float ? row_key.values.resize(len) : row_key.bits.resize(len));
      keys.push_back(std::move(row_key));
    }
  }
  std::vector<const void*> body_inputs(2 * n);
  uint8_t body_result = 0;
  void* const body_outputs[1] = {&body_result};

  std::vector<int64_t> perm(len), scratch(len);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t row = o * len * inner + in;  // Element offset of the row's first element.
      for (int64_t k = 0; k < len; ++k) perm[k] = k;
      if (use_keys) {
        for (RowKey& key : keys) {
          const int32_t i = key.key->operand;
          LoadRowKey(static_cast<const char*>(operands[i].data) + row * widths[i], widths[i], inner,
                     len, &key);
        }
        MergeSortPermutation(perm.data(), len, scratch.data(), [&keys](int64_t a, int64_t b) {
          for (const RowKey& key : keys) {
            const bool descending = key.key->direction == ComparisonDirection::kGt;
            if (key.as_float) {
              const double x = key.values[a], y = key.values[b];
              if (!(x == y)) return descending ? x > y : x < y;
            } else {
              const uint64_t x = key.bits[a], y = key.bits[b];
              if (x != y) return descending ? x > y : x < y;
            }
          }
          return false;
        });
      } else {
        const FusedElementwise& body = params.comparator.body;
        MergeSortPermutation(perm.data(), len, scratch.data(), [&](int64_t a, int64_t b) {
          for (size_t i = 0; i < n; ++i) {
            const char* base = static_cast<const char*>(operands[i].data) + row * widths[i];
            body_inputs[2 * i] = base + a * inner * widths[i];
            body_inputs[2 * i + 1] = base + b * inner * widths[i];
          }
          Evaluate(body, body_inputs.data(), body_outputs);
          return body_result != 0;
        });
      }
      for (size_t i = 0; i < n; ++i) {
        GatherRow(static_cast<const char*>(operands[i].data) + row * widths[i],
                  static_cast<char*>(results[i].data) + row * widths[i], widths[i], inner, len,
                  perm.data());
      }
    }
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
