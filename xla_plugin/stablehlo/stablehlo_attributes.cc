#include "xla_plugin/stablehlo/stablehlo_attributes.h"

#include <charconv>
#include <utility>

#include "xla_plugin/stablehlo/float_codec.h"
#include "xla_plugin/stablehlo/text_cursor.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

// The names each enum prints, in the enum's order.
constexpr const char* kComparisonDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr const char* kComparisonTypes[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED",
                                            "UNSIGNED"};
constexpr const char* kPrecisions[] = {"DEFAULT", "HIGH", "HIGHEST"};
constexpr const char* kRngAlgorithms[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
constexpr const char* kRngDistributions[] = {"UNIFORM", "NORMAL"};
constexpr const char* kTransposes[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                       "ADJOINT"};
constexpr const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
constexpr const char* kResultAccuracyModes[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};

std::string Describe(const Attribute& attribute) {
  return attribute.kind == Attribute::Kind::kDialect ? attribute.text : "a non-dialect attribute";
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  return text;
}

// The body of #stablehlo.<mnemonic><body> or, for `enum_form`, of #stablehlo<mnemonic body>.
StatusOr<std::string_view> Body(const Attribute& attribute, std::string_view mnemonic,
                                bool enum_form) {
  const std::string& text = attribute.text;
  const std::string prefix =
      enum_form ? "#stablehlo<" + std::string(mnemonic) + " " : "#stablehlo." +
                                                                    std::string(mnemonic) + "<";
  if (attribute.kind != Attribute::Kind::kDialect || text.compare(0, prefix.size(), prefix) != 0 ||
      text.back() != '>') {
    return InvalidArgument("expected " + prefix + "...>, found " + Describe(attribute));
  }
  return Trim(std::string_view(text).substr(prefix.size(), text.size() - prefix.size() - 1));
}

// One of `names` in #stablehlo<mnemonic NAME> (or #stablehlo.mnemonic<NAME>).
template <size_t N>
StatusOr<int> ReadEnum(const Attribute& attribute, std::string_view mnemonic,
                       const char* const (&names)[N], bool enum_form = true) {
  StatusOr<std::string_view> body = Body(attribute, mnemonic, enum_form);
  if (!body.ok()) return body.status();
  for (size_t i = 0; i < N; ++i) {
    if (*body == names[i]) return static_cast<int>(i);
  }
  std::string accepted;
  for (size_t i = 0; i < N; ++i) accepted += std::string(i ? ", " : "") + names[i];
  return InvalidArgument(Describe(attribute) + ": '" + std::string(*body) + "' is not one of " +
                         accepted);
}

struct Field {
  std::string name;
  std::string_view value;
};

// `name = value, ...` with values balanced over (), [], <>, {} and strings.
StatusOr<std::vector<Field>> SplitFields(std::string_view body, const std::string& what) {
  std::vector<Field> fields;
  TextCursor cursor(body);
  while (!cursor.AtEnd()) {
    StatusOr<std::string_view> name = cursor.BareIdentifier("a field name");
    if (!name.ok() || !cursor.TryConsume("=")) {
      return InvalidArgument(what + ": expected `name = value` fields");
    }
    cursor.SkipSpace();
    size_t begin = cursor.offset(), pos = begin;
    int depth = 0;
    for (; pos < body.size(); ++pos) {
      char c = body[pos];
      if (c == '"') {
        cursor.set_offset(pos);
        if (!cursor.StringLiteral("a string").ok()) return InvalidArgument(what + ": bad string");
        pos = cursor.offset() - 1;
      } else if (c == '[' || c == '(' || c == '<' || c == '{') {
        ++depth;
      } else if (c == ']' || c == ')' || c == '}' ||
                 (c == '>' && pos > 0 && body[pos - 1] != '-')) {
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    for (const Field& field : fields) {
      if (field.name == *name) return InvalidArgument(what + ": field " + field.name + " twice");
    }
    fields.push_back({std::string(*name), Trim(body.substr(begin, pos - begin))});
    cursor.set_offset(pos);
    if (!cursor.TryConsume(",") && !cursor.AtEnd()) {
      return InvalidArgument(what + ": expected ',' after field " + fields.back().name);
    }
  }
  return fields;
}

StatusOr<int64_t> ToInt(std::string_view text, const std::string& what) {
  int64_t value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return InvalidArgument(what + ": '" + std::string(text) + "' is not an integer");
  }
  return value;
}

StatusOr<std::vector<int64_t>> ToIntList(std::string_view text, const std::string& what) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return InvalidArgument(what + ": '" + std::string(text) + "' is not a list [a, b, ...]");
  }
  std::vector<int64_t> values;
  std::string_view rest = Trim(text.substr(1, text.size() - 2));
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    StatusOr<int64_t> value = ToInt(Trim(rest.substr(0, comma)), what);
    if (!value.ok()) return value.status();
    values.push_back(*value);
    if (comma == std::string_view::npos) break;
    rest = Trim(rest.substr(comma + 1));
  }
  return values;
}

// Where each accepted field of a struct goes (one of list / value set).
struct FieldSpec {
  const char* name;
  std::vector<int64_t>* list;
  int64_t* value;
};

// Fills `specs` from `fields`; unknown fields are errors naming the accepted ones.
Status AssignFields(const std::vector<Field>& fields, const std::vector<FieldSpec>& specs,
                    const std::string& what) {
  for (const Field& field : fields) {
    const FieldSpec* spec = nullptr;
    for (const FieldSpec& candidate : specs) {
      if (field.name == candidate.name) spec = &candidate;
    }
    if (spec == nullptr) {
      std::string accepted;
      for (const FieldSpec& candidate : specs) {
        accepted += std::string(accepted.empty() ? "" : ", ") + candidate.name;
      }
      return InvalidArgument(what + ": unknown field " + field.name + " (accepted: " + accepted +
                             ")");
    }
    const std::string field_what = what + ": " + field.name;
    if (spec->list != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(*spec->list, ToIntList(field.value, field_what));
    } else {
      PJRTKIT_ASSIGN_OR_RETURN(*spec->value, ToInt(field.value, field_what));
    }
  }
  return OkStatus();
}

// Reads a struct attribute #stablehlo.<mnemonic><fields> into `specs`.
Status ReadStruct(const Attribute& attribute, std::string_view mnemonic,
                  const std::vector<FieldSpec>& specs) {
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view body, Body(attribute, mnemonic, false));
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<Field> fields, SplitFields(body, attribute.text));
  return AssignFields(fields, specs, attribute.text);
}

// One bracketed list of a pretty conv layout: "[b, 0, 1, f]" -> {"b", "0", "1", "f"}.
StatusOr<std::vector<std::string>> ConvLayout(TextCursor* cursor, const std::string& what) {
  std::vector<std::string> items;
  if (!cursor->TryConsume("[")) return InvalidArgument(what + ": expected '[' in the layout");
  if (cursor->TryConsume("]")) return items;
  do {
    char c = cursor->Peek();
    if (c >= '0' && c <= '9') {
      StatusOr<int64_t> digit = cursor->DecimalInteger("a spatial dimension");
      if (!digit.ok()) return InvalidArgument(what + ": bad spatial dimension");
      items.push_back(std::to_string(*digit));
    } else {
      StatusOr<std::string_view> letter = cursor->BareIdentifier("b, f, i, o or a digit");
      if (!letter.ok()) return InvalidArgument(what + ": expected b, f, i, o or a digit");
      items.push_back(std::string(*letter));
    }
  } while (cursor->TryConsume(","));
  if (!cursor->TryConsume("]")) return InvalidArgument(what + ": expected ']' in the layout");
  return items;
}

// Positions of `first` and `second` letters and of the spatial digits 0..n-1 in `layout`.
Status PlaceLayout(const std::vector<std::string>& layout, const char* first, const char* second,
                   int64_t* first_dim, int64_t* second_dim, std::vector<int64_t>* spatial,
                   const std::string& what) {
  const size_t rank = layout.size();
  if (rank < 2) return InvalidArgument(what + ": a layout needs at least two dimensions");
  spatial->assign(rank - 2, -1);
  int found = 0;
  for (size_t pos = 0; pos < rank; ++pos) {
    const std::string& item = layout[pos];
    if (item == first || item == second) {
      int64_t* dim = item == first ? first_dim : second_dim;
      if (*dim != -1) return InvalidArgument(what + ": '" + item + "' appears twice");
      *dim = static_cast<int64_t>(pos);
      ++found;
      continue;
    }
    StatusOr<int64_t> k = ToInt(item, what);
    if (!k.ok() || *k < 0 || *k >= static_cast<int64_t>(rank - 2) || (*spatial)[*k] != -1) {
      return InvalidArgument(what + ": '" + item + "' is not " + first + ", " + second +
                             " or a new spatial dimension below " + std::to_string(rank - 2));
    }
    (*spatial)[*k] = static_cast<int64_t>(pos);
  }
  if (found != 2) return InvalidArgument(what + ": a layout needs " + first + " and " + second);
  return OkStatus();
}

}  // namespace

#define PJRTKIT_ENUM_READER(Type, Reader, mnemonic, names)              \
  StatusOr<Type> Reader(const Attribute& attribute) {                   \
    StatusOr<int> index = ReadEnum(attribute, mnemonic, names);         \
    if (!index.ok()) return index.status();                             \
    return static_cast<Type>(*index);                                   \
  }
PJRTKIT_ENUM_READER(ComparisonDirection, ReadComparisonDirection, "comparison_direction",
                    kComparisonDirections)
PJRTKIT_ENUM_READER(ComparisonType, ReadComparisonType, "comparison_type", kComparisonTypes)
PJRTKIT_ENUM_READER(Precision, ReadPrecision, "precision", kPrecisions)
PJRTKIT_ENUM_READER(RngAlgorithm, ReadRngAlgorithm, "rng_algorithm", kRngAlgorithms)
PJRTKIT_ENUM_READER(RngDistribution, ReadRngDistribution, "rng_distribution", kRngDistributions)
PJRTKIT_ENUM_READER(Transpose, ReadTranspose, "transpose", kTransposes)
PJRTKIT_ENUM_READER(FftType, ReadFftType, "fft_type", kFftTypes)
#undef PJRTKIT_ENUM_READER

StatusOr<std::vector<Precision>> ReadPrecisionConfig(const Attribute& attribute) {
  if (attribute.kind != Attribute::Kind::kArray) {
    return InvalidArgument("precision_config is not an array of #stablehlo<precision ...>");
  }
  std::vector<Precision> out;
  for (const Attribute& element : attribute.elements) {
    PJRTKIT_ASSIGN_OR_RETURN(Precision precision, ReadPrecision(element));
    out.push_back(precision);
  }
  return out;
}

StatusOr<DotDimensionNumbers> ReadDotDimensionNumbers(const Attribute& attribute) {
  DotDimensionNumbers d;
  PJRTKIT_RETURN_IF_ERROR(ReadStruct(attribute, "dot", {
      {"lhs_batching_dimensions", &d.lhs_batching_dimensions, nullptr},
      {"rhs_batching_dimensions", &d.rhs_batching_dimensions, nullptr},
      {"lhs_contracting_dimensions", &d.lhs_contracting_dimensions, nullptr},
      {"rhs_contracting_dimensions", &d.rhs_contracting_dimensions, nullptr}}));
  return d;
}

StatusOr<GatherDimensionNumbers> ReadGatherDimensionNumbers(const Attribute& attribute) {
  GatherDimensionNumbers d;
  PJRTKIT_RETURN_IF_ERROR(ReadStruct(attribute, "gather", {
      {"offset_dims", &d.offset_dims, nullptr},
      {"collapsed_slice_dims", &d.collapsed_slice_dims, nullptr},
      {"operand_batching_dims", &d.operand_batching_dims, nullptr},
      {"start_indices_batching_dims", &d.start_indices_batching_dims, nullptr},
      {"start_index_map", &d.start_index_map, nullptr},
      {"index_vector_dim", nullptr, &d.index_vector_dim}}));
  return d;
}

StatusOr<ScatterDimensionNumbers> ReadScatterDimensionNumbers(const Attribute& attribute) {
  ScatterDimensionNumbers d;
  PJRTKIT_RETURN_IF_ERROR(ReadStruct(attribute, "scatter", {
      {"update_window_dims", &d.update_window_dims, nullptr},
      {"inserted_window_dims", &d.inserted_window_dims, nullptr},
      {"input_batching_dims", &d.input_batching_dims, nullptr},
      {"scatter_indices_batching_dims", &d.scatter_indices_batching_dims, nullptr},
      {"scatter_dims_to_operand_dims", &d.scatter_dims_to_operand_dims, nullptr},
      {"index_vector_dim", nullptr, &d.index_vector_dim}}));
  return d;
}

StatusOr<ConvDimensionNumbers> ReadConvDimensionNumbers(const Attribute& attribute) {
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view body, Body(attribute, "conv", false));
  const std::string& what = attribute.text;
  ConvDimensionNumbers d;
  if (body.substr(0, 4) == "raw ") {
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<Field> fields, SplitFields(body.substr(4), what));
    PJRTKIT_RETURN_IF_ERROR(AssignFields(fields, {
        {"input_batch_dimension", nullptr, &d.input_batch_dimension},
        {"input_feature_dimension", nullptr, &d.input_feature_dimension},
        {"input_spatial_dimensions", &d.input_spatial_dimensions, nullptr},
        {"kernel_input_feature_dimension", nullptr, &d.kernel_input_feature_dimension},
        {"kernel_output_feature_dimension", nullptr, &d.kernel_output_feature_dimension},
        {"kernel_spatial_dimensions", &d.kernel_spatial_dimensions, nullptr},
        {"output_batch_dimension", nullptr, &d.output_batch_dimension},
        {"output_feature_dimension", nullptr, &d.output_feature_dimension},
        {"output_spatial_dimensions", &d.output_spatial_dimensions, nullptr}}, what));
    return d;
  }
  TextCursor cursor(body);
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::string> input, ConvLayout(&cursor, what));
  if (!cursor.TryConsume("x")) return InvalidArgument(what + ": expected 'x' after the input");
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::string> kernel, ConvLayout(&cursor, what));
  if (!cursor.TryConsume("->")) return InvalidArgument(what + ": expected '->' after the kernel");
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::string> output, ConvLayout(&cursor, what));
  if (!cursor.AtEnd()) return InvalidArgument(what + ": unexpected text after the output layout");
  if (input.size() != kernel.size() || input.size() != output.size()) {
    return InvalidArgument(what + ": the three layouts differ in rank");
  }
  d.input_batch_dimension = d.input_feature_dimension = -1;
  d.kernel_input_feature_dimension = d.kernel_output_feature_dimension = -1;
  d.output_batch_dimension = d.output_feature_dimension = -1;
  PJRTKIT_RETURN_IF_ERROR(PlaceLayout(input, "b", "f", &d.input_batch_dimension,
                                      &d.input_feature_dimension, &d.input_spatial_dimensions,
                                      what + " (input)"));
  PJRTKIT_RETURN_IF_ERROR(PlaceLayout(kernel, "i", "o", &d.kernel_input_feature_dimension,
                                      &d.kernel_output_feature_dimension,
                                      &d.kernel_spatial_dimensions, what + " (kernel)"));
  PJRTKIT_RETURN_IF_ERROR(PlaceLayout(output, "b", "f", &d.output_batch_dimension,
                                      &d.output_feature_dimension, &d.output_spatial_dimensions,
                                      what + " (output)"));
  return d;
}

StatusOr<ChannelHandle> ReadChannelHandle(const Attribute& attribute) {
  ChannelHandle d;
  PJRTKIT_RETURN_IF_ERROR(ReadStruct(attribute, "channel_handle", {
      {"handle", nullptr, &d.handle}, {"type", nullptr, &d.type}}));
  return d;
}

StatusOr<OutputOperandAlias> ReadOutputOperandAlias(const Attribute& attribute) {
  OutputOperandAlias d;
  PJRTKIT_RETURN_IF_ERROR(ReadStruct(attribute, "output_operand_alias", {
      {"output_tuple_indices", &d.output_tuple_indices, nullptr},
      {"operand_index", nullptr, &d.operand_index},
      {"operand_tuple_indices", &d.operand_tuple_indices, nullptr}}));
  return d;
}

StatusOr<ResultAccuracy> ReadResultAccuracy(const Attribute& attribute) {
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view body, Body(attribute, "result_accuracy", false));
  const std::string& what = attribute.text;
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<Field> fields, SplitFields(body, what));
  ResultAccuracy d;
  for (const Field& field : fields) {
    if (field.name == "atol" || field.name == "rtol") {
      StatusOr<uint64_t> bits = FloatLiteralBits(field.value, ElementType::kF64);
      if (!bits.ok()) return InvalidArgument(what + ": " + field.name + " is not a number");
      (field.name == "atol" ? d.atol : d.rtol) = DecodeFloat(*bits, ElementType::kF64);
    } else if (field.name == "ulps") {
      PJRTKIT_ASSIGN_OR_RETURN(d.ulps, ToInt(field.value, what + ": ulps"));
    } else if (field.name == "mode") {
      Attribute mode;
      mode.kind = Attribute::Kind::kDialect;
      mode.text = std::string(field.value);
      StatusOr<int> index = ReadEnum(mode, "result_accuracy_mode", kResultAccuracyModes, false);
      if (!index.ok()) return InvalidArgument(what + ": mode: " + index.status().message());
      d.mode = static_cast<ResultAccuracyMode>(*index);
    } else {
      return InvalidArgument(what + ": unknown field " + field.name +
                             " (accepted: atol, rtol, ulps, mode)");
    }
  }
  return d;
}

StatusOr<DotAlgorithm> ReadDotAlgorithm(const Attribute& attribute) {
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view body, Body(attribute, "dot_algorithm", false));
  const std::string& what = attribute.text;
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<Field> fields, SplitFields(body, what));
  DotAlgorithm d;
  std::vector<Field> counts;
  for (const Field& field : fields) {
    Type* type = field.name == "lhs_precision_type"   ? &d.lhs_precision_type
                 : field.name == "rhs_precision_type" ? &d.rhs_precision_type
                 : field.name == "accumulation_type"  ? &d.accumulation_type
                                                      : nullptr;
    if (type != nullptr) {
      StatusOr<Type> parsed = TextParser::ParseType(field.value);
      if (!parsed.ok()) return InvalidArgument(what + ": " + field.name + " is not a type");
      *type = std::move(*parsed);
    } else if (field.name == "allow_imprecise_accumulation") {
      if (field.value != "true" && field.value != "false") {
        return InvalidArgument(what + ": allow_imprecise_accumulation is not true or false");
      }
      d.allow_imprecise_accumulation = field.value == "true";
    } else {
      counts.push_back(field);
    }
  }
  PJRTKIT_RETURN_IF_ERROR(AssignFields(counts, {
      {"lhs_component_count", nullptr, &d.lhs_component_count},
      {"rhs_component_count", nullptr, &d.rhs_component_count},
      {"num_primitive_operations", nullptr, &d.num_primitive_operations}}, what));
  return d;
}

const char* ComparisonDirectionName(ComparisonDirection value) {
  return kComparisonDirections[static_cast<int>(value)];
}
const char* ComparisonTypeName(ComparisonType value) {
  return kComparisonTypes[static_cast<int>(value)];
}
const char* PrecisionName(Precision value) { return kPrecisions[static_cast<int>(value)]; }

}  // namespace stablehlo
}  // namespace pjrtkit
