// DevicePolicy: everything that differs between the devices built on the shared wrapper
// (devices/xla_cpu, devices/xla_gpu). The wrapper (WrappedClient and the classes it makes) asks
// the policy and otherwise treats every inner PJRT plugin the same way.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_POLICY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_POLICY_H_

// C++ standard library.
#include <cstddef>
#include <string>
#include <vector>

// The pjrtkit client layer.
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

// The shared wrapper.
#include "xla_plugin/plugin_wrapper/inner_device_info.h"
#include "xla_plugin/plugin_wrapper/inner_plugin_name.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Where a device's memory statistics come from.
enum class MemoryStatsSource {
  kCounted,  // pjrtkit counts live buffers itself (XLA:CPU reports none).
  kInner,    // The inner plugin's PJRT_Device_MemoryStats, forwarded (XLA:GPU's allocator).
};

// Which FFI registrations reach the inner plugin, under which inner platform name.
struct FfiPlatform {
  std::string inner_name;            // The inner registry's platform: "Host", "CUDA".
  std::vector<std::string> aliases;  // Accepted besides "pjrtkit" (any case): "cpu", "host".
  std::string device_label;          // For errors: "pjrtkit's reference device".
  // Handlers go through FfiHandlerShims (a newer minor XLA FFI version declared as the inner
  // one's): XLA:CPU, whose XLA is older than jaxlib's. XLA:GPU comes with its jaxlib, and gets the
  // handlers themselves, so that one registered both by JAX's CUDA plugin and by pjrtkit is the
  // same handler (XLA refuses a second, different handler for a target).
  bool version_shims = true;
};

// Which host-to-device copies go through the host buffer pool (pooled_host_copy.h), for a
// device whose factory gives the client a pool (WrappedClient::Create's host_buffer_cache_bytes).
struct HostCopyPooling {
  // Smallest copy worth pooling: below it the inner plugin's own copy into a small, already
  // mapped allocation is as fast.
  size_t min_bytes = size_t{64} << 10;
  // Host alignment at which the inner plugin aliases host data given with a zero-copy semantics
  // instead of copying it (no copy at all, so the pool is not used); 0: it never aliases.
  size_t inner_zero_copy_alignment = 0;
};

// One device's choices. Immutable and shared (std::shared_ptr<const DevicePolicy>) by the
// client, its inner client, topology and executables; thread-safe.
class DevicePolicy {
 public:
  virtual ~DevicePolicy() = default;

  // The inner plugin's names, for loading it and for errors.
  virtual const InnerPluginName& inner_plugin() const = 0;
  // The backend tag: the "backend" device attribute, part of the platform version and of the
  // serialized-executable header ("xla_cpu", "xla_gpu").
  virtual const std::string& backend() const = 0;
  // The inner PJRT_Client_Create options for a client of `device_count` devices (0: as many as
  // the inner plugin finds).
  virtual AttributeMap InnerClientOptions(int device_count) const = 0;
  // pjrtkit's description of device `id`, given what the inner plugin says of it (its
  // process_index included; `inner` is empty, id aside, for a topology made without the inner
  // plugin).
  virtual DeviceDescription Describe(int id, const InnerDeviceInfo& inner) const = 0;
  // The FFI platform the device's custom calls run under.
  virtual const FfiPlatform& ffi_platform() const = 0;
  // Where memory statistics come from.
  virtual MemoryStatsSource memory_stats_source() const = 0;
  // True when the inner plugin moves bytes without looking at layouts (XLA:CPU 0.0.1:
  // ToHostBuffer ignores host_layout, BufferFromHostBuffer copies host bytes as they are, copies
  // label the result row-major; host_layout.h), so the wrapper permutes data itself; false when
  // it honours them (XLA:GPU), and layouts are passed through.
  virtual bool moves_bytes_ignoring_layouts() const = 0;
  // True when an execution of a program with typed FFI custom calls must carry an inner execute
  // context, even an empty one (XLA:CPU 0.0.1 crashes when a handler looks user data up in an
  // execution without one; custom_call_targets.h); false: such executions pass none unless they
  // have user data (XLA:GPU, as run on the H200).
  virtual bool ffi_programs_need_a_context() const = 0;
  // True when a large device-to-host read (ToHostBuffer of a buffer in "device" memory) is faster
  // through the inner plugin's pinned_host memory than straight into pageable memory
  // (pinned_host_read.h: XLA:GPU); false: the inner plugin reads directly (XLA:CPU).
  virtual bool reads_through_pinned_host() const = 0;
  // Which host-to-device copies the host buffer pool takes. Default: copies of 64 KiB or more,
  // the inner plugin aliasing nothing itself.
  virtual HostCopyPooling host_copy_pooling() const { return HostCopyPooling(); }
  // How a client of `device_count` devices is made, for the error of a client that refuses an
  // executable compiled for another count. Default: "create the client with device_count=<n>".
  virtual std::string DeviceCountRemedy(int device_count) const {
    return "create the client with device_count=" + std::to_string(device_count);
  }
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DEVICE_POLICY_H_
