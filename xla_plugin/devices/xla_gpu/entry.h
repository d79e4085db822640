// The xla_gpu device's registry entry (devices/registry/device_entry.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_ENTRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_ENTRY_H_

#include "xla_plugin/devices/registry/device_entry.h"

namespace pjrtkit {
namespace xla_gpu {

// xla_gpu: XlaGpuFactory; available when an NVIDIA GPU is visible and the CUDA plugin is found,
// and then chosen by auto before xla_cpu.
registry::DeviceEntry Entry();

// True when the NVIDIA driver lists a GPU (/proc/driver/nvidia/gpus) and CUDA_VISIBLE_DEVICES
// does not hide them all ("" or "-1"). No CUDA call: nothing is initialized.
bool NvidiaGpuVisible();

}  // namespace xla_gpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_GPU_ENTRY_H_
