#include "xla_plugin/devices/selection/process_device.h"

#include <utility>

namespace pjrtkit {
namespace selection {

ProcessDevice ProcessDevice::Decide(const MachineFacts& facts,
                                    const std::vector<DeviceEntry>& devices) {
  ProcessDevice out;
  out.kind_ = DeviceChoice::Choose({}, facts, devices);
  if (!facts.device_env.empty() && facts.device_env != "auto") {
    out.reason_ = "environment variable " + std::string(kDeviceEnv) + "=" + facts.device_env;
  } else {
    DeviceChoice::Auto(facts, devices, &out.reason_);
  }
  out.load_status_ = FailedPrecondition("the inner plugin is not loaded yet");
  return out;
}

ProcessDevice ProcessDevice::DecideAndLoad(const MachineFacts& facts,
                                           const std::vector<DeviceEntry>& devices) {
  ProcessDevice out = Decide(facts, devices);
  if (!out.kind_.ok()) {
    out.load_status_ = out.kind_.status();
    return out;
  }
  const DeviceEntry& kind = **out.kind_;
  if (!kind.inner_plugin.has_value() || kind.inner_plugin->load_process_plugin == nullptr) {
    out.load_status_ =
        FailedPrecondition("the " + kind.name + " device has no inner plugin to load");
    return out;
  }
  StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> loaded =
      kind.inner_plugin->load_process_plugin();
  if (loaded.ok()) {
    out.inner_ = std::move(loaded).value();
    out.load_status_ = OkStatus();
  } else {
    out.load_status_ = loaded.status();
  }
  return out;
}

const ProcessDevice& ProcessDevice::Get() {
  // Never freed: the plugin's table points into what it loaded.
  static const ProcessDevice* const device =
      new ProcessDevice(DecideAndLoad(DeviceChoice::FromProcess(), registry::Registry::Devices()));
  return *device;
}

Status ProcessDevice::CheckSame(const DeviceEntry& kind, const char* what) const {
  if (!kind_.ok()) return kind_.status();
  const std::string& mine = (*kind_)->name;
  if (kind.name == mine) return OkStatus();
  return FailedPrecondition(
      std::string("pjrtkit: this process's plugin serves the ") + mine +
      " device (chosen when the plugin was loaded: " + reason_ + "), so " + what + " of the " +
      kind.name + " device cannot be created here: the plugin's attributes " +
      "(StableHLO versions) and extensions are the " + mine + " device's. Set " + kDeviceEnv +
      "=" + kind.name +
      " before the plugin is loaded (jax_plugins.pjrtkit does so for the create option 'device')");
}

}  // namespace selection
}  // namespace pjrtkit
