#include "xla_plugin/client/options.h"

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

StatusOr<Options> Options::Parse(const AttributeMap& given,
                                 const std::vector<OptionSpec>& accepted) {
  for (const auto& [name, value] : given) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : accepted) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return InvalidArgument("unknown create option '" + name +
                             "'; accepted options: " + DescribeOptionSpecs(accepted));
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

std::string Options::DescribeAccepted() const { return DescribeOptionSpecs(accepted_); }

}  // namespace pjrtkit
