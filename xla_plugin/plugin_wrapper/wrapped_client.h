// WrappedClient: the Client of a device built on an inner PJRT plugin (XLA:CPU, XLA:GPU), running
// everything through it under pjrtkit's device model; what differs per device is its DevicePolicy.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_CLIENT_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/host_buffer_pool.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_client.h"
#include "xla_plugin/plugin_wrapper/process_placement.h"
#include "xla_plugin/plugin_wrapper/wrapped_device.h"
#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

class WrappedBuffer;

// Shares an inner PJRT_Client created with the policy's options (InnerClient), and owns pjrtkit's
// devices and memories wrapping the inner ones. Buffers and loaded executables point at
// the client: the framework destroys them before the client (as PJRT requires). Executables
// (PJRT_Executable) share the inner client instead, so they may outlive this client.
class WrappedClient : public Client {
 public:
  // Creates the inner client on `inner` with `policy`'s options for `device_count` devices (0: as
  // many as the inner plugin finds) and wraps it. INTERNAL when the inner plugin made another
  // number of devices than asked for, or when its device ids are not exactly 0..n-1. Host-to-device
  // copies go through a HostBufferPool keeping up to `host_buffer_cache_bytes` (0: no pool; see
  // pooled_host_copy.h; only for inner plugins whose device memory is host memory). `placement`
  // says how the client takes part in a multi-process job (process_placement.h; default: alone).
  static StatusOr<std::unique_ptr<WrappedClient>> Create(
      std::shared_ptr<InnerApi> inner, std::shared_ptr<const DevicePolicy> policy,
      int device_count, size_t host_buffer_cache_bytes, ProcessPlacement placement = {});
  ~WrappedClient() override;

  // The inner client.
  NativeHandle native_handle() const override { return {inner_->api(), inner_client()}; }
  const std::string& platform_name() const override { return platform_name_; }
  const std::string& platform_version() const override { return platform_version_; }
  const std::vector<Device*>& devices() const override { return device_ptrs_; }
  const std::vector<Device*>& addressable_devices() const override { return addressable_ptrs_; }
  int process_index() const override { return process_index_; }
  const std::vector<Memory*>& memories() const override { return memory_ptrs_; }
  StatusOr<HostBufferResult> BufferFromHostBuffer(const HostBufferArgs& args) override;
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(const Program& program,
                                                      const std::string& compile_options) override;
  // Loads bytes made by WrappedExecutable::Serialize; INVALID_ARGUMENT when they were compiled for
  // another device or a topology of another device count (serialized_executable.h).
  StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
      const std::string& serialized, const std::optional<std::string>& compile_options) override;
  // Client::Load (Serialize, then DeserializeAndLoad). Without `compile_options` the loaded
  // executable keeps the options `executable` reports (Executable::compile_options): loading
  // does not change what it was compiled with, and an inner plugin without
  // PJRT_Executable_GetCompileOptions (XLA:CPU 0.81) could not say it for the deserialized bytes.
  StatusOr<std::unique_ptr<LoadedExecutable>> Load(
      const Executable& executable, const std::optional<std::string>& compile_options) override;
  // The inner plugin's default layout (its Layouts extension; the same for every memory).
  StatusOr<MemoryLayout> DefaultLayout(ElementType type, const std::vector<int64_t>& dims,
                                       const Memory* memory) const override;
  // A WrappedTopology of this client's devices that compiles through this client's inner client.
  StatusOr<const Topology*> topology() const override { return topology_.get(); }
  StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(ElementType type,
                                                              const std::vector<int64_t>& dims,
                                                              Memory* memory) override;
  // An inner view of `args.data` (device memory of the inner plugin: host memory for XLA:CPU);
  // the inner plugin calls `args.on_delete` when it lets go of the memory.
  StatusOr<std::unique_ptr<Buffer>> CreateViewOfDeviceBuffer(
      const DeviceBufferViewArgs& args) override;
  // A WrappedTransferManager wrapping the inner plugin's.
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> CreateBuffersForAsyncHostToDevice(
      const std::vector<BufferShape>& shapes,
      const std::vector<std::optional<MemoryLayout>>& layouts, Memory* memory) override;
  // Forward to the inner FFI extension (inner_ffi.h): platform "pjrtkit" becomes the policy's
  // inner FFI platform ("Host", "CUDA").
  Status RegisterFfiHandler(const FfiHandlerRegistration& registration) override;
  Status RegisterFfiType(const FfiTypeRegistration& registration) override;
  // The pool's kept and in-use blocks and its limit (all zeros when the pool is off).
  HostBufferPoolStats host_buffer_pool_stats() const override {
    HostBufferPoolStats out;
    if (host_buffer_pool_ == nullptr) return out;
    const HostBufferPool::Stats stats = host_buffer_pool_->stats();
    out.held_bytes = stats.cached_bytes;
    out.held_blocks = stats.cached_blocks;
    out.in_use_bytes = stats.in_use_bytes;
    out.in_use_blocks = stats.in_use_blocks;
    out.limit_bytes = host_buffer_pool_->max_cached_bytes();
    return out;
  }
  // HostBufferPool::Trim (0 when the pool is off).
  size_t TrimHostBufferPool() override {
    return host_buffer_pool_ == nullptr ? 0 : host_buffer_pool_->Trim();
  }

  // An inner execute context without entries, created at the first call and shared by every
  // execution of a program that calls FFI handlers without user data of its own (see
  // custom_call_targets.h); executions hold it until they complete.
  StatusOr<std::shared_ptr<PJRT_ExecuteContext>> EmptyInnerContext() const;
  // The inner plugin.
  const InnerApi& inner() const { return *inner_; }
  // The device's policy.
  const DevicePolicy& policy() const { return inner_client_->policy(); }
  // The inner plugin, shared.
  std::shared_ptr<InnerApi> shared_inner() const { return inner_; }
  // The inner client.
  PJRT_Client* inner_client() const { return inner_client_->get(); }
  // The inner client, shared (executables keep it alive).
  const std::shared_ptr<InnerClient>& shared_inner_client() const { return inner_client_; }
  // The pool host-to-device copies go through; nullptr when disabled.
  const std::shared_ptr<HostBufferPool>& host_buffer_pool() const { return host_buffer_pool_; }
  // Our device wrapping `inner`; nullptr if unknown.
  WrappedDevice* FromInner(PJRT_Device* inner) const;
  // Our memory wrapping `inner`; nullptr if unknown.
  WrappedMemory* FromInner(PJRT_Memory* inner) const;
  // `device` as one of this client's devices; INVALID_ARGUMENT naming `what` otherwise.
  // Addressability is checked by the caller (CheckAddressable, client/call_checks.h).
  StatusOr<WrappedDevice*> OwnDevice(const Device* device, const char* what) const;
  // `memory` as one of this client's memories; INVALID_ARGUMENT naming `what` otherwise.
  StatusOr<WrappedMemory*> OwnMemory(const Memory* memory, const char* what) const;
  // `buffer` as one of this client's buffers; INVALID_ARGUMENT naming `what` otherwise.
  StatusOr<WrappedBuffer*> OwnBuffer(Buffer* buffer, const std::string& what) const;

 private:
  WrappedClient(std::shared_ptr<InnerApi> inner, std::shared_ptr<InnerClient> inner_client);
  // Builds devices, memories and topology from the inner client; `device_count` and `placement`
  // as for Create.
  Status Init(int device_count, const ProcessPlacement& placement);
  // What the inner plugin says of `device`.
  StatusOr<InnerDeviceInfo> ReadDeviceInfo(PJRT_Device* device) const;
  // Builds the memories of every device (called by Init).
  Status InitMemories();
  // BufferFromHostBuffer into a device layout that is not row-major: pjrtkit lays the data out
  // itself (XLA:CPU would copy the host bytes as they are; host_layout.h).
  StatusOr<HostBufferResult> BufferFromHostBufferInLayout(const HostBufferArgs& args,
                                                          WrappedDevice* device,
                                                          WrappedMemory* memory);
  // Wraps an inner loaded executable made by Compile or DeserializeAndLoad, with the options the
  // framework gave (Executable::compile_options; nullopt: the executable's own).
  StatusOr<std::unique_ptr<LoadedExecutable>> WrapExecutable(
      InnerClient::LoadedPtr inner, const std::optional<std::string>& compile_options);

  std::shared_ptr<InnerApi> inner_;                     // The inner plugin.
  std::shared_ptr<InnerClient> inner_client_;           // Shared with executables.
  std::string platform_name_;                           // "pjrtkit".
  std::string platform_version_;                        // See pjrtkit_platform.h.
  std::vector<std::unique_ptr<WrappedDevice>> devices_;  // By id.
  std::vector<Device*> device_ptrs_;                    // Views of devices_.
  std::vector<Device*> addressable_ptrs_;               // This process's devices.
  int process_index_ = 0;                               // This process.
  std::vector<std::unique_ptr<WrappedMemory>> memories_; // By id.
  std::vector<Memory*> memory_ptrs_;                    // Views of memories_.
  std::unique_ptr<Topology> topology_;                  // pjrtkit's topology.
  std::unordered_map<PJRT_Device*, WrappedDevice*> device_of_inner_;  // Inner -> ours.
  std::unordered_map<PJRT_Memory*, WrappedMemory*> memory_of_inner_;  // Inner -> ours.
  std::shared_ptr<HostBufferPool> host_buffer_pool_;  // Blocks for host copies; may be null.
  int64_t host_memory_bytes_ = 0;  // Physical memory, read at Create for counted devices; else 0.
  mutable std::mutex empty_context_mu_;                // Guards empty_inner_context_.
  mutable std::shared_ptr<PJRT_ExecuteContext> empty_inner_context_;  // See EmptyInnerContext().
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_CLIENT_H_
