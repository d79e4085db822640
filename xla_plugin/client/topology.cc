#include "xla_plugin/client/topology.h"

#include "xla_plugin/client/layout_codec.h"

#include <utility>

#include "xla_plugin/client/topology_codec.h"

namespace pjrtkit {

Topology::Topology(std::string platform_name, std::string platform_version,
                   std::vector<DeviceDescription> devices, AttributeMap attributes)
    : platform_name_(std::move(platform_name)),
      platform_version_(std::move(platform_version)),
      devices_(std::move(devices)),
      attributes_(std::move(attributes)) {}

StatusOr<std::string> Topology::Serialize() const { return EncodeTopology(*this); }

StatusOr<std::unique_ptr<Topology>> Topology::Deserialize(const std::string& bytes) {
  return DecodeTopology(bytes);
}

StatusOr<std::shared_ptr<Executable>> Topology::Compile(const Program& program,
                                                       const std::string& compile_options,
                                                       Client* client) const {
  return Unimplemented("Topology::Compile (ahead-of-time compilation for a topology) is not "
                       "implemented for platform '" + platform_name_ + "'");
}

StatusOr<MemoryLayout> Topology::DefaultLayout(ElementType /*type*/,
                                               const std::vector<int64_t>& dims) const {
  return RowMajorLayout(dims.size());
}

}  // namespace pjrtkit
