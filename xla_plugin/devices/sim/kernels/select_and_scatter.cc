// StableHLO select_and_scatter as XLA:CPU computes it: in each window the selected element is the
// first input element in window order (row-major), replaced by each later one for which
// select(selected, element) is false (so with GE ties keep the first); padding positions are never
// selected and a window of padding only scatters nothing. Then, window by window in row-major
// order, result[selected] = scatter(result[selected], source[window]), the result starting at the
// init value.
#include <cstring>
#include <string>

#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/ordered_updates.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/reduction_util.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"
#include "xla_plugin/devices/sim/kernels/window_geometry.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr char kOp[] = "select_and_scatter";
// Window elements compared per engine call.
constexpr int64_t kChunk = 1024;
// Window offsets that reach the operand, at most (Check refuses more).
constexpr int64_t kMaxOffsets = int64_t{1} << 32;

WindowAttributes Attributes(const SelectAndScatterParams& params) {
  WindowAttributes attributes;
  attributes.window_dimensions = &params.window_dimensions;
  attributes.window_strides = &params.window_strides;
  attributes.padding = &params.padding;
  return attributes;
}

// The input a kInput step reads (the engine's convention: its `attr`), or -1 for other steps.
int64_t ParameterOf(const FusedElementwise& body, int32_t step, int32_t before) {
  if (step < 0 || step >= before || body.steps[step].op != EwOp::kInput) return -1;
  return body.steps[step].attr;
}

// Whether `select` is one compare of its two parameters by the operand type's own order (what
// jax emits: GE for max pooling, LE for min); *direction is then the compare of (a, b).
bool MatchCompare(const ScalarComputation& select, ElementType type,
                  ComparisonDirection* direction) {
  const FusedElementwise& body = select.body;
  if (body.outputs.size() != 1) return false;
  const int32_t out = body.outputs[0];
  const EwStep& step = body.steps[out];
  if (step.op != EwOp::kCompare || step.operand_type != type) return false;
  const auto kind = static_cast<ComparisonType>((step.attr >> 8) & 0xff);
  const TypeClass c = ClassOfType(type);
  const bool natural = kind == ComparisonType::kNotype ||
                       (kind == ComparisonType::kFloat && c == TypeClass::kFloat) ||
                       (kind == ComparisonType::kSigned && c == TypeClass::kSignedInt) ||
                       (kind == ComparisonType::kUnsigned && c == TypeClass::kUnsignedInt);
  const int64_t raw = step.attr & 0xff;
  if (!natural || raw > static_cast<int64_t>(ComparisonDirection::kLt)) return false;
  auto dir = static_cast<ComparisonDirection>(raw);
  const int64_t p = ParameterOf(body, step.operands[0], out);
  const int64_t q = ParameterOf(body, step.operands[1], out);
  if (p == 1 && q == 0) {
    // compare(b, a): the same as the mirrored compare of (a, b).
    switch (dir) {
      case ComparisonDirection::kGe:
        dir = ComparisonDirection::kLe;
        break;
      case ComparisonDirection::kGt:
        dir = ComparisonDirection::kLt;
        break;
      case ComparisonDirection::kLe:
        dir = ComparisonDirection::kGe;
        break;
      case ComparisonDirection::kLt:
        dir = ComparisonDirection::kGt;
        break;
      default:
        break;
    }
  } else if (!(p == 0 && q == 1)) {
    return false;
  }
  *direction = dir;
  return true;
}

template <typename T>
bool Compare(ComparisonDirection direction, T a, T b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kLt:
      return a < b;
  }
  return false;
}

// Selection with a typed compare (see SelectInWindows).
template <typename T>
void SelectTyped(ComparisonDirection direction, const std::vector<WindowDim>& dims,
                 const void* operand, const std::vector<int64_t>& window_strides,
                 const std::vector<int64_t>& operand_strides, std::vector<int64_t>* selected) {
  const T* x = static_cast<const T*>(operand);
  std::vector<T> values(selected->size());
  int64_t* sel = selected->data();
  std::vector<int64_t> window_offsets(kChunk), operand_offsets(kChunk);
  std::vector<Progression> progressions(dims.size());
  for (OffsetIterator it(dims); it.valid(); it.Advance()) {
    for (size_t d = 0; d < dims.size(); ++d) {
      progressions[d] = ValidPositions(dims[d], it.offset()[d]);
    }
    PairBox box(progressions, window_strides, operand_strides);
    int64_t got;
    while ((got = box.Next(kChunk, window_offsets.data(), operand_offsets.data())) > 0) {
      for (int64_t j = 0; j < got; ++j) {
        const int64_t w = window_offsets[j];
        const T candidate = x[operand_offsets[j]];
        if (sel[w] < 0 || !Compare(direction, values[w], candidate)) {
          sel[w] = operand_offsets[j];
          values[w] = candidate;
        }
      }
    }
  }
}

// The typed selection of `type`, false where there is none.
bool SelectWithTypedCompare(ElementType type, ComparisonDirection direction,
                            const std::vector<WindowDim>& dims, const void* operand,
                            const std::vector<int64_t>& window_strides,
                            const std::vector<int64_t>& operand_strides,
                            std::vector<int64_t>* selected) {
  auto run = [&](auto tag) {
    SelectTyped<decltype(tag)>(direction, dims, operand, window_strides, operand_strides, selected);
    return true;
  };
  switch (type) {
    case ElementType::kS8:
      return run(int8_t());
    case ElementType::kS16:
      return run(int16_t());
    case ElementType::kS32:
      return run(int32_t());
    case ElementType::kS64:
      return run(int64_t());
    case ElementType::kU8:
      return run(uint8_t());
    case ElementType::kU16:
      return run(uint16_t());
    case ElementType::kU32:
      return run(uint32_t());
    case ElementType::kU64:
      return run(uint64_t());
    case ElementType::kF32:
      return run(float());
    case ElementType::kF64:
      return run(double());
    default:
      return false;
  }
}

// For each window (row-major over the source), the operand index selected in it, or -1.
std::vector<int64_t> SelectInWindows(const SelectAndScatterParams& params,
                                     const std::vector<WindowDim>& dims, const ArrayArg& operand,
                                     const ArrayType& source_type) {
  const int64_t windows = source_type.num_elements();
  const ElementType type = operand.type->type;
  const int64_t bytes = TypeBytes(type);
  std::vector<int64_t> selected(windows, -1);
  const std::vector<int64_t> window_strides = RowMajorStrides(source_type.dims);
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.type->dims);
  ComparisonDirection direction;
  if (MatchCompare(params.select, type, &direction) &&
      SelectWithTypedCompare(type, direction, dims, operand.data, window_strides, operand_strides,
                             &selected)) {
    return selected;
  }
  std::vector<char> values(windows * bytes, 0);  // The selected values.
  ScalarApplier select(params.select);
  std::vector<int64_t> window_offsets(kChunk), operand_offsets(kChunk);
  std::vector<char> current(kChunk * bytes), candidate(kChunk * bytes), keep(kChunk);
  const void* call_inputs[2] = {current.data(), candidate.data()};
  const int64_t strides[2] = {1, 1};
  void* call_results[1] = {keep.data()};
  std::vector<Progression> progressions(dims.size());
  for (OffsetIterator it(dims); it.valid(); it.Advance()) {
    for (size_t d = 0; d < dims.size(); ++d) {
      progressions[d] = ValidPositions(dims[d], it.offset()[d]);
    }
    PairBox box(progressions, window_strides, operand_strides);
    int64_t got;
    while ((got = box.Next(kChunk, window_offsets.data(), operand_offsets.data())) > 0) {
      GatherElements(values.data(), window_offsets.data(), got, bytes, current.data());
      GatherElements(operand.data, operand_offsets.data(), got, bytes, candidate.data());
      select.Apply(got, call_inputs, strides, call_results);
      for (int64_t j = 0; j < got; ++j) {
        const int64_t w = window_offsets[j];
        if (selected[w] < 0 || keep[j] == 0) {
          selected[w] = operand_offsets[j];
          std::memcpy(values.data() + w * bytes, candidate.data() + j * bytes, bytes);
        }
      }
    }
  }
  return selected;
}

}  // namespace

Status CheckSelectAndScatter(const SelectAndScatterParams& params, const ArrayTypes& operands,
                             const ArrayTypes& results) {
  if (operands.size() != 3 || results.size() != 1) {
    return InvalidArgument("select_and_scatter: " + std::to_string(operands.size()) +
                           " operands and " + std::to_string(results.size()) +
                           " results (expected 3: operand, source, init value; and 1)");
  }
  const char* names[3] = {"operand", "source", "init value"};
  for (size_t i = 0; i < 3; ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, names[i], operands[i]));
  }
  PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "result", results[0]));
  const ArrayType* operand = operands[0];
  const ArrayType* source = operands[1];
  const ArrayType* init = operands[2];
  const ArrayType* result = results[0];
  if (source->type != operand->type) {
    return InvalidArgument(Describe(kOp, "source", source) + ": expected element type " +
                           ElementTypeName(operand->type) + " (the operand's)");
  }
  if (!init->dims.empty() || init->type != operand->type) {
    return InvalidArgument(Describe(kOp, "init value", init) + ": expected a " +
                           ElementTypeName(operand->type) + " scalar");
  }
  std::vector<WindowDim> dims;
  PJRTKIT_RETURN_IF_ERROR(MakeWindowDims(kOp, Attributes(params), operand->dims, &dims));
  if (CountReachingOffsets(dims) > kMaxOffsets) {
    return InvalidArgument("select_and_scatter: the window has more than " +
                           std::to_string(kMaxOffsets) +
                           " offsets that reach the operand (expected fewer)");
  }
  const std::vector<int64_t> windows = WindowOutputDims(dims);
  if (source->dims != windows) {
    return InvalidArgument(Describe(kOp, "source", source) + ": expected dimensions " +
                           DimsToString(windows) + " (the number of windows)");
  }
  if (result->dims != operand->dims || !IsPromotable(operand->type, result->type)) {
    return InvalidArgument(Describe(kOp, "result", result) + ": expected the operand's shape " +
                           DimsToString(operand->dims) + " and a type " +
                           ElementTypeName(operand->type) + " promotes to");
  }
  Status select =
      CheckScalarComputation(params.select, {operand->type, operand->type}, {ElementType::kPred});
  if (!select.ok()) return InvalidArgument("select_and_scatter: select: " + select.message());
  Status scatter =
      CheckScalarComputation(params.scatter, {result->type, result->type}, {result->type});
  if (!scatter.ok()) return InvalidArgument("select_and_scatter: scatter: " + scatter.message());
  return OkStatus();
}

Status RunSelectAndScatter(const SelectAndScatterParams& params,
                           const std::vector<ArrayArg>& operands,
                           const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs (the typed loops rely on it).
  const ArrayArg& operand = operands[0];
  const ArrayType& source_type = *operands[1].type;
  const ElementType from = operand.type->type;
  const ElementType to = results[0].type->type;
  const int64_t count = results[0].type->num_elements();
  std::vector<char> source_storage, init_storage;
  const void* source =
      PromoteArray(from, operands[1].data, to, source_type.num_elements(), &source_storage);
  const void* init = PromoteArray(from, operands[2].data, to, 1, &init_storage);
  FillWithScalar(results[0].data, init, TypeBytes(to), count);
  if (count == 0 || source_type.num_elements() == 0) return OkStatus();
  std::vector<WindowDim> dims;
  PJRTKIT_RETURN_IF_ERROR(MakeWindowDims(kOp, Attributes(params), operand.type->dims, &dims));
  const std::vector<int64_t> selected = SelectInWindows(params, dims, operand, source_type);
  OrderedUpdates updates(params.scatter, {results[0].data}, {source});
  for (size_t w = 0; w < selected.size(); ++w) {
    if (selected[w] >= 0) updates.Add(selected[w], static_cast<int64_t>(w));
  }
  updates.Flush();
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
