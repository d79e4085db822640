#include "xla_plugin/devices/selection/process_device.h"

namespace pjrtkit {
namespace selection {

ProcessDevice ProcessDevice::Decide(const MachineFacts& facts) {
  ProcessDevice out;
  out.kind_ = DeviceChoice::Choose({}, facts);
  if (!facts.device_env.empty() && facts.device_env != "auto") {
    out.reason_ = "environment variable " + std::string(kDeviceEnv) + "=" + facts.device_env;
  } else {
    DeviceChoice::Auto(facts, registry::Registry::Devices(), &out.reason_);
  }
  out.load_status_ = FailedPrecondition("the inner plugin is not loaded yet");
  return out;
}

const ProcessDevice& ProcessDevice::Get() {
  static const ProcessDevice* const device = [] {
    auto* out = new ProcessDevice(Decide(DeviceChoice::FromProcess()));
    if (!out->kind_.ok()) {
      out->load_status_ = out->kind_.status();
    } else if ((*out->kind_)->load_process_plugin == nullptr) {
      out->load_status_ = FailedPrecondition("the " + (*out->kind_)->name +
                                             " device has no inner plugin to load");
    } else {
      StatusOr<std::shared_ptr<plugin_wrapper::InnerApi>> loaded =
          (*out->kind_)->load_process_plugin();
      if (loaded.ok()) {
        out->inner_ = std::move(loaded).value();
        out->load_status_ = OkStatus();
      } else {
        out->load_status_ = loaded.status();
      }
    }
    return out;  // Never freed: the plugin's table points into what it loaded.
  }();
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
