// The parameters of each sim instruction: plain data the compiler fills from StableHLO attributes
// and the kernels read. Dimension numbers follow the StableHLO spec's names and meanings.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_OP_PARAMS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_OP_PARAMS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {

// A computation on scalars (the body of reduce, reduce_window, scatter, select_and_scatter, the
// reduction of a collective, a sort comparator): a FusedElementwise whose `dims` are empty, whose
// inputs are the region's parameters in order (all scalars: empty strides) and whose outputs are
// its results. Kernels evaluate it over vectors by giving it `dims` and strides of their own.
enum class Combiner : uint8_t {
  kGeneric,   // Evaluate `body`.
  kAdd,       // The body is one binary op of its two parameters (x, y) -> x op y.
  kMultiply,
  kMaximum,
  kMinimum,
  kAnd,
  kOr,
  kXor,
  kReplace,   // (x, y) -> y (scatter's "set").
};

// A region on scalars, with the fast path the compiler recognized in it.
struct ScalarComputation {
  FusedElementwise body;                // Always set (the fast path must agree with it).
  Combiner combiner = Combiner::kGeneric;
};

// One key of a recognized lexicographic sort comparator: compare operand `operand` of the two
// elements with `direction` (kLt: ascending, kGt: descending) under `type`. The comparator is
// lhs < rhs when, for the first key under which the two are not equal (compare EQ under `type`),
// the key's comparison holds; false when every key finds them equal.
struct SortKey {
  int32_t operand = 0;
  ComparisonDirection direction = ComparisonDirection::kLt;
  ComparisonType type = ComparisonType::kFloat;
  // kTotalOrder on a float operand only: -0.0 compares as +0.0 and every NaN as the positive
  // quiet NaN (JAX's float comparator, which jnp.sort/argsort/lax.sort emit: NaNs last, equal
  // zeros and NaNs keep their order in a stable sort).
  bool canonicalize = false;
};

// A sort comparator: `body` takes 2n scalars (lhs0, rhs0, lhs1, rhs1, ...) and returns one pred.
// `keys`, when not empty, is an equivalent lexicographic comparison the kernel may use instead.
struct Comparator {
  FusedElementwise body;
  std::vector<SortKey> keys;
};

// A literal: the result's bytes (row-major storage format).
struct ConstantParams {
  std::string bytes;
};

struct TransposeParams {
  std::vector<int64_t> permutation;  // result dim i = operand dim permutation[i].
};

struct SliceParams {
  std::vector<int64_t> start, limit, strides;
};

// Operands: operand, then one scalar integer start index per dimension (clamped into range).
struct DynamicSliceParams {
  std::vector<int64_t> sizes;
};

// Operands: operand, update, then one scalar integer start index per dimension (clamped).
struct DynamicUpdateSliceParams {};

struct ConcatenateParams {
  int64_t dimension = 0;
};

// Operands: operand, padding value (scalar). Negative low/high padding removes elements.
struct PadParams {
  std::vector<int64_t> low, high, interior;
};

struct ReverseParams {
  std::vector<int64_t> dimensions;
};

// Operands: n inputs, then n scalar init values; results: n arrays.
struct ReduceParams {
  std::vector<int64_t> dimensions;
  ScalarComputation body;  // 2n parameters (accumulators, then elements) -> n results.
};

// Operands: n inputs, then n scalar init values; results: n arrays.
struct ReduceWindowParams {
  std::vector<int64_t> window_dimensions, window_strides, base_dilations, window_dilations;
  std::vector<std::pair<int64_t, int64_t>> padding;  // (low, high) per dimension.
  ScalarComputation body;
};

// Operands: operand, source, init value (scalar); result: like operand.
struct SelectAndScatterParams {
  std::vector<int64_t> window_dimensions, window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  ScalarComputation select;   // (a, b) -> pred: keep a.
  ScalarComputation scatter;  // (accumulated, source element) -> value.
};

// Operands: lhs, rhs; the result's element type is the slot's.
struct DotGeneralParams {
  std::vector<int64_t> lhs_batching_dimensions, rhs_batching_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions, rhs_contracting_dimensions;
};

// Operands: lhs, rhs.
struct ConvolutionParams {
  std::vector<int64_t> window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  std::vector<bool> window_reversal;
  int64_t input_batch_dimension = 0, input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0, output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  int64_t feature_group_count = 1, batch_group_count = 1;
};

// Operands: operand, start_indices.
struct GatherParams {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, operand_batching_dims,
      start_indices_batching_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
};

// Operands: n inputs, scatter_indices, n updates; results: n arrays.
struct ScatterParams {
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching_dims,
      scatter_indices_batching_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  ScalarComputation update;  // 2n parameters (current values, then updates) -> n results.
};

// Operands: n arrays of one shape; results: n arrays sorted together along `dimension`.
struct SortParams {
  int64_t dimension = 0;
  bool is_stable = false;
  Comparator comparator;
};

// Operands: the loop's initial values; results: its final values. Both computations take the
// carried values followed by `captured` (values of the enclosing computation the regions read).
struct WhileParams {
  int32_t cond = -1;  // Computation returning one pred scalar.
  int32_t body = -1;  // Computation returning the next carried values.
  int32_t num_captured = 0;  // The last num_captured operands are captured values, not carried.
};

// Operands: the branch index (s32 scalar; out of range selects the last branch), then the
// captured values every branch takes as parameters.
struct CaseParams {
  std::vector<int32_t> branches;
};

// Which collective.
enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kCollectivePermute,
  kCollectiveBroadcast,
};

// Operands and results per the StableHLO spec of each collective (all_reduce, all_gather and
// all_to_all may be variadic).
struct CollectiveParams {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  // Groups of process ids already resolved to partition-major logical ids (replica * partitions
  // + partition) by the compiler; empty: one group of every participant.
  std::vector<std::vector<int64_t>> groups;
  int64_t dimension = 0;        // all_gather_dim, scatter_dimension, all_to_all's split dimension.
  int64_t concat_dimension = 0; // all_to_all.
  int64_t split_count = 0;      // all_to_all.
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;  // collective_permute (logical ids).
  ScalarComputation reduction;  // all_reduce, reduce_scatter.
};

enum class RngAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };

// Operands: state; results: new state, random bits.
struct RngBitGeneratorParams {
  RngAlgorithm algorithm = RngAlgorithm::kDefault;
};

// One attribute of an XLA FFI custom call, as its handler receives it (XLA_FFI_Attrs).
struct FfiAttribute {
  enum class Kind : uint8_t { kScalar, kString };
  std::string name;
  Kind kind = Kind::kScalar;
  // kScalar: the value's type (an integer, float or pred type) and its little-endian bytes;
  // kString: the bytes of the string.
  ElementType type = ElementType::kInvalid;
  std::string bytes;
};

// A typed XLA FFI custom call (StableHLO custom_call with a dictionary backend config): operands
// and results are arrays; the handler registered for `target` on the device's platform runs on
// the host with their device memory. Never removed as dead code and never reordered with other
// custom calls.
struct CustomCallParams {
  std::string target;                     // The custom call's target name.
  std::vector<FfiAttribute> attributes;   // Sorted by name (XLA's call frame order).
  bool has_side_effect = false;           // As the program says (every call runs anyway).
  // Per operand / result (empty: all row-major): the array's dimensions in the order its bytes
  // hold them, major to minor, when that is not row-major (an empty entry: row-major). The slot
  // holds the array so transposed (LAPACK's column-major matrices); the handler is given the
  // array's own (logical) dimensions.
  std::vector<std::vector<int32_t>> operand_orders;
  std::vector<std::vector<int32_t>> result_orders;
  // (result, operand) pairs of output_operand_aliases: the result starts as a copy of the operand
  // (XLA gives the handler the operand's own buffer), so in-place handlers read their input there.
  std::vector<std::pair<int64_t, int64_t>> aliases;
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_OP_PARAMS_H_
