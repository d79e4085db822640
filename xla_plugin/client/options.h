// Options: typed, validated create options (PJRT_Client_Create / TopologyDescription_Create).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// One option a device accepts.
struct OptionSpec {
  std::string name;           // Option name, e.g. "device_count".
  AttributeValue type_tag;    // A value of the accepted type (its contents are the default).
  std::string description;    // One line for error messages and docs.
};

// Options given by the framework, checked against the accepted specs.
class Options {
 public:
  // Checks `given` against `accepted`: an unknown name or a value of the wrong type is
  // INVALID_ARGUMENT naming the option and listing the accepted options with their types. A
  // string holding a decimal integer (true/false, a decimal number, comma-separated integers) is
  // accepted for an int64 (bool, float, int64 list) option, because JAX's "key:value;..." form
  // of jax_pjrt_client_create_options only passes strings; an int64 is accepted for a float
  // option (Python's `1` for `1.0`).
  static StatusOr<Options> Parse(const AttributeMap& given, const std::vector<OptionSpec>& accepted);

  // The int64 option `name`, or its default.
  int64_t GetInt(const std::string& name) const;
  // The string option `name`, or its default.
  std::string GetString(const std::string& name) const;
  // The bool option `name`, or its default.
  bool GetBool(const std::string& name) const;
  // The float option `name`, or its default.
  float GetFloat(const std::string& name) const;
  // The int64 list option `name`, or its default.
  std::vector<int64_t> GetIntList(const std::string& name) const;
  // The value the framework gave for `name` (after coercion), or nullptr.
  const AttributeValue* Given(const std::string& name) const;
  // True when the framework gave option `name`.
  bool Has(const std::string& name) const { return given_.count(name) > 0; }
  // "name (type), ..." for every accepted option.
  std::string DescribeAccepted() const;

 private:
  Options(AttributeMap given, std::vector<OptionSpec> accepted);
  // The given value of `name`, or the spec's default.
  const AttributeValue* Find(const std::string& name) const;

  AttributeMap given_;                // What the framework passed.
  std::vector<OptionSpec> accepted_;  // What the device accepts.
};

// "name (type), ..." for `accepted`.
std::string DescribeOptionSpecs(const std::vector<OptionSpec>& accepted);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_OPTIONS_H_
