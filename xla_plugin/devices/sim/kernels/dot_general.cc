// dot_general: canonicalized to batched [batch, M, K] x [batch, K, N] products (result [batch, M,
// N], which is always the result's row-major layout), staged into the accumulator type and, when
// the dimensions do not merge into strided matrices, transposed into host scratch.
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/contraction_util.h"
#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/gemm.h"

namespace pjrtkit {
namespace sim {
namespace {

namespace cu = contraction_util;

// The dimensions of `rank` that are in neither `a` nor `b`, in increasing order.
std::vector<int64_t> FreeDimensions(int64_t rank, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b) {
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t d : a) used[d] = true;
  for (int64_t d : b) used[d] = true;
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[d]) free.push_back(d);
  }
  return free;
}

// Checks that `dims` (the param `name`) are in [0, rank) and not in `used` yet; marks them.
Status CheckDimensionList(const char* name, const std::vector<int64_t>& dims, int64_t rank,
                          std::vector<bool>* used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return InvalidArgument("dot_general: " + std::string(name) + " " +
                             cu::VectorToString(dims) + " has dimension " + std::to_string(d) +
                             " out of range (expected 0 <= d < " + std::to_string(rank) + ")");
    }
    if ((*used)[d]) {
      return InvalidArgument("dot_general: dimension " + std::to_string(d) + " appears twice in " +
                             name + " and the other batching/contracting list of its operand "
                             "(expected unique dimensions)");
    }
    (*used)[d] = true;
  }
  return OkStatus();
}

// Checks that lhs dims `lhs_list` and rhs dims `rhs_list` (the params named `what`) have equal
// sizes.
Status CheckPairedSizes(const char* what, const ArrayType& lhs,
                        const std::vector<int64_t>& lhs_list, const ArrayType& rhs,
                        const std::vector<int64_t>& rhs_list) {
  for (size_t i = 0; i < lhs_list.size(); ++i) {
    if (lhs.dims[lhs_list[i]] != rhs.dims[rhs_list[i]]) {
      return InvalidArgument("dot_general: " + std::string(what) + " dimension " +
                             std::to_string(i) + " has size " +
                             std::to_string(lhs.dims[lhs_list[i]]) + " in lhs " +
                             lhs.ToString() + " but " + std::to_string(rhs.dims[rhs_list[i]]) +
                             " in rhs " + rhs.ToString() + " (expected equal sizes)");
    }
  }
  return OkStatus();
}

// An operand viewed as [batch, rows, cols] with element strides, in the accumulator's storage.
struct StagedOperand {
  const void* data = nullptr;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
  std::vector<unsigned char> converted;   // The operand in the accumulator type, when needed.
  std::vector<unsigned char> transposed;  // The operand transposed to [batch, rows, cols].
};

// Whether values of `type` are already stored as the accumulator's values.
bool StoredAsAccumulator(ElementType type, cu::Accumulator accumulator) {
  switch (accumulator) {
    case cu::Accumulator::kU32: return type == ElementType::kS32 || type == ElementType::kU32;
    case cu::Accumulator::kU64: return type == ElementType::kS64 || type == ElementType::kU64;
    default: return type == cu::AccumulatorElementType(accumulator);
  }
}

// Stages `arg` as [batch, rows, cols] (dimension groups `batch`, `rows`, `cols`). With
// `dense_matrices`, each matrix is row-major (col stride 1, row stride cols); else any strides.
void Stage(const ArrayArg& arg, cu::Accumulator accumulator, const std::vector<int64_t>& batch,
           const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
           bool dense_matrices, StagedOperand* staged) {
  const ArrayType& type = *arg.type;
  const int64_t bytes = cu::AccumulatorBytes(accumulator);
  staged->data = arg.data;
  if (!StoredAsAccumulator(type.type, accumulator)) {
    staged->converted.resize(static_cast<size_t>(type.num_elements() * bytes));
    cu::ConvertToAccumulator(type.type, arg.data, accumulator, staged->converted.data(),
                             type.num_elements());
    staged->data = staged->converted.data();
  }
  const std::vector<int64_t> strides = RowMajorStrides(type.dims);
  int64_t b = 0, r = 0, c = 0;
  const bool batch_merged =
      cu::MergeDimensions(type.dims, strides, batch, &b, &staged->batch_stride);
  const bool rows_merged = cu::MergeDimensions(type.dims, strides, rows, &r, &staged->row_stride);
  const bool cols_merged = cu::MergeDimensions(type.dims, strides, cols, &c, &staged->col_stride);
  const bool merged = batch_merged && rows_merged && cols_merged;
  if (merged && (!dense_matrices || ((staged->col_stride == 1 || c <= 1) &&
                                     (staged->row_stride == c || r <= 1)))) {
    if (dense_matrices) {
      staged->col_stride = 1;
      staged->row_stride = c;
    }
    return;
  }
  std::vector<int64_t> order = batch;
  order.insert(order.end(), rows.begin(), rows.end());
  order.insert(order.end(), cols.begin(), cols.end());
  std::vector<int64_t> dims, src_strides;
  for (int64_t d : order) {
    dims.push_back(type.dims[d]);
    src_strides.push_back(strides[d]);
  }
  staged->transposed.resize(static_cast<size_t>(type.num_elements() * bytes));
  cu::StridedCopy(bytes, staged->data, dims, src_strides, staged->transposed.data());
  staged->data = staged->transposed.data();
  staged->batch_stride = r * c;
  staged->row_stride = c;
  staged->col_stride = 1;
}

template <typename T>
void RunDense(int64_t batch, int64_t m, int64_t n, int64_t k, const StagedOperand& lhs,
              const StagedOperand& rhs, void* out) {
  const T* a = static_cast<const T*>(lhs.data);
  const T* b = static_cast<const T*>(rhs.data);
  T* c = static_cast<T*>(out);
  for (int64_t i = 0; i < batch; ++i) {
    GemmDense<T>(m, n, k, a + i * lhs.batch_stride, b + i * rhs.batch_stride, c + i * m * n);
  }
}

}  // namespace

Status CheckDotGeneral(const DotGeneralParams& params, const ArrayTypes& operands,
                       const ArrayTypes& results) {
  if (operands.size() != 2 || results.size() != 1) {
    return InvalidArgument("dot_general: expected 2 operands (lhs, rhs) and 1 result, got " +
                           std::to_string(operands.size()) + " operands and " +
                           std::to_string(results.size()) + " results");
  }
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("dot_general", "lhs", operands[0]));
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("dot_general", "rhs", operands[1]));
  PJRTKIT_RETURN_IF_ERROR(cu::CheckArrayType("dot_general", "result", results[0]));
  const ArrayType& lhs = *operands[0];
  const ArrayType& rhs = *operands[1];
  const ArrayType& result = *results[0];
  cu::Accumulator accumulator;
  PJRTKIT_RETURN_IF_ERROR(
      cu::ChooseAccumulator("dot_general", lhs.type, rhs.type, result.type, &accumulator));
  if (params.lhs_batching_dimensions.size() != params.rhs_batching_dimensions.size()) {
    return InvalidArgument(
        "dot_general: lhs_batching_dimensions " +
        cu::VectorToString(params.lhs_batching_dimensions) + " and rhs_batching_dimensions " +
        cu::VectorToString(params.rhs_batching_dimensions) + " differ in length (expected equal)");
  }
  if (params.lhs_contracting_dimensions.size() != params.rhs_contracting_dimensions.size()) {
    return InvalidArgument("dot_general: lhs_contracting_dimensions " +
                           cu::VectorToString(params.lhs_contracting_dimensions) +
                           " and rhs_contracting_dimensions " +
                           cu::VectorToString(params.rhs_contracting_dimensions) +
                           " differ in length (expected equal)");
  }
  const int64_t lhs_rank = static_cast<int64_t>(lhs.dims.size());
  const int64_t rhs_rank = static_cast<int64_t>(rhs.dims.size());
  std::vector<bool> lhs_used(lhs.dims.size(), false), rhs_used(rhs.dims.size(), false);
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionList(
      "lhs_batching_dimensions", params.lhs_batching_dimensions, lhs_rank, &lhs_used));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionList(
      "lhs_contracting_dimensions", params.lhs_contracting_dimensions, lhs_rank, &lhs_used));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionList(
      "rhs_batching_dimensions", params.rhs_batching_dimensions, rhs_rank, &rhs_used));
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionList(
      "rhs_contracting_dimensions", params.rhs_contracting_dimensions, rhs_rank, &rhs_used));
  PJRTKIT_RETURN_IF_ERROR(CheckPairedSizes("batching", lhs, params.lhs_batching_dimensions, rhs,
                                           params.rhs_batching_dimensions));
  PJRTKIT_RETURN_IF_ERROR(CheckPairedSizes("contracting", lhs, params.lhs_contracting_dimensions,
                                           rhs, params.rhs_contracting_dimensions));
  std::vector<int64_t> expected;
  for (int64_t d : params.lhs_batching_dimensions) expected.push_back(lhs.dims[d]);
  for (int64_t d : FreeDimensions(lhs_rank, params.lhs_batching_dimensions,
                                  params.lhs_contracting_dimensions)) {
    expected.push_back(lhs.dims[d]);
  }
  for (int64_t d : FreeDimensions(rhs_rank, params.rhs_batching_dimensions,
                                  params.rhs_contracting_dimensions)) {
    expected.push_back(rhs.dims[d]);
  }
  if (result.dims != expected) {
    return InvalidArgument("dot_general: result " + result.ToString() + " has dimensions " +
                           cu::VectorToString(result.dims) + " (expected batch, lhs free, rhs "
                           "free dimensions " + cu::VectorToString(expected) + ")");
  }
  return OkStatus();
}

Status RunDotGeneral(const DotGeneralParams& params, const std::vector<ArrayArg>& operands,
                     const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs its computations.
  const ArrayType& lhs = *operands[0].type;
  const ArrayType& rhs = *operands[1].type;
  const ArrayType& result = *results[0].type;
  cu::Accumulator accumulator;
  PJRTKIT_RETURN_IF_ERROR(
      cu::ChooseAccumulator("dot_general", lhs.type, rhs.type, result.type, &accumulator));
  const std::vector<int64_t> lhs_free =
      FreeDimensions(static_cast<int64_t>(lhs.dims.size()), params.lhs_batching_dimensions,
                     params.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      FreeDimensions(static_cast<int64_t>(rhs.dims.size()), params.rhs_batching_dimensions,
                     params.rhs_contracting_dimensions);
  const int64_t batch = cu::GroupSize(lhs.dims, params.lhs_batching_dimensions);
  const int64_t m = cu::GroupSize(lhs.dims, lhs_free);
  const int64_t n = cu::GroupSize(rhs.dims, rhs_free);
  const int64_t k = cu::GroupSize(lhs.dims, params.lhs_contracting_dimensions);
  const int64_t count = batch * m * n;
  if (count == 0) return OkStatus();

  const int64_t acc_bytes = cu::AccumulatorBytes(accumulator);
  std::vector<unsigned char> out_scratch;
  void* out = results[0].data;
  const bool direct = StoredAsAccumulator(result.type, accumulator);
  if (!direct) {
    out_scratch.resize(static_cast<size_t>(count * acc_bytes));
    out = out_scratch.data();
  }
  if (k == 0) {
    // Sums of nothing: zeros in the accumulator (0.0 and 0 are all-zero bytes), then converted.
    std::memset(out, 0, static_cast<size_t>(count * acc_bytes));
  } else {
    const bool dense = accumulator != cu::Accumulator::kF32;
    StagedOperand a, b;
    Stage(operands[0], accumulator, params.lhs_batching_dimensions, lhs_free,
          params.lhs_contracting_dimensions, dense, &a);
    Stage(operands[1], accumulator, params.rhs_batching_dimensions,
          params.rhs_contracting_dimensions, rhs_free, dense, &b);
    switch (accumulator) {
      case cu::Accumulator::kF32: {
        float* c = static_cast<float*>(out);
        for (int64_t i = 0; i < batch; ++i) {
          const F32MatrixView a_view{static_cast<const float*>(a.data) + i * a.batch_stride,
                                     a.row_stride, a.col_stride};
          const F32MatrixView b_view{static_cast<const float*>(b.data) + i * b.batch_stride,
                                     b.row_stride, b.col_stride};
          GemmF32(m, n, k, a_view, b_view, c + i * m * n, n);
        }
        break;
      }
      case cu::Accumulator::kF64: RunDense<double>(batch, m, n, k, a, b, out); break;
      case cu::Accumulator::kC64: RunDense<std::complex<float>>(batch, m, n, k, a, b, out); break;
      case cu::Accumulator::kC128:
        RunDense<std::complex<double>>(batch, m, n, k, a, b, out);
        break;
      case cu::Accumulator::kU32: RunDense<uint32_t>(batch, m, n, k, a, b, out); break;
      case cu::Accumulator::kU64: RunDense<uint64_t>(batch, m, n, k, a, b, out); break;
      case cu::Accumulator::kPred:
        for (int64_t i = 0; i < batch; ++i) {
          GemmPred(m, n, k, static_cast<const uint8_t*>(a.data) + i * a.batch_stride,
                   static_cast<const uint8_t*>(b.data) + i * b.batch_stride,
                   static_cast<uint8_t*>(out) + i * m * n);
        }
        break;
    }
  }
  if (!direct) cu::ConvertFromAccumulator(accumulator, out, result.type, results[0].data, count);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
