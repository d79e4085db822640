#include "xla_plugin/client/options.h"

#include <cstdlib>
#include <utility>

namespace pjrtkit {

std::string DescribeOptionSpecs(const std::vector<OptionSpec>& accepted) {
  std::string out;
  for (const OptionSpec& spec : accepted) {
    if (!out.empty()) out += ", ";
    out += spec.name + " (" + AttributeTypeName(spec.type_tag) + ")";
  }
  return out.empty() ? "none" : out;
}

namespace {

// A decimal integer in `text` (optional sign, at most 19 digits), or false.
bool ParseInt(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size() || text.size() > 19 + start) return false;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  *out = static_cast<int64_t>(std::stoll(text));
  return true;
}

// JAX's string form of `jax_pjrt_client_create_options` ("key:value;...") can only pass strings,
// so a string holding a decimal integer ("true"/"false", a decimal number, comma-separated
// integers) is accepted for an int64 (bool, float, int64 list) option. Returns false when `text`
// is not such a string.
bool CoerceFromString(const std::string& text, const AttributeValue& type_tag,
                      AttributeValue* out) {
  if (std::holds_alternative<int64_t>(type_tag)) {
    int64_t value = 0;
    if (!ParseInt(text, &value)) return false;
    *out = value;
    return true;
  }
  if (std::holds_alternative<float>(type_tag)) {
    if (text.empty()) return false;
    char* end = nullptr;
    const float value = std::strtof(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return false;
    *out = value;
    return true;
  }
  if (std::holds_alternative<std::vector<int64_t>>(type_tag)) {
    if (text.empty()) return false;
    std::vector<int64_t> values;
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      int64_t value = 0;
      if (!ParseInt(text.substr(start, comma - start), &value)) return false;
      values.push_back(value);
      start = comma + 1;
    }
    *out = std::move(values);
    return true;
  }
  if (std::holds_alternative<bool>(type_tag)) {
    if (text == "true" || text == "True" || text == "1") *out = true;
    else if (text == "false" || text == "False" || text == "0") *out = false;
    else return false;
    return true;
  }
  return false;
}

}  // namespace

StatusOr<Options> Options::Parse(const AttributeMap& given_in,
                                 const std::vector<OptionSpec>& accepted) {
  AttributeMap given = given_in;
  for (auto& [name, value] : given) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : accepted) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return InvalidArgument("unknown create option '" + name +
                             "'; accepted options: " + DescribeOptionSpecs(accepted));
    }
    if (spec->type_tag.index() != value.index() && std::holds_alternative<std::string>(value)) {
      AttributeValue coerced;
      if (CoerceFromString(std::get<std::string>(value), spec->type_tag, &coerced)) {
        value = coerced;
      }
    }
    if (std::holds_alternative<float>(spec->type_tag) && std::holds_alternative<int64_t>(value)) {
      value = static_cast<float>(std::get<int64_t>(value));
    }
    if (spec->type_tag.index() != value.index()) {
      return InvalidArgument("create option '" + name + "' must be " +
                             AttributeTypeName(spec->type_tag) + ", got " +
                             AttributeTypeName(value) +
                             "; accepted options: " + DescribeOptionSpecs(accepted));
    }
  }
  return Options(given, accepted);
}

Options::Options(AttributeMap given, std::vector<OptionSpec> accepted)
    : given_(std::move(given)), accepted_(std::move(accepted)) {}

const AttributeValue* Options::Find(const std::string& name) const {
  auto it = given_.find(name);
  if (it != given_.end()) return &it->second;
  for (const OptionSpec& s : accepted_) {
    if (s.name == name) return &s.type_tag;
  }
  return nullptr;
}

int64_t Options::GetInt(const std::string& name) const {
  const AttributeValue* v = Find(name);
  return v != nullptr && std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : 0;
}

std::string Options::GetString(const std::string& name) const {
  const AttributeValue* v = Find(name);
  return v != nullptr && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "";
}

bool Options::GetBool(const std::string& name) const {
  const AttributeValue* v = Find(name);
  return v != nullptr && std::holds_alternative<bool>(*v) && std::get<bool>(*v);
}

float Options::GetFloat(const std::string& name) const {
  const AttributeValue* v = Find(name);
  return v != nullptr && std::holds_alternative<float>(*v) ? std::get<float>(*v) : 0.0f;
}

std::vector<int64_t> Options::GetIntList(const std::string& name) const {
  const AttributeValue* v = Find(name);
  return v != nullptr && std::holds_alternative<std::vector<int64_t>>(*v)
             ? std::get<std::vector<int64_t>>(*v)
             : std::vector<int64_t>();
}

const AttributeValue* Options::Given(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? nullptr : &it->second;
}

std::string Options::DescribeAccepted() const { return DescribeOptionSpecs(accepted_); }

}  // namespace pjrtkit
