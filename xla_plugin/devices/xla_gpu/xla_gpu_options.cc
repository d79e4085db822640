#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"

#include <cstdint>
#include <set>
#include <utility>

namespace pjrtkit {
namespace xla_gpu {
namespace {

// XLA:GPU's allocators (xla_cuda_plugin.so 0.11.2 lists exactly these).
const char* const kAllocators[] = {"default", "platform", "bfc", "cuda_async", "vmm", "address"};

// INVALID_ARGUMENT for XLA:GPU option `name`: "create option '<name>' (passed to XLA:GPU) must
// be <requirement>, got <got>".
Status BadValue(const std::string& name, const std::string& requirement, const std::string& got) {
  return InvalidArgument("create option '" + name + "' (passed to XLA:GPU) must be " +
                         requirement + ", got " + got);
}

// Checks the value given for `name` (already of the right type).
Status CheckValue(const std::string& name, const AttributeValue& value) {
  if (name == kAllocatorOption) {
    const std::string& allocator = std::get<std::string>(value);
    std::string accepted;
    for (const char* a : kAllocators) {
      if (allocator == a) return OkStatus();
      accepted += std::string(accepted.empty() ? "" : ", ") + "'" + a + "'";
    }
    return BadValue(name, "one of " + accepted, "'" + allocator + "'");
  }
  if (name == kMemoryFractionOption) {
    const float fraction = std::get<float>(value);
    if (!(fraction > 0.0f && fraction <= 1.0f)) {
      return BadValue(name, "in (0, 1]", std::to_string(fraction));
    }
  } else if (name == kCollectiveMemorySizeOption) {
    const int64_t bytes = std::get<int64_t>(value);
    if (bytes < 0) return BadValue(name, ">= 0 (bytes)", std::to_string(bytes));
  } else if (name == kMaxInflightOption) {
    const int64_t count = std::get<int64_t>(value);
    if (count < 1 || count > INT32_MAX) {
      return BadValue(name, "in [1, 2147483647]", std::to_string(count));
    }
  } else if (name == kVisibleDevicesOption) {
    const std::vector<int64_t>& ids = std::get<std::vector<int64_t>>(value);
    if (ids.empty()) return BadValue(name, "a non-empty list of GPU ids", "an empty list");
    std::set<int64_t> seen;
    for (int64_t id : ids) {
      if (id < 0) return BadValue(name, "GPU ids >= 0", std::to_string(id));
      if (!seen.insert(id).second) {
        return BadValue(name, "distinct GPU ids", std::to_string(id) + " twice");
      }
    }
  }
  return OkStatus();
}

}  // namespace

std::vector<OptionSpec> XlaGpuOptions::Specs() {
  return {
      {kPluginPathOption, AttributeValue(std::string()),
       "absolute path of OpenXLA's CUDA PJRT plugin, xla_cuda_plugin.so (default: "
       "$PJRTKIT_XLA_GPU_PLUGIN, then jax-cuda13-pjrt / jax-cuda12-pjrt beside pjrtkit)"},
      {kAllocatorOption, AttributeValue(std::string("default")),
       "XLA:GPU allocator: default, platform, bfc, cuda_async, vmm, address"},
      {kMemoryFractionOption, AttributeValue(0.75f),
       "share of GPU memory XLA:GPU's allocator may use, (0, 1]"},
      {kPreallocateOption, AttributeValue(true), "XLA:GPU preallocates memory_fraction"},
      {kCollectiveMemorySizeOption, AttributeValue(int64_t{0}),
       "bytes XLA:GPU sets aside for collectives, >= 0"},
      {kVisibleDevicesOption, AttributeValue(std::vector<int64_t>()),
       "GPU ids XLA:GPU uses (default: all)"},
      {kStageHostToDeviceOption, AttributeValue(true),
       "XLA:GPU stages host-to-device copies through pinned memory"},
      {kAbortCollectivesOption, AttributeValue(false),
       "XLA:GPU aborts collectives when one fails"},
      {kMaxInflightOption, AttributeValue(int64_t{32}),
       "computations XLA:GPU keeps in flight per device, 1..2147483647"},
      {kUseTfrtClientOption, AttributeValue(false), "XLA:GPU uses its TFRT-based client"},
  };
}

StatusOr<XlaGpuOptions> XlaGpuOptions::Parse(const AttributeMap& options) {
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, Options::Parse(options, Specs()));
  AttributeMap inner;
  inner["platform_name"] = std::string(kInnerPlatformName);
  for (const OptionSpec& spec : Specs()) {
    const AttributeValue* given = parsed.Given(spec.name);
    if (given == nullptr || spec.name == kPluginPathOption) continue;
    PJRTKIT_RETURN_IF_ERROR(CheckValue(spec.name, *given));
    inner[spec.name] = *given;
  }
  return XlaGpuOptions(parsed.GetString(kPluginPathOption), std::move(inner));
}

}  // namespace xla_gpu
}  // namespace pjrtkit
