// Typed readers of the stablehlo dialect's attributes, which the parsed IR keeps as text
// (Attribute::Kind::kDialect): `#stablehlo<comparison_direction LT>`, `#stablehlo.dot<...>`, ...
// Each reader checks the attribute's mnemonic and every field, applies the printer's defaults for
// omitted fields (empty lists, 0, false) and names the attribute and the accepted values in its
// errors.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_ATTRIBUTES_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_ATTRIBUTES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace stablehlo {

// #stablehlo<comparison_direction EQ|NE|GE|GT|LE|LT> (stablehlo.compare).
enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
// #stablehlo<comparison_type NOTYPE|FLOAT|TOTALORDER|SIGNED|UNSIGNED> (stablehlo.compare).
enum class ComparisonType { kNoType, kFloat, kTotalOrder, kSigned, kUnsigned };
// #stablehlo<precision DEFAULT|HIGH|HIGHEST> (precision_config of dot_general, convolution).
enum class Precision { kDefault, kHigh, kHighest };
// #stablehlo<rng_algorithm DEFAULT|THREE_FRY|PHILOX> (rng_bit_generator).
enum class RngAlgorithm { kDefault, kThreeFry, kPhilox };
// #stablehlo<rng_distribution UNIFORM|NORMAL> (rng).
enum class RngDistribution { kUniform, kNormal };
// #stablehlo<transpose TRANSPOSE_INVALID|NO_TRANSPOSE|TRANSPOSE|ADJOINT> (triangular_solve).
enum class Transpose { kTransposeInvalid, kNoTranspose, kTranspose, kAdjoint };
// #stablehlo<fft_type FFT|IFFT|RFFT|IRFFT> (fft).
enum class FftType { kFft, kIfft, kRfft, kIrfft };
// #stablehlo.result_accuracy_mode<DEFAULT|HIGHEST|TOLERANCE>.
enum class ResultAccuracyMode { kDefault, kHighest, kTolerance };

// #stablehlo.dot<lhs_batching_dimensions = [...], rhs_batching_dimensions = [...],
//                lhs_contracting_dimensions = [...], rhs_contracting_dimensions = [...]>.
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batching_dimensions;
  std::vector<int64_t> rhs_batching_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
};

// #stablehlo.gather<offset_dims = [...], collapsed_slice_dims = [...], operand_batching_dims =
// [...], start_indices_batching_dims = [...], start_index_map = [...], index_vector_dim = N>.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
};

// #stablehlo.scatter<update_window_dims = [...], inserted_window_dims = [...],
// input_batching_dims = [...], scatter_indices_batching_dims = [...],
// scatter_dims_to_operand_dims = [...], index_vector_dim = N>.
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
};

// #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> (letters: b batch, f feature, i / o
// kernel input / output feature, digit k spatial dimension k) or
// #stablehlo.conv<raw input_batch_dimension = 0, ...> with the fields below.
struct ConvDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
};

// #stablehlo.channel_handle<handle = N, type = N>.
struct ChannelHandle {
  int64_t handle = 0;
  int64_t type = 0;
};

// #stablehlo.result_accuracy<atol = x, rtol = x, ulps = N,
//                            mode = #stablehlo.result_accuracy_mode<M>>.
struct ResultAccuracy {
  double atol = 0;
  double rtol = 0;
  int64_t ulps = 0;
  ResultAccuracyMode mode = ResultAccuracyMode::kDefault;
};

// #stablehlo.dot_algorithm<lhs_precision_type = T, rhs_precision_type = T, accumulation_type = T,
// lhs_component_count = N, rhs_component_count = N, num_primitive_operations = N,
// allow_imprecise_accumulation = B>.
struct DotAlgorithm {
  Type lhs_precision_type;
  Type rhs_precision_type;
  Type accumulation_type;
  int64_t lhs_component_count = 0;
  int64_t rhs_component_count = 0;
  int64_t num_primitive_operations = 0;
  bool allow_imprecise_accumulation = false;
};

// #stablehlo.output_operand_alias<output_tuple_indices = [...], operand_index = N,
// operand_tuple_indices = [...]> (custom_call's output_operand_aliases).
struct OutputOperandAlias {
  std::vector<int64_t> output_tuple_indices;
  int64_t operand_index = 0;
  std::vector<int64_t> operand_tuple_indices;
};

// The readers: INVALID_ARGUMENT naming the attribute when it is not the expected form.
StatusOr<ComparisonDirection> ReadComparisonDirection(const Attribute& attribute);
StatusOr<ComparisonType> ReadComparisonType(const Attribute& attribute);
StatusOr<Precision> ReadPrecision(const Attribute& attribute);
// precision_config: an array of #stablehlo<precision ...>.
StatusOr<std::vector<Precision>> ReadPrecisionConfig(const Attribute& attribute);
StatusOr<RngAlgorithm> ReadRngAlgorithm(const Attribute& attribute);
StatusOr<RngDistribution> ReadRngDistribution(const Attribute& attribute);
StatusOr<Transpose> ReadTranspose(const Attribute& attribute);
StatusOr<FftType> ReadFftType(const Attribute& attribute);
StatusOr<DotDimensionNumbers> ReadDotDimensionNumbers(const Attribute& attribute);
StatusOr<GatherDimensionNumbers> ReadGatherDimensionNumbers(const Attribute& attribute);
StatusOr<ScatterDimensionNumbers> ReadScatterDimensionNumbers(const Attribute& attribute);
StatusOr<ConvDimensionNumbers> ReadConvDimensionNumbers(const Attribute& attribute);
StatusOr<ChannelHandle> ReadChannelHandle(const Attribute& attribute);
StatusOr<ResultAccuracy> ReadResultAccuracy(const Attribute& attribute);
StatusOr<DotAlgorithm> ReadDotAlgorithm(const Attribute& attribute);
StatusOr<OutputOperandAlias> ReadOutputOperandAlias(const Attribute& attribute);

// `reader` applied to `op`'s attribute `name`; INVALID_ARGUMENT naming the op (and its location)
// when the attribute is absent or unreadable. E.g.
//   ReadOpAttribute(op, "dot_dimension_numbers", ReadDotDimensionNumbers).
template <typename T>
StatusOr<T> ReadOpAttribute(const Operation& op, std::string_view name,
                            StatusOr<T> (*reader)(const Attribute&)) {
  const Attribute* attribute = op.Find(name);
  if (attribute == nullptr) {
    return InvalidArgument(op.name + " at " + op.location.text + " has no attribute " +
                           std::string(name));
  }
  StatusOr<T> value = reader(*attribute);
  if (!value.ok()) {
    return InvalidArgument(op.name + " at " + op.location.text + ": " + std::string(name) + ": " +
                           value.status().message());
  }
  return value;
}

// The printed names of the enums ("LT", "TOTALORDER", "HIGHEST", "THREE_FRY", ...).
const char* ComparisonDirectionName(ComparisonDirection value);
const char* ComparisonTypeName(ComparisonType value);
const char* PrecisionName(Precision value);

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_STABLEHLO_ATTRIBUTES_H_
