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

StatusOr<uint64_t> Topology::Fingerprint() const {
  StatusOr<std::string> bytes = Serialize();
  if (!bytes.ok()) return bytes.status();
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits.
  for (unsigned char c : *bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

StatusOr<std::vector<int>> Topology::MemorySpaceKindIds() const {
  return Unimplemented("Topology::MemorySpaceKindIds is not implemented for platform '" +
                       platform_name_ + "'");
}

StatusOr<std::string> Topology::CanonicalShapeForMemorySpace(
    int, ElementType, const std::vector<int64_t>&, const std::optional<MemoryLayout>&) const {
  return Unimplemented("Topology::CanonicalShapeForMemorySpace is not implemented for platform '" +
                       platform_name_ + "'");
}

StatusOr<MemoryLayout> Topology::DefaultLayout(ElementType /*type*/,
                                               const std::vector<int64_t>& dims) const {
  return RowMajorLayout(dims.size());
}

}  // namespace pjrtkit
