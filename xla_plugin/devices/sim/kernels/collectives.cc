// Collectives over the Rendezvous: every participant publishes a table of its operand pointers
// (Publish), computes its own results by reading the members of its group directly (one address
// space), then waits at the Barrier so that no operand is overwritten while another participant
// may still read it. Reductions fold in group order (((x0 op x1) op x2) ...), so every member of a
// group computes identical, deterministic results.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "xla_plugin/devices/sim/kernels/collective_combine.h"
#include "xla_plugin/devices/sim/kernels/collectives.h"
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"

namespace pjrtkit {
namespace sim {
namespace {

const char* KindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kCollectivePermute: return "collective_permute";
    case CollectiveKind::kCollectiveBroadcast: return "collective_broadcast";
  }
  return "collective";
}

std::string Error(CollectiveKind kind, const std::string& text) {
  return std::string(KindName(kind)) + ": " + text;
}

std::string GroupToString(const std::vector<int64_t>& group) {
  std::string text = "[";
  for (size_t i = 0; i < group.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(group[i]);
  }
  return text + "]";
}

// The groups of `params` with the empty list read as one group of every participant.
std::vector<std::vector<int64_t>> EffectiveGroups(const CollectiveParams& params,
                                                  int64_t num_participants) {
  if (!params.groups.empty()) return params.groups;
  std::vector<int64_t> all(static_cast<size_t>(num_participants));
  for (int64_t i = 0; i < num_participants; ++i) all[i] = i;
  return {all};
}

// Whether this kind's groups must cover every participant with groups of one size.
bool NeedsPartition(CollectiveKind kind) {
  return kind != CollectiveKind::kCollectivePermute && kind != CollectiveKind::kCollectiveBroadcast;
}
bool NeedsEqualGroups(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll;
}

// Validates groups / source_target_pairs against the participant count.
Status CheckParticipants(const CollectiveParams& params, int64_t num_participants) {
  const CollectiveKind kind = params.kind;
  if (num_participants < 1) {
    return InvalidArgument(Error(kind, "num_participants " + std::to_string(num_participants) +
                                           " (expected >= 1)"));
  }
  std::vector<bool> seen(static_cast<size_t>(num_participants), false);
  if (kind == CollectiveKind::kCollectivePermute) {
    if (!params.groups.empty()) {
      return InvalidArgument(Error(kind, "groups has " + std::to_string(params.groups.size()) +
                                             " groups (expected none: collective_permute uses "
                                             "source_target_pairs)"));
    }
    std::vector<bool> target_seen(static_cast<size_t>(num_participants), false);
    for (const auto& [source, target] : params.source_target_pairs) {
      const std::string pair =
          "source_target_pairs (" + std::to_string(source) + ", " + std::to_string(target) + ")";
      if (source < 0 || source >= num_participants || target < 0 ||
          target >= num_participants) {
        return InvalidArgument(Error(kind, pair + " names a participant outside 0.." +
                                               std::to_string(num_participants - 1)));
      }
      if (seen[source]) {
        return InvalidArgument(Error(kind, pair + " repeats source " + std::to_string(source) +
                                               " (expected unique sources)"));
      }
      if (target_seen[target]) {
        return InvalidArgument(Error(kind, pair + " repeats target " + std::to_string(target) +
                                               " (expected unique targets)"));
      }
      seen[source] = true;
      target_seen[target] = true;
    }
    return OkStatus();
  }
  if (!params.source_target_pairs.empty()) {
    return InvalidArgument(Error(kind, "source_target_pairs is set (expected none: only "
                                       "collective_permute takes it)"));
  }
  const std::vector<std::vector<int64_t>> groups = EffectiveGroups(params, num_participants);
  int64_t covered = 0;
  for (const auto& group : groups) {
    if (group.empty()) return InvalidArgument(Error(kind, "groups has an empty group"));
    if (NeedsEqualGroups(kind) && group.size() != groups.front().size()) {
      return InvalidArgument(Error(
          kind, "group " + GroupToString(group) + " has " + std::to_string(group.size()) +
                    " members but group " + GroupToString(groups.front()) + " has " +
                    std::to_string(groups.front().size()) + " (expected groups of one size)"));
    }
    for (int64_t id : group) {
      if (id < 0 || id >= num_participants) {
        return InvalidArgument(Error(kind, "group " + GroupToString(group) +
                                               " names participant " + std::to_string(id) +
                                               " (expected 0.." +
                                               std::to_string(num_participants - 1) + ")"));
      }
      if (seen[id]) {
        return InvalidArgument(Error(kind, "participant " + std::to_string(id) +
                                               " appears twice in groups (expected each in at "
                                               "most one group, once)"));
      }
      seen[id] = true;
      ++covered;
    }
  }
  if (NeedsPartition(kind) && covered != num_participants) {
    for (int64_t id = 0; id < num_participants; ++id) {
      if (!seen[id]) {
        return InvalidArgument(Error(kind, "participant " + std::to_string(id) +
                                               " is in no group (expected groups that partition "
                                               "the " + std::to_string(num_participants) +
                                               " participants)"));
      }
    }
  }
  return OkStatus();
}

// Checks one array type: not null, supported element type, sane size.
Status CheckArray(CollectiveKind kind, const char* what, size_t i, const ArrayType* type) {
  const std::string name = std::string(what) + " " + std::to_string(i);
  if (type == nullptr) return InvalidArgument(Error(kind, name + " has a null type"));
  if (!IsCollectiveElementType(type->type)) {
    return InvalidArgument(Error(kind, name + " " + type->ToString() +
                                           ": element type not supported (expected pred, "
                                           "s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128 or "
                                           "a one-byte float8 type)"));
  }
  constexpr int64_t kMaxBytes = int64_t{1} << 62;
  int64_t bytes = type->element_bytes();
  for (int64_t d : type->dims) {
    if (d < 0) {
      return InvalidArgument(Error(kind, name + " " + type->ToString() +
                                             " has a negative dimension"));
    }
    if (d != 0 && bytes > kMaxBytes / d) {
      return InvalidArgument(Error(kind, name + " " + type->ToString() +
                                             " is too large (expected fewer than 2^62 bytes)"));
    }
    bytes = d == 0 ? 0 : bytes * d;
  }
  return OkStatus();
}

// The group size every member sees (groups are of one size where the kind needs it).
int64_t GroupSize(const CollectiveParams& params, int64_t num_participants) {
  return params.groups.empty() ? num_participants
                               : static_cast<int64_t>(params.groups.front().size());
}

// The result type operand `operand` must produce.
Status ExpectedResult(const CollectiveParams& params, int64_t group_size, size_t i,
                      const ArrayType& operand, ArrayType* expected) {
  const CollectiveKind kind = params.kind;
  *expected = operand;
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  const auto check_dimension = [&](const char* name, int64_t d) {
    if (d < 0 || d >= rank) {
      return InvalidArgument(Error(kind, std::string(name) + " " + std::to_string(d) +
                                             " is out of range for operand " + std::to_string(i) +
                                             " " + operand.ToString() + " (expected 0 <= d < " +
                                             std::to_string(rank) + ")"));
    }
    return OkStatus();
  };
  switch (kind) {
    case CollectiveKind::kAllGather:
      PJRTKIT_RETURN_IF_ERROR(check_dimension("dimension (all_gather_dim)", params.dimension));
      expected->dims[params.dimension] *= group_size;
      return OkStatus();
    case CollectiveKind::kReduceScatter:
      PJRTKIT_RETURN_IF_ERROR(check_dimension("dimension (scatter_dimension)", params.dimension));
      if (operand.dims[params.dimension] % group_size != 0) {
        return InvalidArgument(Error(
            kind, "operand " + std::to_string(i) + " " + operand.ToString() + " has size " +
                      std::to_string(operand.dims[params.dimension]) + " along scatter_dimension " +
                      std::to_string(params.dimension) + " (expected a multiple of the group size " +
                      std::to_string(group_size) + ")"));
      }
      expected->dims[params.dimension] /= group_size;
      return OkStatus();
    case CollectiveKind::kAllToAll:
      PJRTKIT_RETURN_IF_ERROR(check_dimension("dimension (split_dimension)", params.dimension));
      PJRTKIT_RETURN_IF_ERROR(check_dimension("concat_dimension", params.concat_dimension));
      if (operand.dims[params.dimension] % params.split_count != 0) {
        return InvalidArgument(Error(
            kind, "operand " + std::to_string(i) + " " + operand.ToString() + " has size " +
                      std::to_string(operand.dims[params.dimension]) + " along split_dimension " +
                      std::to_string(params.dimension) + " (expected a multiple of split_count " +
                      std::to_string(params.split_count) + ")"));
      }
      expected->dims[params.dimension] /= params.split_count;
      expected->dims[params.concat_dimension] *= params.split_count;
      return OkStatus();
    default:
      return OkStatus();
  }
}

// ---------------------------------------------------------------------------------------------
// Run helpers.

// Copies the block of `dims` from src (element strides src_strides) to dst (dst_strides),
// elements of `bytes` bytes; the innermost dimension is copied as one run when both are dense.
void BlockCopy(int64_t bytes, const std::vector<int64_t>& dims, const unsigned char* src,
               const std::vector<int64_t>& src_strides, unsigned char* dst,
               const std::vector<int64_t>& dst_strides) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const int rank = static_cast<int>(dims.size());
  if (rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  const int64_t inner = dims[rank - 1];
  const bool dense = src_strides[rank - 1] == 1 && dst_strides[rank - 1] == 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    if (dense) {
      std::memcpy(dst, src, static_cast<size_t>(inner * bytes));
    } else {
      for (int64_t k = 0; k < inner; ++k) {
        std::memcpy(dst + k * dst_strides[rank - 1] * bytes,
                    src + k * src_strides[rank - 1] * bytes, static_cast<size_t>(bytes));
      }
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      src += src_strides[d] * bytes;
      dst += dst_strides[d] * bytes;
      if (++index[d] < dims[d]) break;
      src -= src_strides[d] * dims[d] * bytes;
      dst -= dst_strides[d] * dims[d] * bytes;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// acc[k] = acc[k] op x[k] for k < n with the collective's reduction.
void Combine(const ScalarComputation& reduction, ElementType type, int64_t n, void* acc,
             const void* x) {
  if (n == 0) return;
  if (CombineInPlace(reduction.combiner, type, n, acc, x)) return;
  ApplyScalarComputation(reduction, n, {acc, x}, {1, 1}, {acc});
}

// What one participant sees of a collective: its group, its place in it, every operand table.
struct View {
  const CollectiveParams* params = nullptr;
  int64_t me = 0;                          // Logical id.
  const std::vector<int64_t>* group = nullptr;  // Null: in no group (broadcast only).
  int64_t index = 0;                       // Position of `me` in *group.
  std::vector<const void*> tables;         // Per participant: its operand pointer table.

  const unsigned char* Operand(int64_t participant, size_t i) const {
    return static_cast<const unsigned char*>(
        static_cast<const void* const*>(tables[participant])[i]);
  }
};

void RunAllReduce(const View& v, const std::vector<ArrayResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    const ArrayType& type = *results[i].type;
    const int64_t n = type.num_elements();
    if (n == 0) continue;
    std::memcpy(results[i].data, v.Operand((*v.group)[0], i),
                static_cast<size_t>(type.byte_size()));
    for (size_t j = 1; j < v.group->size(); ++j) {
      Combine(v.params->reduction, type.type, n, results[i].data, v.Operand((*v.group)[j], i));
    }
  }
}

// Member j's operand goes to the block [j * size, (j + 1) * size) along the gather dimension.
void RunAllGather(const View& v, const std::vector<ArrayArg>& operands,
                  const std::vector<ArrayResult>& results) {
  const int64_t d = v.params->dimension;
  for (size_t i = 0; i < results.size(); ++i) {
    const ArrayType& in = *operands[i].type;
    const ArrayType& out = *results[i].type;
    const std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
    const std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
    unsigned char* dst = static_cast<unsigned char*>(results[i].data);
    for (size_t j = 0; j < v.group->size(); ++j) {
      BlockCopy(in.element_bytes(), in.dims, v.Operand((*v.group)[j], i), in_strides,
                dst + static_cast<int64_t>(j) * in.dims[d] * out_strides[d] * in.element_bytes(),
                out_strides);
    }
  }
}

void RunReduceScatter(const View& v, const std::vector<ArrayArg>& operands,
                      const std::vector<ArrayResult>& results) {
  const int64_t d = v.params->dimension;
  for (size_t i = 0; i < results.size(); ++i) {
    const ArrayType& in = *operands[i].type;
    const ArrayType& out = *results[i].type;
    const int64_t bytes = in.element_bytes();
    const std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
    const std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
    const int64_t offset = v.index * out.dims[d] * in_strides[d] * bytes;  // My part along d.
    unsigned char* acc = static_cast<unsigned char*>(results[i].data);
    BlockCopy(bytes, out.dims, v.Operand((*v.group)[0], i) + offset, in_strides, acc,
              out_strides);
    std::vector<unsigned char> part(static_cast<size_t>(out.byte_size()));
    for (size_t j = 1; j < v.group->size(); ++j) {
      BlockCopy(bytes, out.dims, v.Operand((*v.group)[j], i) + offset, in_strides, part.data(),
                out_strides);
      Combine(v.params->reduction, out.type, out.num_elements(), acc, part.data());
    }
  }
}

void RunAllToAll(const View& v, const std::vector<ArrayArg>& operands,
                 const std::vector<ArrayResult>& results) {
  const int64_t split = v.params->dimension, concat = v.params->concat_dimension;
  for (size_t i = 0; i < results.size(); ++i) {
    const ArrayType& in = *operands[i].type;
    const ArrayType& out = *results[i].type;
    const int64_t bytes = in.element_bytes();
    std::vector<int64_t> chunk = in.dims;  // One sender's part for this receiver.
    chunk[split] /= v.params->split_count;
    const std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
    const std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
    const int64_t src_offset = v.index * chunk[split] * in_strides[split] * bytes;
    unsigned char* dst = static_cast<unsigned char*>(results[i].data);
    for (size_t j = 0; j < v.group->size(); ++j) {
      BlockCopy(bytes, chunk, v.Operand((*v.group)[j], i) + src_offset, in_strides,
                dst + static_cast<int64_t>(j) * chunk[concat] * out_strides[concat] * bytes,
                out_strides);
    }
  }
}

// Copies participant `source`'s operands to the results, or zeros when source < 0.
void CopyFrom(const View& v, int64_t source, const std::vector<ArrayResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    const size_t size = static_cast<size_t>(results[i].type->byte_size());
    if (size == 0) continue;
    if (source < 0) {
      std::memset(results[i].data, 0, size);
    } else {
      std::memcpy(results[i].data, v.Operand(source, i), size);
    }
  }
}

}  // namespace

Status CheckCollective(const CollectiveParams& params, int64_t num_participants,
                       const ArrayTypes& operands, const ArrayTypes& results) {
  const CollectiveKind kind = params.kind;
  if (static_cast<int>(kind) > static_cast<int>(CollectiveKind::kCollectiveBroadcast)) {
    return InvalidArgument("collective: kind " + std::to_string(static_cast<int>(kind)) +
                           " is not a CollectiveKind");
  }
  if (operands.empty() || operands.size() != results.size()) {
    return InvalidArgument(Error(kind, "got " + std::to_string(operands.size()) +
                                           " operands and " + std::to_string(results.size()) +
                                           " results (expected as many results as operands, "
                                           "at least one)"));
  }
  PJRTKIT_RETURN_IF_ERROR(CheckParticipants(params, num_participants));
  const int64_t group_size = GroupSize(params, num_participants);
  if (kind == CollectiveKind::kAllToAll && params.split_count != group_size) {
    return InvalidArgument(Error(kind, "split_count " + std::to_string(params.split_count) +
                                           " (expected the group size " +
                                           std::to_string(group_size) + ")"));
  }
  const bool reduces =
      kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_RETURN_IF_ERROR(CheckArray(kind, "operand", i, operands[i]));
    PJRTKIT_RETURN_IF_ERROR(CheckArray(kind, "result", i, results[i]));
    ArrayType expected;
    PJRTKIT_RETURN_IF_ERROR(ExpectedResult(params, group_size, i, *operands[i], &expected));
    if (*results[i] != expected) {
      return InvalidArgument(Error(kind, "result " + std::to_string(i) + " " +
                                             results[i]->ToString() + " (expected " +
                                             expected.ToString() + " for operand " +
                                             std::to_string(i) + " " + operands[i]->ToString() +
                                             ")"));
    }
    if (reduces) {
      const ElementType type = operands[i]->type;
      const Status body = CheckScalarComputation(params.reduction, {type, type}, {type});
      if (!body.ok()) {
        return InvalidArgument(Error(kind, "the reduction does not fit operand " +
                                               std::to_string(i) + " " +
                                               operands[i]->ToString() + ": " + body.message()));
      }
    }
  }
  return OkStatus();
}

Status RunCollective(const CollectiveParams& params, const CollectiveContext& context,
                     const std::vector<ArrayArg>& operands,
                     const std::vector<ArrayResult>& results) {
  const CollectiveKind kind = params.kind;
  const int64_t step = (*context.step)++;
  // Check validated the params against some participant count; make sure it is this one.
  PJRTKIT_RETURN_IF_ERROR(CheckParticipants(params, context.num_participants));
  if (context.logical_id < 0 || context.logical_id >= context.num_participants) {
    return InvalidArgument(Error(kind, "logical_id " + std::to_string(context.logical_id) +
                                           " (expected 0.." +
                                           std::to_string(context.num_participants - 1) + ")"));
  }
  std::vector<const void*> table(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) table[i] = operands[i].data;
  View v;
  v.params = &params;
  v.me = context.logical_id;
  const int rank = static_cast<int>(context.logical_id);
  if (context.rendezvous == nullptr) {
    if (context.num_participants != 1) {
      return FailedPrecondition(Error(kind, "no rendezvous for " +
                                                std::to_string(context.num_participants) +
                                                " participants"));
    }
    v.tables = {table.data()};
  } else {
    StatusOr<std::vector<const void*>> published =
        context.rendezvous->Publish(rank, step, table.data());
    if (!published.ok()) return published.status();
    v.tables = std::move(published).value();
    if (static_cast<int64_t>(v.tables.size()) != context.num_participants) {
      return Internal(Error(kind, "the rendezvous has " + std::to_string(v.tables.size()) +
                                      " participants, the execution " +
                                      std::to_string(context.num_participants)));
    }
  }
  const std::vector<std::vector<int64_t>> groups =
      EffectiveGroups(params, context.num_participants);
  for (const auto& group : groups) {
    const auto it = std::find(group.begin(), group.end(), v.me);
    if (it != group.end()) {
      v.group = &group;
      v.index = it - group.begin();
    }
  }
  switch (kind) {
    case CollectiveKind::kAllReduce: RunAllReduce(v, results); break;
    case CollectiveKind::kAllGather: RunAllGather(v, operands, results); break;
    case CollectiveKind::kReduceScatter: RunReduceScatter(v, operands, results); break;
    case CollectiveKind::kAllToAll: RunAllToAll(v, operands, results); break;
    case CollectiveKind::kCollectivePermute: {
      int64_t source = -1;
      for (const auto& [from, to] : params.source_target_pairs) {
        if (to == v.me) source = from;
      }
      CopyFrom(v, source, results);
      break;
    }
    case CollectiveKind::kCollectiveBroadcast:
      CopyFrom(v, v.group == nullptr ? -1 : (*v.group)[0], results);
      break;
  }
  if (context.rendezvous == nullptr) return OkStatus();
  return context.rendezvous->Barrier(rank, step);
}

}  // namespace sim
}  // namespace pjrtkit
