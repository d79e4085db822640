// InnerTopology: one topology of the inner plugin made without a client
// (PJRT_TopologyDescription_Create), shared by everything that must keep it alive.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_TOPOLOGY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_device_info.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Owns an inner PJRT_TopologyDescription and destroys it (PJRT_TopologyDescription_Destroy) when
// the last owner lets go; keeps the inner plugin loaded as long. What it says is read once at
// Create. Thread-safe: immutable after Create (the inner plugin's topology queries and
// PJRT_Compile are thread-safe).
class InnerTopology {
 public:
  // PJRT_TopologyDescription_Create of `api` with `name` and `options`, passed as they are; then
  // reads its platform name and version, attributes and device descriptions. Errors are the
  // inner plugin's ("XLA:GPU PJRT_TopologyDescription_Create: ...").
  static StatusOr<std::shared_ptr<InnerTopology>> Create(std::shared_ptr<InnerApi> api,
                                                         const std::string& name,
                                                         const AttributeMap& options);
  InnerTopology(const InnerTopology&) = delete;
  InnerTopology& operator=(const InnerTopology&) = delete;
  ~InnerTopology();

  // The inner topology.
  PJRT_TopologyDescription* get() const { return topology_; }
  // The inner plugin.
  const InnerApi& api() const { return *api_; }
  const std::shared_ptr<InnerApi>& shared_api() const { return api_; }
  // The inner platform name ("cuda") and version (XLA:GPU: the device kind, "NVIDIA H200").
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  // The inner attributes (XLA:GPU: target_config and host_target_machine_options, text protos).
  const AttributeMap& attributes() const { return attributes_; }
  // The inner device descriptions, by id 0..n-1.
  const std::vector<InnerDeviceInfo>& devices() const { return devices_; }

  // PJRT_TopologyDescription_GetMemorySpaceKindIds.
  StatusOr<std::vector<int>> MemorySpaceKindIds() const;
  // PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace.
  StatusOr<std::string> CanonicalShapeForMemorySpace(
      int kind_id, ElementType type, const std::vector<int64_t>& dims,
      const std::optional<MemoryLayout>& layout) const;
  // PJRT_Compile of `program` with `compile_options` (passed as they are) for this topology,
  // without a client: the inner plugin compiles for the devices it describes, none needed. The
  // caller owns the result (InnerApi::DestroyExecutable).
  StatusOr<PJRT_Executable*> Compile(const Program& program,
                                     const std::string& compile_options) const;

 private:
  InnerTopology(std::shared_ptr<InnerApi> api, PJRT_TopologyDescription* topology);
  // Reads the platform, attributes and devices.
  Status Init();

  std::shared_ptr<InnerApi> api_;          // The inner plugin; outlives topology_.
  PJRT_TopologyDescription* topology_;     // Owned.
  std::string platform_name_;              // Inner platform name.
  std::string platform_version_;           // Inner platform version.
  AttributeMap attributes_;                // Inner attributes.
  std::vector<InnerDeviceInfo> devices_;   // Inner device descriptions, by id.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_TOPOLOGY_H_
