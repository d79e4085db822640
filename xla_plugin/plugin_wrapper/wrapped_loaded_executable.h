// WrappedLoadedExecutable: a program compiled by XLA:CPU and loaded on the reference devices.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_LOADED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_LOADED_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/plugin_wrapper/output_info_cache.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

namespace pjrtkit {
namespace plugin_wrapper {

class WrappedClient;

// Owns an inner PJRT_LoadedExecutable. Execute checks the arguments itself (ours, live, on the
// right device) before the inner plugin sees them, maps them to inner buffers, and wraps the
// outputs and completion events; inputs the inner plugin donated read as deleted afterwards.
class WrappedLoadedExecutable : public LoadedExecutable {
 public:
  // Wraps `inner`, made by `client`'s inner client (shared with the executable, see
  // inner_client.h).
  static StatusOr<std::unique_ptr<WrappedLoadedExecutable>> Wrap(WrappedClient* client,
                                                               InnerClient::LoadedPtr inner);
  ~WrappedLoadedExecutable() override;

  // The inner loaded executable.
  NativeHandle native_handle() const override;
  std::shared_ptr<Executable> executable() const override { return executable_; }
  // The same, as the wrapper's type.
  const std::shared_ptr<WrappedExecutable>& wrapped_executable() const { return executable_; }
  // The devices of the inner device assignment; empty for a portable executable (which runs on
  // ExecuteOptions::execute_device).
  const std::vector<Device*>& addressable_devices() const override { return devices_; }
  void Delete() override;
  bool IsDeleted() const override;
  StatusOr<ExecuteResult> Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                  const ExecuteOptions& options) override;
  // The execution itself (Execute calls it); reuses `result`'s storage.
  Status ExecuteInto(const std::vector<std::vector<Buffer*>>& arguments,
                     const ExecuteOptions& options, ExecuteResult* result) override;
  // The inner plugin's PJRT_LoadedExecutable_AddressableDeviceLogicalIds, or, from an inner
  // plugin without it (XLA:CPU 0.81), read from the device assignment; empty for a portable
  // executable.
  StatusOr<std::vector<LogicalDeviceId>> addressable_device_logical_ids() const override;
  // The inner serialized xla.DeviceAssignmentProto (empty for a portable executable).
  StatusOr<std::string> SerializedDeviceAssignment() const override;

 private:
  WrappedLoadedExecutable(WrappedClient* client, InnerClient::LoadedPtr inner);
  // Reads the executable and the devices.
  Status Init();
  // Writes the inner argument lists for `arguments` run on `devices` to `inner`, list d at
  // inner[d * num_args]; checks every buffer.
  Status InnerArguments(const std::vector<std::vector<Buffer*>>& arguments,
                        const std::vector<Device*>& devices, PJRT_Buffer** inner) const;
  // Wraps the inner outputs of one device into `outputs`, with the metadata remembered under
  // `key` (an OutputInfoCache key naming the device) when there is some, reading and
  // remembering it otherwise; `ready`: the execution is known to have finished well. After an
  // error (`status` or a new one, returned) the remaining inner outputs are destroyed.
  Status WrapOutputs(int key, PJRT_Buffer* const* inner_outputs, size_t num_outputs,
                     bool ready, Status status,
                     std::vector<std::unique_ptr<Buffer>>* outputs);
  // Marks the arguments the inner plugin donated as deleted (those not among the
  // `num_non_donatable` indices at `non_donatable`).
  void RefreshDonated(const std::vector<std::vector<Buffer*>>& arguments,
                      const int64_t* non_donatable, size_t num_non_donatable) const;

  WrappedClient* client_;                         // Owning client.
  InnerClient::LoadedPtr owned_inner_;            // Shared with executable_.
  PJRT_LoadedExecutable* inner_;                 // owned_inner_.get(), for the calls.
  std::shared_ptr<WrappedExecutable> executable_;  // Device-independent view.
  std::vector<Device*> devices_;                 // Addressable devices, argument-list order.
  std::atomic<bool> deleted_{false};             // Delete() was called (XLA:CPU's is a no-op).
  OutputInfoCache output_infos_;                 // Output metadata per device.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_LOADED_EXECUTABLE_H_
