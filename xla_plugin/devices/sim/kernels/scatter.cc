// StableHLO scatter (variadic, batching dimensions) as XLA:CPU computes it: the results start as
// the inputs (unless they are the inputs' buffers); then for each scatter index in row-major order
// of the updates' scatter dimensions, the whole update window is applied element by element in
// row-major window order when it lies entirely in bounds and skipped otherwise.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "xla_plugin/devices/sim/kernels/flush_denormals.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/ordered_updates.h"
#include "xla_plugin/devices/sim/kernels/reduction.h"
#include "xla_plugin/devices/sim/kernels/reduction_types.h"
#include "xla_plugin/devices/sim/kernels/reduction_util.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr char kOp[] = "scatter";

std::string Name(const char* field, size_t j) {
  return std::string(field) + "[" + std::to_string(j) + "]";
}

// Checks that `values` are in [0, limit), sorted when `sorted`, unique when `unique`.
Status CheckDimList(const char* field, const std::vector<int64_t>& values, int64_t limit,
                    bool sorted, const char* limit_name) {
  for (size_t j = 0; j < values.size(); ++j) {
    if (values[j] < 0 || values[j] >= limit) {
      return InvalidArgument(std::string("scatter: ") + Name(field, j) + " = " +
                             std::to_string(values[j]) + " (expected 0 <= it < " + limit_name +
                             " " + std::to_string(limit) + ")");
    }
    for (size_t i = 0; i < j; ++i) {
      if (values[i] == values[j]) {
        return InvalidArgument(std::string("scatter: ") + field + " " + DimsToString(values) +
                               " repeats " + std::to_string(values[j]) +
                               " (expected unique dimensions)");
      }
    }
    if (sorted && j > 0 && values[j - 1] > values[j]) {
      return InvalidArgument(std::string("scatter: ") + field + " " + DimsToString(values) +
                             " is not sorted (expected ascending)");
    }
  }
  return OkStatus();
}

bool IsIndexType(ElementType type) {
  const TypeClass c = ClassOfType(type);
  return c == TypeClass::kSignedInt || c == TypeClass::kUnsignedInt;
}

// Checks the dimension numbers against the input, indices and updates shapes.
Status CheckDimensionNumbers(const ScatterParams& p, const std::vector<int64_t>& input,
                             const std::vector<int64_t>& indices,
                             const std::vector<int64_t>& updates) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const int64_t index_rank = static_cast<int64_t>(indices.size());
  const int64_t update_rank = static_cast<int64_t>(updates.size());
  PJRTKIT_RETURN_IF_ERROR(CheckDimList("update_window_dims", p.update_window_dims, update_rank,
                                       true, "the updates' rank"));
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimList("inserted_window_dims", p.inserted_window_dims, rank, true, "the inputs' rank"));
  PJRTKIT_RETURN_IF_ERROR(
      CheckDimList("input_batching_dims", p.input_batching_dims, rank, true, "the inputs' rank"));
  PJRTKIT_RETURN_IF_ERROR(CheckDimList("scatter_indices_batching_dims",
                                       p.scatter_indices_batching_dims, index_rank, false,
                                       "the indices' rank"));
  PJRTKIT_RETURN_IF_ERROR(CheckDimList("scatter_dims_to_operand_dims",
                                       p.scatter_dims_to_operand_dims, rank, false,
                                       "the inputs' rank"));
  if (p.index_vector_dim < 0 || p.index_vector_dim > index_rank) {
    return InvalidArgument("scatter: index_vector_dim = " + std::to_string(p.index_vector_dim) +
                           " (expected 0 <= it <= the indices' rank " + std::to_string(index_rank) +
                           ")");
  }
  const size_t window_rank =
      p.update_window_dims.size() + p.inserted_window_dims.size() + p.input_batching_dims.size();
  if (window_rank != input.size()) {
    return InvalidArgument(
        "scatter: update_window_dims, inserted_window_dims and "
        "input_batching_dims have " +
        std::to_string(window_rank) + " entries together (expected the inputs' rank " +
        std::to_string(rank) + ")");
  }
  std::vector<int> role(input.size(), 0);  // 1 inserted, 2 batching, 0 window.
  for (int64_t d : p.inserted_window_dims) role[d] = 1;
  for (int64_t d : p.input_batching_dims) {
    if (role[d] != 0) {
      return InvalidArgument("scatter: dimension " + std::to_string(d) +
                             " is in both inserted_window_dims and input_batching_dims");
    }
    role[d] = 2;
  }
  for (int64_t d : p.scatter_dims_to_operand_dims) {
    if (role[d] == 2) {
      return InvalidArgument("scatter: dimension " + std::to_string(d) +
                             " is in both scatter_dims_to_operand_dims and input_batching_dims");
    }
  }
  if (p.scatter_indices_batching_dims.size() != p.input_batching_dims.size()) {
    return InvalidArgument("scatter: scatter_indices_batching_dims has " +
                           std::to_string(p.scatter_indices_batching_dims.size()) +
                           " entries (expected as many as input_batching_dims, " +
                           std::to_string(p.input_batching_dims.size()) + ")");
  }
  for (size_t b = 0; b < p.input_batching_dims.size(); ++b) {
    const int64_t si = p.scatter_indices_batching_dims[b];
    if (si == p.index_vector_dim) {
      return InvalidArgument("scatter: " + Name("scatter_indices_batching_dims", b) + " = " +
                             std::to_string(si) + " is the index_vector_dim");
    }
    if (indices[si] != input[p.input_batching_dims[b]]) {
      return InvalidArgument("scatter: indices dimension " + std::to_string(si) + " has size " +
                             std::to_string(indices[si]) + " (expected input batching dimension " +
                             std::to_string(p.input_batching_dims[b]) + "'s size " +
                             std::to_string(input[p.input_batching_dims[b]]) + ")");
    }
  }
  const int64_t vector_size = p.index_vector_dim < index_rank ? indices[p.index_vector_dim] : 1;
  if (static_cast<int64_t>(p.scatter_dims_to_operand_dims.size()) != vector_size) {
    return InvalidArgument("scatter: scatter_dims_to_operand_dims has " +
                           std::to_string(p.scatter_dims_to_operand_dims.size()) +
                           " entries (expected the index vector size " +
                           std::to_string(vector_size) + ")");
  }
  // The updates: scatter dimensions (the indices' but index_vector_dim) and window dimensions.
  std::vector<bool> is_window(updates.size(), false);
  for (int64_t d : p.update_window_dims) is_window[d] = true;
  int64_t d_in = 0;
  for (int64_t d : p.update_window_dims) {
    while (role[d_in] != 0) ++d_in;  // Skip inserted and batching dims.
    if (updates[d] > input[d_in]) {
      return InvalidArgument("scatter: updates dimension " + std::to_string(d) + " has size " +
                             std::to_string(updates[d]) + " (expected at most input dimension " +
                             std::to_string(d_in) + "'s size " + std::to_string(input[d_in]) + ")");
    }
    ++d_in;
  }
  std::vector<int64_t> scatter_sizes;
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != p.index_vector_dim) scatter_sizes.push_back(indices[d]);
  }
  if (updates.size() != p.update_window_dims.size() + scatter_sizes.size()) {
    return InvalidArgument("scatter: updates have rank " + std::to_string(update_rank) +
                           " (expected " +
                           std::to_string(p.update_window_dims.size() + scatter_sizes.size()) +
                           ": the window dims plus the indices' scatter dims)");
  }
  size_t q = 0;
  for (int64_t d = 0; d < update_rank; ++d) {
    if (is_window[d]) continue;
    if (updates[d] != scatter_sizes[q]) {
      return InvalidArgument("scatter: updates dimension " + std::to_string(d) + " has size " +
                             std::to_string(updates[d]) + " (expected " +
                             std::to_string(scatter_sizes[q]) +
                             ", the size of the matching scatter dimension of the indices)");
    }
    ++q;
  }
  return OkStatus();
}

// The index at `offset` of the indices array as int64 (u64 values above int64's range saturate).
int64_t ReadIndex(ElementType type, const void* data, int64_t offset) {
  switch (type) {
    case ElementType::kS8:
      return static_cast<const int8_t*>(data)[offset];
    case ElementType::kS16:
      return static_cast<const int16_t*>(data)[offset];
    case ElementType::kS32:
      return static_cast<const int32_t*>(data)[offset];
    case ElementType::kS64:
      return static_cast<const int64_t*>(data)[offset];
    case ElementType::kU8:
      return static_cast<const uint8_t*>(data)[offset];
    case ElementType::kU16:
      return static_cast<const uint16_t*>(data)[offset];
    case ElementType::kU32:
      return static_cast<const uint32_t*>(data)[offset];
    default: {
      const uint64_t v = static_cast<const uint64_t*>(data)[offset];
      return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(v);
    }
  }
}

// The geometry of one run, derived from the params and shapes.
struct ScatterGeometry {
  std::vector<int64_t> input_dims;           // The inputs' dimensions.
  std::vector<int64_t> input_strides;        // Row-major strides of the inputs.
  std::vector<int64_t> window_size;          // Per input dim: the window's extent (1 if none).
  std::vector<int64_t> window_sizes;         // Per update window dim: its size.
  std::vector<int64_t> window_target_step;   // Per update window dim: input offset step.
  std::vector<int64_t> window_source_step;   // Per update window dim: updates offset step.
  std::vector<int64_t> scatter_sizes;        // Per update scatter dim: its size.
  std::vector<int64_t> scatter_update_step;  // Per update scatter dim: updates offset step.
  std::vector<int64_t> scatter_index_step;   // Per update scatter dim: indices offset step.
  // Per input batching dim (input_batching_dims order): the update scatter dim giving its index.
  std::vector<int64_t> batching_scatter_dim;
  int64_t vector_step = 0;  // Indices offset step along index_vector_dim.
};

ScatterGeometry MakeGeometry(const ScatterParams& p, const ArrayType& input,
                             const ArrayType& indices, const ArrayType& updates) {
  ScatterGeometry g;
  g.input_dims = input.dims;
  g.input_strides = RowMajorStrides(input.dims);
  const std::vector<int64_t> update_strides = RowMajorStrides(updates.dims);
  const std::vector<int64_t> index_strides = RowMajorStrides(indices.dims);
  const int64_t index_rank = static_cast<int64_t>(indices.dims.size());
  g.vector_step = p.index_vector_dim < index_rank ? index_strides[p.index_vector_dim] : 0;
  std::vector<bool> not_window(input.dims.size(), false);
  for (int64_t d : p.inserted_window_dims) not_window[d] = true;
  for (int64_t d : p.input_batching_dims) not_window[d] = true;
  g.window_size.assign(input.dims.size(), 1);
  size_t d_in = 0;
  for (int64_t d : p.update_window_dims) {
    while (not_window[d_in]) ++d_in;
    g.window_sizes.push_back(updates.dims[d]);
    g.window_target_step.push_back(g.input_strides[d_in]);
    g.window_source_step.push_back(update_strides[d]);
    g.window_size[d_in] = updates.dims[d];
    ++d_in;
  }
  std::vector<bool> is_window(updates.dims.size(), false);
  for (int64_t d : p.update_window_dims) is_window[d] = true;
  int64_t index_dim = 0;
  for (size_t d = 0; d < updates.dims.size(); ++d) {
    if (is_window[d]) continue;
    if (index_dim == p.index_vector_dim) ++index_dim;
    g.scatter_sizes.push_back(updates.dims[d]);
    g.scatter_update_step.push_back(update_strides[d]);
    g.scatter_index_step.push_back(index_strides[index_dim]);
    ++index_dim;
  }
  for (int64_t si : p.scatter_indices_batching_dims) {
    g.batching_scatter_dim.push_back(si - (si < p.index_vector_dim ? 0 : 1));
  }
  return g;
}

// Queues the window of one in-bounds scatter index: input offset `target`, updates `source`.
void AddWindow(const ScatterGeometry& g, int64_t target, int64_t source, OrderedUpdates* updates) {
  const int rank = static_cast<int>(g.window_sizes.size());
  if (rank == 0) {
    updates->Add(target, source);
    return;
  }
  for (int64_t size : g.window_sizes) {
    if (size == 0) return;
  }
  const int last = rank - 1;
  const int64_t inner = g.window_sizes[last];
  const int64_t t_step = g.window_target_step[last];
  const int64_t s_step = g.window_source_step[last];
  std::vector<int64_t> index(rank, 0);
  while (true) {
    updates->AddRun(target, t_step, source, s_step, inner);
    int d = last - 1;
    for (; d >= 0; --d) {
      target += g.window_target_step[d];
      source += g.window_source_step[d];
      if (++index[d] < g.window_sizes[d]) break;
      target -= index[d] * g.window_target_step[d];
      source -= index[d] * g.window_source_step[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Walks the scatter indices in row-major order of the updates' scatter dims and queues every
// window that lies entirely in bounds.
void ScatterWindows(const ScatterParams& p, const ScatterGeometry& g, const ArrayArg& indices,
                    OrderedUpdates* updates) {
  const int rank = static_cast<int>(g.scatter_sizes.size());
  for (int64_t size : g.scatter_sizes) {
    if (size == 0) return;
  }
  const ElementType index_type = indices.type->type;
  const size_t input_rank = g.input_dims.size();
  std::vector<int64_t> point(rank, 0), start(input_rank, 0);
  int64_t index_offset = 0, source = 0;
  while (true) {
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < p.scatter_dims_to_operand_dims.size(); ++k) {
      start[p.scatter_dims_to_operand_dims[k]] =
          ReadIndex(index_type, indices.data, index_offset + k * g.vector_step);
    }
    for (size_t b = 0; b < p.input_batching_dims.size(); ++b) {
      start[p.input_batching_dims[b]] = point[g.batching_scatter_dim[b]];
    }
    bool in_bounds = true;
    int64_t target = 0;
    for (size_t d = 0; d < input_rank && in_bounds; ++d) {
      in_bounds = start[d] >= 0 && start[d] <= g.input_dims[d] - g.window_size[d];
      target += in_bounds ? start[d] * g.input_strides[d] : 0;
    }
    if (in_bounds) AddWindow(g, target, source, updates);
    int d = rank - 1;
    for (; d >= 0; --d) {
      index_offset += g.scatter_index_step[d];
      source += g.scatter_update_step[d];
      if (++point[d] < g.scatter_sizes[d]) break;
      index_offset -= point[d] * g.scatter_index_step[d];
      source -= point[d] * g.scatter_update_step[d];
      point[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

Status CheckScatter(const ScatterParams& params, const ArrayTypes& operands,
                    const ArrayTypes& results) {
  const size_t n = results.size();
  if (n == 0) return InvalidArgument("scatter: no results (expected one per input, at least 1)");
  if (operands.size() != 2 * n + 1) {
    return InvalidArgument("scatter: " + std::to_string(operands.size()) +
                           " operands (expected 2 x " + std::to_string(n) +
                           " results + 1: the inputs, the indices, then the updates)");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "operand " + std::to_string(i), operands[i]));
  }
  for (size_t i = 0; i < n; ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArrayType(kOp, "result " + std::to_string(i), results[i]));
  }
  const ArrayType* indices = operands[n];
  if (!IsIndexType(indices->type)) {
    return InvalidArgument(Describe(kOp, "scatter_indices", indices) +
                           ": expected an integer element type");
  }
  const std::vector<int64_t>& dims = operands[0]->dims;
  const std::vector<int64_t>& update_dims = operands[n + 1]->dims;
  std::vector<ElementType> types;
  for (size_t i = 0; i < n; ++i) {
    const ArrayType* input = operands[i];
    const ArrayType* update = operands[n + 1 + i];
    if (input->dims != dims) {
      return InvalidArgument(Describe(kOp, "input " + std::to_string(i), input) +
                             ": shape differs from input 0 (expected " + DimsToString(dims) + ")");
    }
    if (update->dims != update_dims || update->type != input->type) {
      return InvalidArgument(Describe(kOp, "updates " + std::to_string(i), update) +
                             ": expected the shape of updates 0 " + DimsToString(update_dims) +
                             " and input " + std::to_string(i) + "'s element type " +
                             ElementTypeName(input->type));
    }
    if (results[i]->dims != dims || !IsPromotable(input->type, results[i]->type)) {
      return InvalidArgument(Describe(kOp, "result " + std::to_string(i), results[i]) +
                             ": expected the inputs' shape " + DimsToString(dims) + " and a type " +
                             ElementTypeName(input->type) + " promotes to");
    }
    types.push_back(results[i]->type);
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensionNumbers(params, dims, indices->dims, update_dims));
  std::vector<ElementType> parameters(types);
  parameters.insert(parameters.end(), types.begin(), types.end());
  Status update = CheckScalarComputation(params.update, parameters, types);
  if (!update.ok()) return InvalidArgument("scatter: update_computation: " + update.message());
  return OkStatus();
}

Status RunScatter(const ScatterParams& params, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results) {
  ScopedFlushDenormals flush;  // As XLA:CPU runs (the typed loops rely on it).
  const size_t n = results.size();
  const int64_t count = results[0].type->num_elements();
  const int64_t update_count = operands[n + 1].type->num_elements();
  std::vector<std::vector<char>> storage(2 * n);
  std::vector<void*> targets(n);
  std::vector<const void*> sources(n);
  for (size_t i = 0; i < n; ++i) {
    const ElementType from = operands[i].type->type;
    const ElementType to = results[i].type->type;
    const void* start = PromoteArray(from, operands[i].data, to, count, &storage[i]);
    if (start != results[i].data) {
      std::memmove(results[i].data, start, count * TypeBytes(to));
    }
    targets[i] = results[i].data;
    sources[i] = PromoteArray(from, operands[n + 1 + i].data, to, update_count, &storage[n + i]);
  }
  if (count == 0 || update_count == 0) return OkStatus();
  const ScatterGeometry geometry =
      MakeGeometry(params, *operands[0].type, *operands[n].type, *operands[n + 1].type);
  OrderedUpdates updates(params.update, targets, sources);
  ScatterWindows(params, geometry, operands[n], &updates);
  updates.Flush();
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
