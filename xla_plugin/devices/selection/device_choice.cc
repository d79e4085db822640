#include "xla_plugin/devices/selection/device_choice.h"

#include <stdlib.h>

namespace pjrtkit {
namespace selection {
namespace {

// Whether `device` accepts the create option `name`.
bool Accepts(const DeviceEntry& device, const std::string& name) {
  if (device.option_specs == nullptr) return false;
  for (const OptionSpec& spec : device.option_specs()) {
    if (spec.name == name) return true;
  }
  return false;
}

// "the xla_cpu device", "the xla_cpu and acme devices".
std::string Owners(const std::vector<const DeviceEntry*>& owners, bool with_article) {
  std::string out = with_article ? "the " : "";
  for (size_t i = 0; i < owners.size(); ++i) {
    if (i > 0) out += i + 1 == owners.size() ? " and " : ", ";
    out += owners[i]->name;
  }
  return out + (owners.size() == 1 ? " device" : " devices");
}

// Reads a device name (a registered one, "auto" or "") from `value`, given by `source`. Sets
// `*device` unless it is "auto" or "".
Status ReadDeviceName(const std::string& value, const std::string& source,
                      const std::vector<DeviceEntry>& devices, const DeviceEntry** device) {
  if (value.empty() || value == "auto") return OkStatus();
  *device = registry::Registry::Find(value, devices);
  if (*device != nullptr) return OkStatus();
  return InvalidArgument(source + " must be " + registry::Registry::AcceptedNames(devices) +
                         ", got '" + value + "'");
}

bool Contains(const std::vector<const DeviceEntry*>& devices, const DeviceEntry* device) {
  for (const DeviceEntry* d : devices) {
    if (d == device) return true;
  }
  return false;
}

// Rule 4 over `candidates`.
const DeviceEntry* AutoAmong(const std::vector<const DeviceEntry*>& candidates,
                             const MachineFacts& facts, std::string* reason) {
  const DeviceEntry* best = nullptr;
  for (const DeviceEntry* device : candidates) {
    if (device->auto_priority <= 0 || facts.available.count(device->name) == 0) continue;
    if (best == nullptr || device->auto_priority > best->auto_priority) best = device;
  }
  if (best == nullptr) {
    if (reason != nullptr) *reason = "no device is available for auto, so the first registered";
    return candidates.empty() ? nullptr : candidates.front();
  }
  if (reason != nullptr) {
    if (!best->available_reason.empty()) {
      *reason = best->available_reason;
    } else {
      std::string why;
      for (const DeviceEntry* device : candidates) {
        if (device->auto_priority > best->auto_priority && !device->unavailable_reason.empty()) {
          why += (why.empty() ? "" : "; ") + device->unavailable_reason;
        }
      }
      *reason = why.empty() ? "the available device with the highest auto priority" : why;
    }
  }
  return best;
}

}  // namespace

OptionSpec DeviceChoice::DeviceOptionSpec(const std::vector<DeviceEntry>& devices) {
  std::string names;
  for (const DeviceEntry& device : devices) names += device.name + ", ";
  return {kDeviceOption, AttributeValue(std::string("auto")),
          "which device: " + names + "or auto (default: $PJRTKIT_DEVICE, else the available "
          "device with the highest auto priority: xla_gpu when an NVIDIA GPU and the CUDA "
          "plugin are there, else xla_cpu)"};
}

const DeviceEntry* DeviceChoice::Auto(const MachineFacts& facts,
                                      const std::vector<DeviceEntry>& devices,
                                      std::string* reason) {
  std::vector<const DeviceEntry*> all;
  for (const DeviceEntry& device : devices) all.push_back(&device);
  return AutoAmong(all, facts, reason);
}

StatusOr<const DeviceEntry*> DeviceChoice::Choose(const AttributeMap& options,
                                                  const MachineFacts& facts,
                                                  const std::vector<DeviceEntry>& devices) {
  if (devices.empty()) return FailedPrecondition("pjrtkit has no registered device");
  const DeviceEntry* chosen = nullptr;
  auto it = options.find(kDeviceOption);
  if (it != options.end()) {
    if (!std::holds_alternative<std::string>(it->second)) {
      return InvalidArgument("create option 'device' must be string, got " +
                             std::string(AttributeTypeName(it->second)));
    }
    PJRTKIT_RETURN_IF_ERROR(ReadDeviceName(std::get<std::string>(it->second),
                                           "create option 'device'", devices, &chosen));
  }
  // Options only some devices accept narrow the candidates.
  std::vector<const DeviceEntry*> candidates;
  for (const DeviceEntry& device : devices) candidates.push_back(&device);
  std::string narrowed_by;
  std::vector<const DeviceEntry*> narrowed_owners;
  for (const auto& [name, value] : options) {
    if (name == kDeviceOption) continue;
    std::vector<const DeviceEntry*> owners;
    for (const DeviceEntry& device : devices) {
      if (Accepts(device, name)) owners.push_back(&device);
    }
    if (owners.empty() || owners.size() == devices.size()) continue;  // Unknown, or everyone's.
    if (chosen != nullptr) {
      if (!Contains(owners, chosen)) {
        return InvalidArgument("create option '" + name + "' belongs to " + Owners(owners, true) +
                               ", but option 'device' is '" + chosen->name + "'");
      }
      continue;
    }
    std::vector<const DeviceEntry*> left;
    for (const DeviceEntry* device : candidates) {
      if (Contains(owners, device)) left.push_back(device);
    }
    if (left.empty()) {
      return InvalidArgument("create options '" + narrowed_by + "' (" +
                             Owners(narrowed_owners, false) + ") and '" + name + "' (" +
                             Owners(owners, false) + ") select different devices; pass one "
                             "device's options, or choose with option 'device'");
    }
    candidates = std::move(left);
    narrowed_by = name;
    narrowed_owners = std::move(owners);
  }
  if (chosen != nullptr) return chosen;
  if (candidates.size() == 1) return candidates.front();
  const DeviceEntry* from_env = nullptr;
  PJRTKIT_RETURN_IF_ERROR(ReadDeviceName(
      facts.device_env, "environment variable " + std::string(kDeviceEnv), devices, &from_env));
  if (from_env != nullptr && Contains(candidates, from_env)) return from_env;
  return AutoAmong(candidates, facts, nullptr);
}

MachineFacts DeviceChoice::FromProcess(const std::vector<DeviceEntry>& devices) {
  MachineFacts facts;
  const char* env = getenv(kDeviceEnv);
  facts.device_env = env != nullptr ? env : "";
  for (const DeviceEntry& device : devices) {
    if (device.available == nullptr || device.available()) facts.available.insert(device.name);
  }
  return facts;
}

}  // namespace selection
}  // namespace pjrtkit
