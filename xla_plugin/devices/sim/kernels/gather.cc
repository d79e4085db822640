// Gather (indexing.h): the StableHLO gather with batching dimensions. Each batch position of the
// result reads its start index vector, clamps it so the slice fits (the spec), adds the batching
// indices and copies one slice with a BoxCopy planned once (a whole contiguous slice, such as
// x[i]'s rows, is one memcpy).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/kernels/box_copy.h"
#include "xla_plugin/devices/sim/kernels/indexing.h"
#include "xla_plugin/devices/sim/kernels/movement_checks.h"

namespace pjrtkit {
namespace sim {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  for (int64_t v : values) {
    if (v == value) return true;
  }
  return false;
}

// The dimension numbers' checks that need only the params and ranks (C2-C4, C6-C8, C10-C11,
// C13-C16, C18-C20 of the spec).
Status CheckGatherDimensionNumbers(const GatherParams& p, int64_t rank, int64_t indices_rank) {
  const char* op = "gather";
  if (p.index_vector_dim < 0 || p.index_vector_dim > indices_rank) {
    return InvalidArgument("gather: index_vector_dim " + std::to_string(p.index_vector_dim) +
                           " is out of range; expected [0, " + std::to_string(indices_rank) +
                           "] (the start indices' rank)");
  }
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimensionNumbers(op, "collapsed_slice_dims", p.collapsed_slice_dims, rank, true));
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimensionNumbers(op, "operand_batching_dims", p.operand_batching_dims, rank, true));
  for (int64_t d : p.operand_batching_dims) {
    if (Contains(p.collapsed_slice_dims, d)) {
      return InvalidArgument("gather: dimension " + std::to_string(d) +
                             " is in both collapsed_slice_dims and operand_batching_dims; "
                             "expected each operand dimension in at most one");
    }
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(
      op, "start_indices_batching_dims", p.start_indices_batching_dims, indices_rank, false));
  if (Contains(p.start_indices_batching_dims, p.index_vector_dim)) {
    return InvalidArgument("gather: start_indices_batching_dims " +
                           DimsString(p.start_indices_batching_dims) + " holds index_vector_dim " +
                           std::to_string(p.index_vector_dim) + "; expected it not to");
  }
  if (p.start_indices_batching_dims.size() != p.operand_batching_dims.size()) {
    return InvalidArgument(
        "gather: start_indices_batching_dims " + DimsString(p.start_indices_batching_dims) +
        " has " + std::to_string(p.start_indices_batching_dims.size()) + " values; expected " +
        std::to_string(p.operand_batching_dims.size()) + " (as operand_batching_dims)");
  }
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimensionNumbers(op, "start_index_map", p.start_index_map, rank, false));
  for (int64_t d : p.start_index_map) {
    if (Contains(p.operand_batching_dims, d)) {
      return InvalidArgument("gather: start_index_map " + DimsString(p.start_index_map) +
                             " holds batching dimension " + std::to_string(d) +
                             "; expected no operand_batching_dims in it");
    }
  }
  const size_t num_offset = p.offset_dims.size();
  if (static_cast<int64_t>(num_offset + p.collapsed_slice_dims.size() +
                           p.operand_batching_dims.size()) != rank) {
    return InvalidArgument(
        "gather: offset_dims " + DimsString(p.offset_dims) + ", collapsed_slice_dims " +
        DimsString(p.collapsed_slice_dims) + " and operand_batching_dims " +
        DimsString(p.operand_batching_dims) + " hold " +
        std::to_string(num_offset + p.collapsed_slice_dims.size() +
                       p.operand_batching_dims.size()) +
        " dimensions together; expected " + std::to_string(rank) + " (the operand's rank)");
  }
  return CheckParamSize(op, "slice_sizes", p.slice_sizes, static_cast<size_t>(rank));
}

// The result's shape for checked params (C22): batch dimensions (the start indices' without
// index_vector_dim) where offset_dims are not, slice sizes of the offset dimensions at offset_dims.
StatusOr<std::vector<int64_t>> GatherResultDims(const GatherParams& p, const ArrayType& operand,
                                                const ArrayType& indices) {
  std::vector<int64_t> batch, offset;
  for (size_t k = 0; k < indices.dims.size(); ++k) {
    if (static_cast<int64_t>(k) != p.index_vector_dim) batch.push_back(indices.dims[k]);
  }
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    const int64_t dim = static_cast<int64_t>(d);
    if (!Contains(p.collapsed_slice_dims, dim) && !Contains(p.operand_batching_dims, dim)) {
      offset.push_back(p.slice_sizes[d]);
    }
  }
  const int64_t result_rank = static_cast<int64_t>(batch.size() + offset.size());
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimensionNumbers("gather", "offset_dims", p.offset_dims, result_rank, true));
  std::vector<int64_t> dims(result_rank);
  size_t next_batch = 0, next_offset = 0;
  for (int64_t k = 0; k < result_rank; ++k) {
    dims[k] = Contains(p.offset_dims, k) ? offset[next_offset++] : batch[next_batch++];
  }
  return dims;
}

// Where the slices of a gather come from and go: the result's batch positions and how a
// position's start index vector and batching indices become an operand offset.
struct Slices {
  const std::vector<int64_t>* batch_dims;             // Start indices' dims but index_vector_dim.
  const std::vector<int64_t>* batch_indices_strides;  // Their strides in the start indices.
  const std::vector<int64_t>* batch_result_strides;   // Their strides in the result.
  int64_t vector_stride;                              // Stride of index_vector_dim (0: none).
  const std::vector<int64_t>* start_strides;          // Operand stride of start_index_map[k].
  const std::vector<int64_t>* start_highs;            // Clamp bound of start_index_map[k].
  const std::vector<int64_t>* batching_strides;       // Operand stride of batching dim i.
  const std::vector<int64_t>* batching_positions;     // Its batch position.
};

// Copies every slice: loops over the batch positions (row-major, the last batch dimension
// innermost), reads each start index vector from `index_values` (int32_t or int64_t), clamps
// it, adds the batching indices and calls copy(operand slice, result slice).
template <typename Index, typename Copy>
void CopySlices(const Slices& p, const Index* index_values, const char* src, char* dst,
                int64_t bytes, const Copy& copy) {
  const std::vector<int64_t>& dims = *p.batch_dims;
  const std::vector<int64_t>& indices_strides = *p.batch_indices_strides;
  const std::vector<int64_t>& result_strides = *p.batch_result_strides;
  const size_t num_batch = dims.size();
  const size_t num_starts = p.start_strides->size(), num_batching = p.batching_strides->size();
  const int64_t last = static_cast<int64_t>(num_batch) - 1;
  const int64_t inner_count = num_batch > 0 ? dims[last] : 1;
  const int64_t inner_indices = num_batch > 0 ? indices_strides[last] : 0;
  const int64_t inner_result = num_batch > 0 ? result_strides[last] : 0;
  std::vector<int64_t> position(num_batch, 0);
  int64_t indices_offset = 0, result_offset = 0;
  while (true) {
    for (int64_t j = 0; j < inner_count; ++j) {
      if (num_batch > 0) position[last] = j;
      const Index* vector = index_values + indices_offset + j * inner_indices;
      int64_t operand_offset = 0;
      for (size_t k = 0; k < num_starts; ++k) {
        const int64_t start =
            static_cast<int64_t>(vector[static_cast<int64_t>(k) * p.vector_stride]);
        operand_offset += ClampIndex(start, (*p.start_highs)[k]) * (*p.start_strides)[k];
      }
      for (size_t i = 0; i < num_batching; ++i) {
        operand_offset += position[(*p.batching_positions)[i]] * (*p.batching_strides)[i];
      }
      copy(src + operand_offset * bytes, dst + (result_offset + j * inner_result) * bytes);
    }
    // Next position of the outer batch dimensions.
    int64_t k = last - 1;
    for (; k >= 0; --k) {
      if (++position[k] < dims[k]) {
        indices_offset += indices_strides[k];
        result_offset += result_strides[k];
        break;
      }
      indices_offset -= indices_strides[k] * (dims[k] - 1);
      result_offset -= result_strides[k] * (dims[k] - 1);
      position[k] = 0;
    }
    if (k < 0) return;
  }
}

// CopySlices with a fixed-size copy when each slice is one element (take_along_axis, x[i, j]),
// else the planned BoxCopy.
template <typename Index>
Status GatherAll(const Slices& p, const Index* index_values, const BoxCopy& copy, const char* src,
                 char* dst, int64_t bytes) {
  if (copy.num_elements() == 1) {
    switch (bytes) {
      case 1:
        CopySlices(p, index_values, src, dst, bytes,
                   [](const char* s, char* d) { std::memcpy(d, s, 1); });
        return OkStatus();
      case 2:
        CopySlices(p, index_values, src, dst, bytes,
                   [](const char* s, char* d) { std::memcpy(d, s, 2); });
        return OkStatus();
      case 4:
        CopySlices(p, index_values, src, dst, bytes,
                   [](const char* s, char* d) { std::memcpy(d, s, 4); });
        return OkStatus();
      case 8:
        CopySlices(p, index_values, src, dst, bytes,
                   [](const char* s, char* d) { std::memcpy(d, s, 8); });
        return OkStatus();
      default:
        break;
    }
  }
  CopySlices(p, index_values, src, dst, bytes, [&copy](const char* s, char* d) { copy.Run(s, d); });
  return OkStatus();
}

}  // namespace

Status CheckGather(const GatherParams& params, const ArrayTypes& operands,
                   const ArrayTypes& results) {
  const char* op = "gather";
  PJRTKIT_RETURN_IF_ERROR(CheckArrayCounts(op, operands, 2, results, 1));
  const ArrayType& operand = *operands[0];
  const ArrayType& indices = *operands[1];
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "operand", operand));
  PJRTKIT_RETURN_IF_ERROR(CheckStorableType(op, "start_indices", indices));
  if (!IsIntegerType(indices.type)) {
    return InvalidArgument("gather: start_indices has element type " + TypeName(indices.type) +
                           "; expected an integer type (s8..s64, u8..u64)");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckElementTypeIs(op, "result", *results[0], operand.type));
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  const int64_t indices_rank = static_cast<int64_t>(indices.dims.size());
  PJRTKIT_RETURN_IF_ERROR(CheckGatherDimensionNumbers(params, rank, indices_rank));
  const int64_t vector_size =
      params.index_vector_dim < indices_rank ? indices.dims[params.index_vector_dim] : 1;
  if (static_cast<int64_t>(params.start_index_map.size()) != vector_size) {
    return InvalidArgument("gather: start_index_map " + DimsString(params.start_index_map) +
                           " has " + std::to_string(params.start_index_map.size()) +
                           " values; expected " + std::to_string(vector_size) +
                           " (the start indices' index_vector_dim size)");
  }
  for (size_t i = 0; i < params.operand_batching_dims.size(); ++i) {
    const int64_t od = params.operand_batching_dims[i];
    const int64_t sd = params.start_indices_batching_dims[i];
    if (operand.dims[od] != indices.dims[sd]) {
      return InvalidArgument("gather: operand batching dimension " + std::to_string(od) +
                             " has size " + std::to_string(operand.dims[od]) +
                             "; expected start_indices dimension " + std::to_string(sd) + "'s " +
                             std::to_string(indices.dims[sd]));
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = params.slice_sizes[d];
    if (size < 0 || size > operand.dims[d]) {
      return InvalidArgument("gather: slice_sizes " + DimsString(params.slice_sizes) +
                             " do not fit operand " + operand.ToString() +
                             "; expected 0 <= slice_sizes <= the operand's dimensions");
    }
    if (size > 1 &&
        (Contains(params.collapsed_slice_dims, d) || Contains(params.operand_batching_dims, d))) {
      return InvalidArgument("gather: slice_sizes " + DimsString(params.slice_sizes) + " has " +
                             std::to_string(size) + " in collapsed or batching dimension " +
                             std::to_string(d) + "; expected at most 1");
    }
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GatherResultDims(params, operand, indices));
  return CheckResultDims(op, *results[0], dims);
}

Status RunGather(const GatherParams& params, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results) {
  const ArrayType& operand = *operands[0].type;
  const ArrayType& indices = *operands[1].type;
  const ArrayType& result = *results[0].type;
  char* dst = static_cast<char*>(results[0].data);
  const int64_t bytes = operand.element_bytes();
  if (result.num_elements() == 0) return OkStatus();
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  // A collapsed or batching dimension of slice size 0 leaves every slice empty: XLA:CPU writes
  // zeros.
  for (int64_t d = 0; d < rank; ++d) {
    if (params.slice_sizes[d] == 0) {
      std::memset(dst, 0, static_cast<size_t>(result.byte_size()));
      return OkStatus();
    }
  }

  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims);
  const std::vector<int64_t> result_strides = RowMajorStrides(result.dims);
  const std::vector<int64_t> indices_strides = RowMajorStrides(indices.dims);
  const int64_t indices_rank = static_cast<int64_t>(indices.dims.size());

  // The slice: operand offset dimensions in order, written at offset_dims.
  std::vector<int64_t> box, src_strides, dst_strides;
  size_t next_offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (Contains(params.collapsed_slice_dims, d) || Contains(params.operand_batching_dims, d)) {
      continue;
    }
    box.push_back(params.slice_sizes[d]);
    src_strides.push_back(operand_strides[d]);
    dst_strides.push_back(result_strides[params.offset_dims[next_offset++]]);
  }
  const BoxCopy copy(bytes, box, src_strides, dst_strides);

  // The batch positions: the start indices' dimensions without index_vector_dim, in order, and
  // the result dimensions (not offset_dims) they map to.
  std::vector<int64_t> batch_dims, batch_indices_strides, batch_result_strides;
  std::vector<int64_t> batch_position_of_indices_dim(static_cast<size_t>(indices_rank), -1);
  int64_t next_result_dim = 0;
  for (int64_t k = 0; k < indices_rank; ++k) {
    if (k == params.index_vector_dim) continue;
    while (Contains(params.offset_dims, next_result_dim)) ++next_result_dim;
    batch_position_of_indices_dim[k] = static_cast<int64_t>(batch_dims.size());
    batch_dims.push_back(indices.dims[k]);
    batch_indices_strides.push_back(indices_strides[k]);
    batch_result_strides.push_back(result_strides[next_result_dim++]);
  }
  const int64_t vector_stride =
      params.index_vector_dim < indices_rank ? indices_strides[params.index_vector_dim] : 0;
  const size_t num_starts = params.start_index_map.size();
  std::vector<int64_t> start_strides(num_starts), start_highs(num_starts);
  for (size_t k = 0; k < num_starts; ++k) {
    const int64_t d = params.start_index_map[k];
    start_strides[k] = operand_strides[d];
    start_highs[k] = operand.dims[d] - params.slice_sizes[d];
  }
  const size_t num_batching = params.operand_batching_dims.size();
  std::vector<int64_t> batching_strides(num_batching), batching_positions(num_batching);
  for (size_t i = 0; i < num_batching; ++i) {
    batching_strides[i] = operand_strides[params.operand_batching_dims[i]];
    batching_positions[i] = batch_position_of_indices_dim[params.start_indices_batching_dims[i]];
  }

  const char* src = static_cast<const char*>(operands[0].data);
  const Slices slices{&batch_dims,       &batch_indices_strides, &batch_result_strides,
                      vector_stride,     &start_strides,         &start_highs,
                      &batching_strides, &batching_positions};
  // s32 and s64 indices (JAX's) are read in place when aligned; others are converted first.
  const uintptr_t address = reinterpret_cast<uintptr_t>(operands[1].data);
  if (indices.type == ElementType::kS32 && address % alignof(int32_t) == 0) {
    return GatherAll(slices, static_cast<const int32_t*>(operands[1].data), copy, src, dst, bytes);
  }
  if (indices.type == ElementType::kS64 && address % alignof(int64_t) == 0) {
    return GatherAll(slices, static_cast<const int64_t*>(operands[1].data), copy, src, dst, bytes);
  }
  std::vector<int64_t> index_values(static_cast<size_t>(indices.num_elements()));
  ReadIndices(indices.type, operands[1].data, indices.num_elements(), index_values.data());
  return GatherAll(slices, index_values.data(), copy, src, dst, bytes);
}

}  // namespace sim
}  // namespace pjrtkit
