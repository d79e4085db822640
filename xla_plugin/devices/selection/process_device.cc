#include "xla_plugin/devices/selection/process_device.h"

#include "xla_plugin/devices/inner/inner_log_level.h"
#include "xla_plugin/devices/inner/plugin_locator.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_policy.h"

namespace pjrtkit {
namespace selection {
namespace {

// Loads `kind`'s inner plugin from where it is found without create options.
StatusOr<std::shared_ptr<inner::InnerApi>> LoadInner(DeviceKind kind) {
  const bool gpu = kind == DeviceKind::kXlaGpu;
  PJRTKIT_ASSIGN_OR_RETURN(
      inner::LocatedPlugin located,
      inner::PluginLocator::LocateFromProcess(gpu ? xla_gpu::XlaGpuFactory::PluginSearch()
                                                  : xla_cpu::XlaCpuFactory::PluginSearch()));
  const inner::InnerPluginName name = gpu ? xla_gpu::XlaGpuPolicy(AttributeMap()).inner_plugin()
                                          : xla_cpu::XlaCpuPolicy().inner_plugin();
  // The inner plugin may log while it initializes: at the level its device would give it.
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<inner::InnerLogLevel> log_level,
                           inner::InnerLogLevel::ForThisProcess(name));
  return inner::InnerApi::Load(located.path, located.how, name);
}

}  // namespace

ProcessDevice ProcessDevice::Decide(const MachineFacts& facts) {
  ProcessDevice out;
  out.kind_ = DeviceChoice::Choose({}, facts);
  if (!facts.device_env.empty() && facts.device_env != "auto") {
    out.reason_ = "environment variable " + std::string(kDeviceEnv) + "=" + facts.device_env;
  } else if (facts.nvidia_gpu && facts.gpu_plugin) {
    out.reason_ = "an NVIDIA GPU and OpenXLA's CUDA plugin were found";
  } else {
    out.reason_ = "no NVIDIA GPU with OpenXLA's CUDA plugin was found";
  }
  out.load_status_ = FailedPrecondition("the inner plugin is not loaded yet");
  return out;
}

const ProcessDevice& ProcessDevice::Get() {
  static const ProcessDevice* const device = [] {
    auto* out = new ProcessDevice(Decide(DeviceChoice::FromProcess()));
    if (out->kind_.ok()) {
      StatusOr<std::shared_ptr<inner::InnerApi>> loaded = LoadInner(*out->kind_);
      if (loaded.ok()) {
        out->inner_ = std::move(loaded).value();
        out->load_status_ = OkStatus();
      } else {
        out->load_status_ = loaded.status();
      }
    } else {
      out->load_status_ = out->kind_.status();
    }
    return out;  // Never freed: the plugin's table points into what it loaded.
  }();
  return *device;
}

Status ProcessDevice::CheckSame(DeviceKind kind, const char* what) const {
  if (!kind_.ok()) return kind_.status();
  if (kind == *kind_) return OkStatus();
  return FailedPrecondition(
      std::string("pjrtkit: this process's plugin serves the ") + DeviceChoice::Name(*kind_) +
      " device (chosen when the plugin was loaded: " + reason_ + "), so " + what + " of the " +
      DeviceChoice::Name(kind) + " device cannot be created here: the plugin's attributes " +
      "(StableHLO versions) and extensions are the " + DeviceChoice::Name(*kind_) +
      " device's. Set " + kDeviceEnv + "=" + DeviceChoice::Name(kind) +
      " before the plugin is loaded (jax_plugins.pjrtkit does so for the create option 'device')");
}

}  // namespace selection
}  // namespace pjrtkit
