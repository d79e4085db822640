// XlaGpuTopologyOptions: the create options of an xla_gpu topology made without a client
// (PJRT_TopologyDescription_Create), for ahead-of-time compilation without a GPU. Besides where
// the CUDA plugin is, they are XLA:GPU's own topology options, checked where pjrtkit can and
// passed through.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_TOPOLOGY_OPTIONS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_TOPOLOGY_OPTIONS_H_

#include <cstdint>
#include <string>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace xla_gpu {

// Option names XLA:GPU's PJRT_TopologyDescription_Create reads (xla_cuda_plugin.so 0.11.2).
inline constexpr char kTopologyShapeOption[] = "topology";
inline constexpr char kTargetConfigOption[] = "target_config";
inline constexpr char kHostTargetMachineOption[] = "host_target_machine_options";

// Parsed and checked topology create options:
//   xla_gpu_plugin_path (string): absolute path of xla_cuda_plugin.so (default: found as for a
//       client, see XlaGpuFactory::PluginSearch); not passed on.
//   topology (string "<partitions>x<hosts per partition>x<GPUs per host>", each >= 1, at most
//       65536 GPUs in all): the topology's shape. Without it XLA:GPU counts the machine's GPUs.
//   target_config (string, non-empty): the GPU to compile for, an
//       stream_executor.GpuTargetConfigProto in protobuf text format. Without it XLA:GPU asks the
//       machine's GPU (and fails on a machine without one). Needs `topology` (XLA:GPU cannot
//       count GPUs from a target config).
//   host_target_machine_options (string): the host CPU to compile host code for, an
//       xla.cpu.TargetMachineOptionsProto in text format (default: this machine's CPU).
// Every other option is passed to XLA:GPU as it is (xla_cuda_plugin.so 0.11.2 ignores names it
// does not read). XLA:GPU ignores the topology name.
class XlaGpuTopologyOptions {
 public:
  // The most GPUs a topology may have.
  static constexpr int64_t kMaxDevices = 65536;

  // Parses and checks `options`; INVALID_ARGUMENT naming the option and what it must be.
  static StatusOr<XlaGpuTopologyOptions> Parse(const AttributeMap& options);

  // xla_gpu_plugin_path; empty when not given.
  const std::string& plugin_path() const { return plugin_path_; }
  // What XLA:GPU's PJRT_TopologyDescription_Create gets: every option but xla_gpu_plugin_path.
  const AttributeMap& inner_options() const { return inner_options_; }
  // The GPU count `topology` gives; 0 when it was not given.
  int64_t device_count() const { return device_count_; }

 private:
  XlaGpuTopologyOptions(std::string plugin_path, AttributeMap inner_options, int64_t device_count)
      : plugin_path_(std::move(plugin_path)),
        inner_options_(std::move(inner_options)),
        device_count_(device_count) {}

  std::string plugin_path_;     // Where the CUDA plugin is; may be empty.
  AttributeMap inner_options_;  // Passed through.
  int64_t device_count_;        // From `topology`; 0: not given.
};

}  // namespace xla_gpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_XLA_GPU_TOPOLOGY_OPTIONS_H_
