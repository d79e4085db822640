#include "xla_plugin/devices/xla_gpu/xla_gpu_topology_options.h"

#include <utility>
#include <vector>

#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

// INVALID_ARGUMENT for topology option `name`: "topology create option '<name>' must be
// <requirement>, got <got>".
Status BadValue(const std::string& name, const std::string& requirement, const std::string& got) {
  return InvalidArgument("topology create option '" + name + "' must be " + requirement +
                         ", got " + got);
}

// The string value of option `name`, or INVALID_ARGUMENT when it is of another type.
StatusOr<std::string> StringOption(const std::string& name, const AttributeValue& value) {
  const auto* text = std::get_if<std::string>(&value);
  if (text == nullptr) return BadValue(name, "a string", "a value of another type");
  return *text;
}

// The GPU count of a topology shape "<partitions>x<hosts>x<GPUs per host>".
StatusOr<int64_t> ShapeDeviceCount(const std::string& shape) {
  const std::string requirement =
      "'<partitions>x<hosts per partition>x<GPUs per host>' of numbers >= 1 (e.g. '1x1x8') with "
      "at most " + std::to_string(XlaGpuTopologyOptions::kMaxDevices) + " GPUs in all";
  const std::string got = "'" + shape + "'";
  std::vector<int64_t> sizes(1, 0);
  bool digit_seen = false;
  for (char c : shape) {
    if (c == 'x') {
      if (!digit_seen) return BadValue(kTopologyShapeOption, requirement, got);
      sizes.push_back(0);
      digit_seen = false;
    } else if (c >= '0' && c <= '9') {
      sizes.back() = sizes.back() * 10 + (c - '0');
      if (sizes.back() > XlaGpuTopologyOptions::kMaxDevices) {
        return BadValue(kTopologyShapeOption, requirement, got);
      }
      digit_seen = true;
    } else {
      return BadValue(kTopologyShapeOption, requirement, got);
    }
  }
  if (!digit_seen || sizes.size() != 3) return BadValue(kTopologyShapeOption, requirement, got);
  int64_t count = 1;
  for (int64_t size : sizes) {
    if (size < 1) return BadValue(kTopologyShapeOption, requirement, got);
    count *= size;
    if (count > XlaGpuTopologyOptions::kMaxDevices) {
      return BadValue(kTopologyShapeOption, requirement, got);
    }
  }
  return count;
}

}  // namespace

StatusOr<XlaGpuTopologyOptions> XlaGpuTopologyOptions::Parse(const AttributeMap& options) {
  std::string plugin_path;
  int64_t device_count = 0;
  AttributeMap inner;
  for (const auto& [name, value] : options) {
    if (name == kPluginPathOption) {
      PJRTKIT_ASSIGN_OR_RETURN(plugin_path, StringOption(name, value));
      continue;
    }
    if (name == kTopologyShapeOption) {
      PJRTKIT_ASSIGN_OR_RETURN(std::string shape, StringOption(name, value));
      PJRTKIT_ASSIGN_OR_RETURN(device_count, ShapeDeviceCount(shape));
    } else if (name == kTargetConfigOption) {
      PJRTKIT_ASSIGN_OR_RETURN(std::string config, StringOption(name, value));
      if (config.empty()) {
        return BadValue(name, "a stream_executor.GpuTargetConfigProto in text format",
                        "an empty string");
      }
    } else if (name == kHostTargetMachineOption) {
      PJRTKIT_RETURN_IF_ERROR(StringOption(name, value).status());
    }
    inner[name] = value;
  }
  if (inner.count(kTargetConfigOption) != 0 && device_count == 0) {
    return InvalidArgument(
        "topology create option '" + std::string(kTargetConfigOption) + "' needs '" +
        kTopologyShapeOption + "' too (e.g. topology='1x1x1'): XLA:GPU takes the GPU count from "
        "it when it compiles for a target config instead of the machine's GPUs");
  }
  return XlaGpuTopologyOptions(std::move(plugin_path), std::move(inner), device_count);
}

}  // namespace xla_gpu
}  // namespace pjrtkit
