#include "xla_plugin/devices/registry/registry.h"

#include <cstdio>
#include <set>

#include "xla_plugin/devices/registry/registered_devices.h"

namespace pjrtkit {
namespace registry {
namespace {

// `text` as a JSON string.
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// `value` as JSON.
std::string ValueJson(const AttributeValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return Quote(*s);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* f = std::get_if<float>(&value)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(*f));
    return text;
  }
  std::string out = "[";
  for (int64_t item : std::get<std::vector<int64_t>>(value)) {
    out += (out.size() > 1 ? "," : "") + std::to_string(item);
  }
  return out + "]";
}

}  // namespace

const std::vector<DeviceEntry>& Registry::Devices() {
  static const std::vector<DeviceEntry>* const devices =
      new std::vector<DeviceEntry>(RegisteredDevices());
  return *devices;
}

const DeviceEntry* Registry::Find(const std::string& name,
                                  const std::vector<DeviceEntry>& devices) {
  for (const DeviceEntry& entry : devices) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string Registry::AcceptedNames(const std::vector<DeviceEntry>& devices) {
  std::string out;
  for (const DeviceEntry& entry : devices) out += "'" + entry.name + "', ";
  if (!out.empty()) out.resize(out.size() - 2);
  return out + (out.empty() ? "'auto'" : " or 'auto'");
}

std::string Registry::ToJson(const std::vector<DeviceEntry>& devices) {
  std::string out = "[";
  for (const DeviceEntry& entry : devices) {
    if (out.size() > 1) out += ",";
    // A device without an inner plugin: "" for both.
    const std::string plugin_option = entry.inner_plugin ? entry.inner_plugin->path_option : "";
    const std::string plugin_env = entry.inner_plugin ? entry.inner_plugin->path_env : "";
    out += "{\"name\":" + Quote(entry.name) + ",\"runs_like\":" + Quote(entry.runs_like) +
           ",\"summary\":" + Quote(entry.summary) +
           ",\"auto_priority\":" + std::to_string(entry.auto_priority) +
           ",\"inner_plugin_option\":" + Quote(plugin_option) +
           ",\"inner_plugin_env\":" + Quote(plugin_env) + ",\"options\":[";
    bool first = true;
    for (const OptionSpec& spec : entry.option_specs ? entry.option_specs()
                                                      : std::vector<OptionSpec>{}) {
      out += std::string(first ? "" : ",") + "{\"name\":" + Quote(spec.name) +
             ",\"type\":" + Quote(AttributeTypeName(spec.type_tag)) +
             ",\"default\":" + ValueJson(spec.type_tag) + ",\"help\":" + Quote(spec.description) +
             "}";
      first = false;
    }
    out += "]}";
  }
  return out + "]";
}

}  // namespace registry
}  // namespace pjrtkit
